// SPDX-License-Identifier: Apache-2.0
/* An allocator arena whose memory is marked for transparent huge pages,
 * for threads that allocate much in many small blocks in little time
 * (symbolize's, where libdw reads a large binary's DWARF): where each
 * page fault is dear, as in virtual machines that shadow the guest's page
 * tables, a 2 MiB page takes up to 512 faults away. Only the threads that
 * enter it use it, so the rest of the daemon keeps its small footprint
 * (jemalloc's own `thp:always` would mark every arena's memory). */
#ifndef PROFD_HUGE_ARENA_H
#define PROFD_HUGE_ARENA_H

/* Makes the calling thread allocate from the huge-page arena (made on the
 * first call) until huge_arena_leave. Returns the arena the thread used
 * before, for huge_arena_leave; -1, having changed nothing, where
 * jemalloc is not linked in (sanitizer builds) or the arena cannot be
 * made (under valgrind, whose malloc serves instead, the arena is made
 * and serves nothing). Blocks allocated inside may be freed anywhere. */
int huge_arena_enter(void);

/* Makes the calling thread allocate from `before`, huge_arena_enter's
 * result, again (nothing for -1). */
void huge_arena_leave(int before);

#endif
