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

/* The rem bytes at p (1 to 7) as one word, without a copy of variable
 * length: two overlapping 4-byte reads, or the first, middle and last byte
 * (together they hold every byte, so for one rem the word tells the bytes). */
static inline uint64_t hash_tail(const unsigned char *p, size_t rem)
{
    if (rem >= 4) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + rem - 4, 4);
        return (uint64_t)lo | (uint64_t)hi << 32;
    }
    return (uint64_t)p[0] | (uint64_t)p[rem >> 1] << 8 | (uint64_t)p[rem - 1] << 16;
}

/* A hash of the len bytes at p, eight at a time (a multiply and a shift
 * each), its length mixed in (so "a" and "a\0" differ) and its high bits
 * folded into the low ones at the end (a word's bytes carry upwards only,
 * so two strings that differ late would otherwise agree in the low bits a
 * table index takes). */
static inline uint64_t hash_bytes(const void *p, size_t len)
{
    const char *bytes = p;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ len, word;
    size_t i = 0;
    for (; len - i >= 8; i += 8) {
        memcpy(&word, bytes + i, 8);
        h = (h ^ word) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 29;
    }
    if (i < len) {   /* the last 1 to 7 bytes, as a word of their own */
        h = (h ^ hash_tail((const unsigned char *)bytes + i, len - i)) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 29;
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
