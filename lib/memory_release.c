// SPDX-License-Identifier: Apache-2.0
#include "memory_release.h"

#include <stddef.h>

/* jemalloc's control call (jemalloc(3)), declared weak: NULL where jemalloc
 * is not linked in. */
extern int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen)
    __attribute__((weak));

/* "arena.<i>.purge" with i = MALLCTL_ARENAS_ALL (4096): every arena. */
#define PURGE_EVERY_ARENA "arena.4096.purge"

bool memory_release(void)
{
    return mallctl && mallctl(PURGE_EVERY_ARENA, NULL, NULL, NULL, 0) == 0;
}
