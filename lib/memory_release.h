// SPDX-License-Identifier: Apache-2.0
/* Handing freed memory back to the system at once, whichever allocator the
 * process runs with. */
#ifndef PROFD_MEMORY_RELEASE_H
#define PROFD_MEMORY_RELEASE_H

/* Gives the pages of memory already freed back to the system now, rather
 * than when the allocator would (for jemalloc, about a second later): for a
 * caller that has just freed much and is about to allocate more of another
 * shape, so the two do not add up at the process's peak. jemalloc's arenas
 * are purged when jemalloc is the allocator, else glibc's heap trimmed
 * (sanitizer builds, whose allocators ignore it). Thread-safe. */
void memory_release(void);

#endif
