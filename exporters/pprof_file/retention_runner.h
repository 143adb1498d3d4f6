// SPDX-License-Identifier: Apache-2.0
/*
 * Retention on a thread of its own, so that the exporter's sender never
 * waits for a walk of the directory: a check at start, then one every
 * interval after the last ended, and one sooner when the files written
 * since (counted by the exporter) may break max_files or max_bytes. A
 * check started sooner than that waits until four times as long as the
 * last one took to walk the files it kept has passed since it ended, so
 * walks of a large tree take at most a fifth of a CPU however fast files
 * come (removing what must go takes what it takes).
 */
#ifndef PPROF_FILE_RETENTION_RUNNER_H
#define PPROF_FILE_RETENTION_RUNNER_H

#include <stdint.h>

#include "retention.h"

struct retention_runner;

/* Called on the runner's thread after each check: rc and err as
 * retention_check returned them, what it found and did, how long it took. */
typedef void (*retention_report_fn)(void *arg, int rc, int err, const struct retention_result *r,
                                    int64_t took_ns);

/*
 * Starts the checks of dir against lim (copied; dir is copied too).
 * interval_ns 0: a check after every write, and none on a timer. NULL when
 * the thread cannot be made.
 */
struct retention_runner *retention_runner_start(const char *dir, const struct retention_limits *lim,
                                                int64_t interval_ns, retention_report_fn report,
                                                void *arg);
/* The exporter wrote a profile file of bytes bytes under dir. Any thread. */
void retention_runner_wrote(struct retention_runner *r, uint64_t bytes);
/* Ends a check under way early, stops the thread and frees r (accepts NULL). */
void retention_runner_stop(struct retention_runner *r);

#endif
