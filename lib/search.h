// SPDX-License-Identifier: Apache-2.0
/* Binary search over arrays sorted by a 64-bit address field. */
#ifndef PROFD_SEARCH_H
#define PROFD_SEARCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The index of the first of n elements (stride bytes apart, sorted by the
 * uint64_t at byte offset `field` of each) whose field is above key; n when
 * none is. The element before it, if any, is the last one at or below key. */
static inline size_t first_above(const void *base, size_t n, size_t stride, size_t field,
                                 uint64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t v;
        memcpy(&v, (const char *)base + mid * stride + field, sizeof(v));
        if (v <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

#endif
