// SPDX-License-Identifier: Apache-2.0
/* Sums of sample values held at the int64 limits instead of overflowing:
 * hostile input may name periods and counts that add up past them. */
#ifndef PROFD_SATURATING_H
#define PROFD_SATURATING_H

#include <stdint.h>

/* a + b, held at the int64 limits instead of overflowing. */
static inline int64_t add_saturating(int64_t a, int64_t b)
{
    int64_t sum;
    if (!__builtin_add_overflow(a, b, &sum))
        return sum;
    return b > 0 ? INT64_MAX : INT64_MIN;
}

/* a - b, held at the int64 limits instead of overflowing. */
static inline int64_t sub_saturating(int64_t a, int64_t b)
{
    int64_t difference;
    if (!__builtin_sub_overflow(a, b, &difference))
        return difference;
    return b < 0 ? INT64_MAX : INT64_MIN;
}

/* v as an int64, INT64_MAX when it is larger. */
static inline int64_t int64_of_u64(uint64_t v)
{
    return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

#endif
