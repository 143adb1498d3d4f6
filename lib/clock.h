// SPDX-License-Identifier: Apache-2.0
/* The monotonic clock in nanoseconds, for modules' timeouts and timings. */
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

#endif
