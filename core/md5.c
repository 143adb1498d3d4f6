// SPDX-License-Identifier: Apache-2.0
#include "md5.h"

#include <string.h>

/* Round constants: the integer part of 2^32 * |sin(i + 1)|. */
static const uint32_t sines[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};

/* Left rotations: four per round, each used for every fourth step. */
static const unsigned char shifts[4][4] = {{7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23},
                                           {6, 10, 15, 21}};

static uint32_t rotate(uint32_t x, unsigned n)
{
    return x << n | x >> (32 - n);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Folds one 64-byte block into the state. */
static void block(uint32_t state[4], const uint8_t *b)
{
    uint32_t x[16];
    for (int i = 0; i < 16; i++)
        x[i] = le32(b + 4 * i);
    uint32_t a = state[0], bb = state[1], c = state[2], d = state[3];
    for (unsigned i = 0; i < 64; i++) {
        unsigned round = i / 16, word;
        uint32_t f;
        if (round == 0) {
            f = (bb & c) | (~bb & d);
            word = i;
        } else if (round == 1) {
            f = (d & bb) | (~d & c);
            word = (5 * i + 1) % 16;
        } else if (round == 2) {
            f = bb ^ c ^ d;
            word = (3 * i + 5) % 16;
        } else {
            f = c ^ (bb | ~d);
            word = (7 * i) % 16;
        }
        uint32_t next = bb + rotate(a + f + sines[i] + x[word], shifts[round][i % 4]);
        a = d;
        d = c;
        c = bb;
        bb = next;
    }
    state[0] += a;
    state[1] += bb;
    state[2] += c;
    state[3] += d;
}

void profd_md5(const void *data, size_t len, uint8_t digest[16])
{
    uint32_t state[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
    const uint8_t *p = data;
    size_t whole = len / 64 * 64;
    for (size_t i = 0; i < whole; i += 64)
        block(state, p + i);
    /* The tail, a 1 bit, zeros to 56 bytes mod 64, then the bit length. */
    uint8_t last[128] = {0};
    size_t rest = len - whole;
    memcpy(last, p + whole, rest);
    last[rest] = 0x80;
    size_t total = rest + 1 + 8 <= 64 ? 64 : 128;
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++)
        last[total - 8 + i] = (uint8_t)(bits >> (8 * i));
    for (size_t i = 0; i < total; i += 64)
        block(state, last + i);
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 4; k++)
            digest[4 * i + k] = (uint8_t)(state[i] >> (8 * k));
}
