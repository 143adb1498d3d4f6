// SPDX-License-Identifier: Apache-2.0
/* A program for the symbolize tests, built with -O2 -g: static functions
 * the compiler inlines (two levels deep), an out-of-line one, and C++-style
 * work in plain C, so line tables and inline chains are not trivial. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static volatile uint64_t sink;

static inline uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    return x ^ (x >> 29);
}

static inline uint64_t step(uint64_t x, int i)
{
    if (i & 1)
        return mix(x + (uint64_t)i);
    return mix(x) * 3;
}

__attribute__((noinline)) static uint64_t walk(uint64_t seed, int n)
{
    for (int i = 0; i < n; i++)
        seed = step(seed, i);
    return seed;
}

__attribute__((noinline)) uint64_t outer(int n)
{
    uint64_t v = 0;
    for (int k = 0; k < n; k++)
        v += walk((uint64_t)k, n);
    return v;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    sink = outer(n);
    printf("%llu\n", (unsigned long long)sink);
    return 0;
}
