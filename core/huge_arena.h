// SPDX-License-Identifier: Apache-2.0
/* An allocator arena whose memory is backed by transparent huge pages, for
 * large transient work: symbolize's threads (libdw's many small blocks
 * while it reads a large binary's DWARF), the threads that encode and gzip
 * a large profile, and buffers of several MiB filled at once. Where each
 * page fault is dear, as in virtual machines that shadow the guest's page
 * tables, a 2 MiB page takes up to 512 faults away. The arena maps its
 * memory from huge pages' boundaries, so a block in it seldom sits on a
 * page left small. Only the threads that enter it and the buffers
 * allocated as large use it, so the rest of the daemon keeps its small
 * footprint (jemalloc's own `thp:always` would mark every arena's memory).
 * Memory freed in it goes back to the system as the other arenas' does. */
#ifndef PROFD_HUGE_ARENA_H
#define PROFD_HUGE_ARENA_H

#include <stddef.h>

/* Makes the calling thread allocate from the huge-page arena (made on the
 * first call) until profd_huge_arena_leave. Returns the arena the thread
 * used before, for profd_huge_arena_leave; -1, having changed nothing,
 * where jemalloc is not the allocator (sanitizer builds) or the arena
 * cannot be made (under valgrind, whose malloc serves instead, the arena
 * is made and serves nothing). Blocks allocated inside may be freed
 * anywhere, with free(). */
int profd_huge_arena_enter(void);

/* Makes the calling thread allocate from `before`, profd_huge_arena_enter's
 * result, again (nothing for -1). */
void profd_huge_arena_leave(int before);

/* A buffer of n bytes to be filled at once (an inflated profile, a gzip
 * stream), freed with free(): from 4 MiB, from the huge-page arena, or
 * where there is none marked for huge pages as profd_advise_huge does; a
 * smaller one as malloc gives it. Aborts when out of memory. */
void *profd_xmalloc_large(size_t n);

/* p (NULL, or from profd_xmalloc_large or profd_xrealloc_large) grown or
 * shrunk to n bytes as realloc does, the result placed as
 * profd_xmalloc_large places n bytes. */
void *profd_xrealloc_large(void *p, size_t n);

#endif
