// SPDX-License-Identifier: Apache-2.0
/* The monotonic clock in nanoseconds, for timeouts and timings. */
#ifndef PROFD_LIB_CLOCK_H
#define PROFD_LIB_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds on CLOCK_MONOTONIC. */
static inline int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* CLOCK_MONOTONIC ns nanoseconds from now, for a timed wait on a condition
 * variable that keeps that clock. */
static inline struct timespec monotonic_after(int64_t ns)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += ns / 1000000000;
    t.tv_nsec += ns % 1000000000;
    if (t.tv_nsec >= 1000000000) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000;
    }
    return t;
}

#endif
