// SPDX-License-Identifier: Apache-2.0
/* A program stripped of its symbol table but for the dynamic one: an
 * exported function keeps its name there, a static one has none (and
 * must not take its neighbour's, nor an imported function's). */
#include <stdlib.h>

__attribute__((noinline)) int exported_function(int x)
{
    return x * 7 + atoi("3");
}

static __attribute__((noinline)) int static_function(int x)
{
    int sum = 0;
    for (int i = 0; i < x * 100; i++)
        sum += i ^ x;
    return sum;
}

int main(int argc, char **argv)
{
    (void)argv;
    return exported_function(argc) + static_function(argc);
}
