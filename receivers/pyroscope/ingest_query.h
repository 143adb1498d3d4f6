// SPDX-License-Identifier: Apache-2.0
/* The query parameters of Pyroscope's /ingest, read as Pyroscope reads
 * them. */
#ifndef PROFD_PYROSCOPE_INGEST_QUERY_H
#define PROFD_PYROSCOPE_INGEST_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest /ingest name parameter taken, decoded: many times what
 * agents send (an application and a few labels); a longer one is refused
 * rather than its labels cut. */
#define INGEST_MAX_NAME 16384

/* Parameter name of query ("a=1&b=2"), percent-decoded ('+' is a space)
 * into out (n bytes, cut to fit, always terminated). Returns its whole
 * decoded length (n or more when it was cut), or -1 when it is absent. */
long ingest_query_param(const char *query, const char *name, char *out, size_t n);

/*
 * A time parameter (from, until) in nanoseconds since the epoch, given
 * now: digits are a date when they are eight that make one (YYYYMMDD,
 * UTC midnight), else Unix seconds, milliseconds, microseconds or
 * nanoseconds by their 13, 16 or 19 digits (seconds for any other count);
 * anything else is now moved by the offset after its first '+' or '-'
 * ("now-1h", "now-1d12h": s, min or m, h, d, w, mon or M, y; a unit it
 * does not know counts nothing), with '_', ',' and spaces ignored; absent
 * or empty, now. False when the time is past what 64 bits of nanoseconds
 * hold.
 */
bool ingest_time(const char *query, const char *name, int64_t now, int64_t *out);

/* The CPU time one sample stands for, in nanoseconds: 1e9 / sampleRate
 * (Hz), 10 ms (100 Hz) when sampleRate is absent, not a number or not
 * positive. */
int64_t ingest_cpu_period(const char *query);

/* units: one of samples, objects, goroutines, bytes, lock_nanoseconds,
 * lock_samples into out (n bytes), samples when absent or another word. */
void ingest_units(const char *query, char *out, size_t n);

#endif
