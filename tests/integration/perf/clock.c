// SPDX-License-Identifier: Apache-2.0
/* A program that spends its time reading the clock for a third of a
 * second: clock_gettime runs in the vDSO, so most samples of a `perf
 * record` of it have their leaf frames there. */
#include <stdint.h>
#include <time.h>

static volatile uint64_t sink;

__attribute__((noinline)) static void read_clock(void)
{
    struct timespec ts;
    for (int i = 0; i < 100; i++) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        sink += (uint64_t)ts.tv_nsec;
    }
}

int main(void)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        read_clock();
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) <
             300000000L);
    return 0;
}
