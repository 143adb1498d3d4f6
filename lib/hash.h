// SPDX-License-Identifier: Apache-2.0
/* Mixing 64-bit words into a hash, for the modules' open-addressing tables. */
#ifndef PROFD_LIB_HASH_H
#define PROFD_LIB_HASH_H

#include <stdint.h>

/* Mixes v into h. */
static inline uint64_t hash_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 31);
}

#endif
