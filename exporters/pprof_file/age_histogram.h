// SPDX-License-Identifier: Apache-2.0
/*
 * Files counted by age on a log scale, 256 buckets to each doubling (an
 * age is told apart from one 0.4% older), for retention to find the age
 * from which every file must go, oldest first, for a count and a size to
 * fit their limits: a walk that cannot hold every file that must go
 * removes those at once the next time.
 */
#ifndef PPROF_FILE_AGE_HISTOGRAM_H
#define PPROF_FILE_AGE_HISTOGRAM_H

#include <stdint.h>

#include "retention.h"

#define AGE_SUB_BITS 8
#define AGE_BUCKETS (64 << AGE_SUB_BITS)

struct age_histogram {
    uint64_t files[AGE_BUCKETS], bytes[AGE_BUCKETS];   /* 256 KiB */
};

/* Counts a file of bytes bytes, age_ns (1 or more) old. */
void age_histogram_add(struct age_histogram *h, uint64_t age_ns, uint64_t bytes);

/*
 * Of files and bytes counted in h, the smallest age from which all must go
 * (the oldest first) before lim's max_files and max_bytes hold (its
 * max_age aside): the age just past the bucket where the
 * limits come to hold, whose files are told apart file by file.
 * UINT64_MAX when no whole bucket must go.
 */
uint64_t age_histogram_cutoff(const struct age_histogram *h, uint64_t files, uint64_t bytes,
                              const struct retention_limits *lim);

#endif
