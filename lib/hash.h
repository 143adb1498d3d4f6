// SPDX-License-Identifier: Apache-2.0
/* Mixing 64-bit words into a hash, for the modules' open-addressing tables. */
#ifndef PROFD_LIB_HASH_H
#define PROFD_LIB_HASH_H

#include <stdint.h>
#include <string.h>

/* Mixes v into h. */
static inline uint64_t hash_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 31);
}

/* A hash of the len bytes at p, eight at a time, its high bits folded into
 * the low ones (hash_mix carries a word's bytes upwards only, so two
 * strings that differ late would otherwise agree in the low bits a table
 * index takes). */
static inline uint64_t hash_bytes(const void *p, size_t len)
{
    const char *bytes = p;
    uint64_t h = 0;
    for (size_t i = 0; i < len; i += 8) {
        uint64_t word = 0;
        memcpy(&word, bytes + i, len - i < 8 ? len - i : 8);
        h = hash_mix(h, word);
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

/* hash_bytes of the string s, its terminating NUL left out. */
static inline uint64_t hash_string(const char *s)
{
    return hash_bytes(s, strlen(s));
}

#endif
