// SPDX-License-Identifier: Apache-2.0
/* Load for the perf.data benchmark: THREADS threads for SECONDS seconds,
 * each walking a recursive call tree whose shape varies with a seed, so a
 * recording holds many distinct stacks at several depths.
 * usage: perf_load THREADS SECONDS */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static double seconds;
static volatile uint64_t sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void leaf(uint64_t x)
{
    for (int i = 0; i < 200; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    sink += x;
}

__attribute__((noinline)) static void walk_a(uint64_t seed, int depth);

__attribute__((noinline)) static void walk_b(uint64_t seed, int depth)
{
    if (depth == 0)
        return leaf(seed);
    walk_a(seed / 3, depth - 1);
    leaf(seed);
}

__attribute__((noinline)) static void walk_a(uint64_t seed, int depth)
{
    if (depth == 0)
        return leaf(seed);
    if (seed & 1)
        walk_b(seed >> 1, depth - 1);
    else
        walk_a(seed >> 1, depth - 1);
    leaf(seed);
}

static void *run(void *arg)
{
    uint64_t seed = (uintptr_t)arg * 7919 + 1;
    double end = now() + seconds;
    while (now() < end)
        for (int i = 0; i < 64; i++) {
            seed = seed * 2862933555777941757ull + 3037000493ull;
            walk_a(seed >> 20, 4 + (int)(seed % 24));
        }
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 4;
    seconds = argc > 2 ? atof(argv[2]) : 10;
    pthread_t t[64];
    if (threads < 1 || threads > 64)
        return 2;
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, run, (void *)(uintptr_t)i);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    return 0;
}
