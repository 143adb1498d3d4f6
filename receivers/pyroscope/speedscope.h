// SPDX-License-Identifier: Apache-2.0
/* A speedscope file pushed to /ingest (format=speedscope) into pprof
 * profiles, one per profile in it. */
#ifndef PROFD_PYROSCOPE_SPEEDSCOPE_H
#define PROFD_PYROSCOPE_SPEEDSCOPE_H

#include <stddef.h>
#include <stdint.h>

#include "profd/plugin.h"

/*
 * Adds to b a record for each profile of the speedscope file json[0..len)
 * (its $schema speedscope's), with the label profile_name its name.
 * Profiles of the same name, type, unit and startValue are one record, as
 * Pyroscope merges them. Frames keep their file, line and column.
 * - A sampled profile's stacks are root first, each with its weight; an
 *   evented profile's time between two events goes to the frames open
 *   then (frames open at the end get nothing more).
 * - Weights in nanoseconds, microseconds, milliseconds or seconds are
 *   cpu/nanoseconds; "none" counts samples/count, each cpu_period_nanos of
 *   cpu/nanoseconds; bytes are inuse_space/bytes.
 * Identical stacks are one sample. Returns the number of records added, or
 * -1 with why naming the profile, the sample or event, and what is wrong.
 */
int speedscope_records(const struct profd_host *host, const char *json, size_t len,
                       int64_t cpu_period_nanos, struct profd_batch *b, char *why, size_t whylen);

#endif
