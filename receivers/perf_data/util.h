// SPDX-License-Identifier: Apache-2.0
/* Small helpers shared by the perf_data sources. */
#ifndef PROFD_PERF_UTIL_H
#define PROFD_PERF_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../lib/grow.h"

/* Writes "byte OFF: <message>" into err; returns false, for `return fail(...)`. */
bool perf_fail(char *err, size_t errlen, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
