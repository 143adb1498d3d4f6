// SPDX-License-Identifier: Apache-2.0
/* A JFR recording pushed to /ingest (format=jfr) into pprof profiles, one
 * per kind of sample in it, named and typed as Pyroscope names them. */
#ifndef PROFD_PYROSCOPE_JFR_H
#define PROFD_PYROSCOPE_JFR_H

#include <stddef.h>
#include <stdint.h>

#include "profd/plugin.h"

/*
 * Adds to b a record for each kind of sample the recording jfr[0..len)
 * holds, its __name__ its family: process_cpu (jdk.ExecutionSample of a
 * thread not asleep, each cpu_period_nanos of cpu), wall (in async-profiler's
 * wall mode every jdk.ExecutionSample, and profiler.WallClockSample, at the
 * same period), memory (allocations in new TLABs and outside them, the
 * JDK's allocation samples, counts and bytes; async-profiler's live objects
 * and native mallocs), mutex
 * (jdk.JavaMonitorEnter) and block (jdk.ThreadPark), both contentions and
 * delay. Frames are named class.method as the recording names them, with
 * their lines. labels, when not NULL, is pyroscope-java's LabelsSnapshot:
 * a sample's contextId gives it that context's labels (pprof sample
 * labels). Time and duration are the recording's. Returns the number of
 * records added (0 when it holds no such sample), or -1 with why set.
 */
int jfr_records(const struct profd_host *host, const uint8_t *jfr, size_t len,
                const uint8_t *labels, size_t labels_len, int64_t cpu_period_nanos,
                struct profd_batch *b, char *why, size_t whylen);

/*
 * jfr_records of an /ingest body with format=jfr: the recording itself, or
 * pyroscope-java's multipart form (content_type) with the field `jfr` and
 * optionally `labels`; a recording gzip'd is inflated first, to at most
 * max_decoded bytes. Returns what jfr_records returns.
 */
int jfr_ingest(const struct profd_host *host, const char *content_type, const uint8_t *body,
               size_t len, size_t max_decoded, int64_t cpu_period_nanos, struct profd_batch *b,
               char *why, size_t whylen);

#endif
