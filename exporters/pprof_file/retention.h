// SPDX-License-Identifier: Apache-2.0
/* Retention of written profiles: by age, by count, and by total bytes. */
#ifndef PPROF_FILE_RETENTION_H
#define PPROF_FILE_RETENTION_H

#include <stdint.h>

struct retention_limits {
    int64_t max_age;        /* ns; 0 = no limit */
    int64_t max_files;      /* 0 = no limit */
    uint64_t max_bytes;     /* 0 = no limit */
};

/*
 * Deletes the oldest profile files (*.pb, *.pb.gz) under dir until every
 * limit holds. Returns how many files were removed, or -1 when dir cannot be
 * walked. Not thread-safe for one dir.
 */
long retention_enforce(const char *dir, const struct retention_limits *lim, int64_t now_ns);

#endif
