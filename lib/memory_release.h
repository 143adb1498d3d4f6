// SPDX-License-Identifier: Apache-2.0
/* Handing freed memory back to the system at once. */
#ifndef PROFD_MEMORY_RELEASE_H
#define PROFD_MEMORY_RELEASE_H

#include <stdbool.h>

/* Gives the pages of memory already freed back to the system now, rather
 * than about a second later as jemalloc would: for a caller that has just
 * freed much and is about to allocate more of another shape, so the two do
 * not add up at the process's peak. Purges every jemalloc arena; returns
 * false, having done nothing, where jemalloc is not the allocator
 * (sanitizer builds, whose allocators keep freed memory their own way).
 * Thread-safe. */
bool memory_release(void);

#endif
