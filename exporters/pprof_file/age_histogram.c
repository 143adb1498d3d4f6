// SPDX-License-Identifier: Apache-2.0
#include "age_histogram.h"

#define SUB_MASK ((1u << AGE_SUB_BITS) - 1)

/* The bucket of an age (1 or more): its doubling, then the bits after its
 * leading one. Older ages have higher buckets. */
static unsigned bucket_of(uint64_t age)
{
    unsigned e = 63 - (unsigned)__builtin_clzll(age);
    uint64_t sub = e >= AGE_SUB_BITS ? age >> (e - AGE_SUB_BITS) : age << (AGE_SUB_BITS - e);
    return e << AGE_SUB_BITS | (unsigned)(sub & SUB_MASK);
}

/* The smallest age in bucket b. */
static uint64_t bucket_floor(unsigned b)
{
    unsigned e = b >> AGE_SUB_BITS;
    uint64_t top = (1u << AGE_SUB_BITS) | (b & SUB_MASK);
    return e >= AGE_SUB_BITS ? top << (e - AGE_SUB_BITS) : top >> (AGE_SUB_BITS - e);
}

/* The largest age in bucket b: an age below 2^AGE_SUB_BITS has a bucket
 * of its own. */
static uint64_t bucket_last(unsigned b)
{
    unsigned e = b >> AGE_SUB_BITS;
    return bucket_floor(b) + (e > AGE_SUB_BITS ? (1ull << (e - AGE_SUB_BITS)) - 1 : 0);
}

void age_histogram_add(struct age_histogram *h, uint64_t age_ns, uint64_t bytes)
{
    unsigned b = bucket_of(age_ns ? age_ns : 1);
    h->files[b]++;
    h->bytes[b] += bytes;
}

uint64_t age_histogram_cutoff(const struct age_histogram *h, uint64_t files, uint64_t bytes,
                              const struct retention_limits *lim)
{
    for (unsigned b = AGE_BUCKETS; b-- > 0;) {   /* the oldest first */
        files -= h->files[b];
        bytes -= h->bytes[b];
        if (!retention_over(lim, files, bytes))
            return bucket_last(b) < UINT64_MAX ? bucket_last(b) + 1 : UINT64_MAX;
    }
    return UINT64_MAX;
}
