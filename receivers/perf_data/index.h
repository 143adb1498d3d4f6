// SPDX-License-Identifier: Apache-2.0
/*
 * An open-addressing index from a 64-bit hash to positions in a caller's
 * array: the caller confirms a candidate with its own equality test, so
 * colliding hashes are handled exactly.
 */
#ifndef PROFD_PERF_INDEX_H
#define PROFD_PERF_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../lib/hash.h"

/* A slot holds the hash folded to 32 bits, which picks the home slot and
 * filters candidates (the caller's test decides), so that a slot is 8
 * bytes: the sample index of a large recording is half the memory it was
 * with the whole hash kept. */
struct index_slot {
    uint32_t hash;
    uint32_t position;     /* position + 1; 0 = empty slot */
};

struct index {
    struct index_slot *slots;   /* hash and position side by side: one cache miss */
    size_t mask, count;
};

static inline uint32_t index_fold(uint64_t hash)
{
    return (uint32_t)(hash ^ (hash >> 32));
}

/* Calls same(arg, position) for each entry with this hash until it returns
 * true; returns that position, or -1. Inline, so that same is too. */
static inline int64_t index_find(const struct index *ix, uint64_t hash,
                                 bool (*same)(void *arg, uint32_t pos), void *arg)
{
    if (!ix->slots)
        return -1;
    uint32_t folded = index_fold(hash);
    for (size_t i = folded & ix->mask; ix->slots[i].position; i = (i + 1) & ix->mask)
        if (ix->slots[i].hash == folded && same(arg, ix->slots[i].position - 1))
            return ix->slots[i].position - 1;
    return -1;
}

/* Adds (hash -> position). */
void index_add(struct index *ix, uint64_t hash, uint32_t position);
void index_clear(struct index *ix);

#endif
