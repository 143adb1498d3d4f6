// SPDX-License-Identifier: Apache-2.0
#include "retention_runner.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../lib/clock.h"

/* The oldest files a check holds the paths of (retention_check): about
 * 6 MiB at most. */
#define CANDIDATES 65536

/* A check started early waits this many times as long as the last one
 * took to walk what it kept (see quiet_after). */
#define QUIET_FACTOR 4

struct retention_runner {
    char *dir;
    struct retention_limits lim;
    int64_t interval;
    retention_report_fn report;
    void *arg;
    pthread_t thread;
    atomic_bool stop;
    pthread_mutex_t mu;      /* guards what follows */
    pthread_cond_t wake;
    bool due;                /* a write may have broken a limit */
    bool known;              /* a check succeeded: files and bytes start from it */
    /* Kept by the last check, plus written since it started: files the
     * walk saw being written count twice, so a limit is broken sooner,
     * never later, than it seems. */
    uint64_t files, bytes;
    uint64_t written;        /* files written since the last check started */
};

/* Whether what was written since the last check started calls for one
 * now (r->mu held): after every file with interval 0, else when a limit
 * may be broken. */
static bool writes_call_for_a_check(const struct retention_runner *r)
{
    return r->written &&
           (r->interval == 0 || (r->known && retention_over(&r->lim, r->files, r->bytes)));
}

/* How long after a check that took took_ns an early one may start:
 * QUIET_FACTOR times its walk of the files it kept. Not of what it
 * removed, nor of its walk over those: that is work the writes made, and
 * waiting on it would let the next check's backlog, and its wait, grow
 * without end. */
static int64_t quiet_after(const struct retention_result *res, int64_t took_ns)
{
    double walking = (double)(took_ns - res->removing_ns);
    uint64_t seen = res->files + res->removed;
    double kept = seen ? (double)res->files / (double)seen : 1;
    return (int64_t)(QUIET_FACTOR * walking * kept);
}

/* Waits (r->mu held) until monotonic time until, a wake-up or stop. */
static void wait_until(struct retention_runner *r, int64_t until)
{
    int64_t left = until - monotonic_ns();
    if (left <= 0)
        return;
    struct timespec at = monotonic_after(left);
    pthread_cond_timedwait(&r->wake, &r->mu, &at);
}

static void *run(void *arg)
{
    struct retention_runner *r = arg;
    int64_t next = monotonic_ns(), earliest = next;   /* the timer's, and an early check's */
    pthread_mutex_lock(&r->mu);
    while (!atomic_load(&r->stop)) {
        int64_t now = monotonic_ns();
        if (now < next && !(r->due && now >= earliest)) {
            wait_until(r, r->due && earliest < next ? earliest : next);
            continue;
        }
        r->due = false;
        r->files = r->bytes = r->written = 0;   /* from here on; the walk may count them too */
        pthread_mutex_unlock(&r->mu);
        struct retention_result res;
        int rc = retention_check(r->dir, &r->lim, realtime_ns(), CANDIDATES, &r->stop, &res);
        int err = rc < 0 ? errno : 0;
        int64_t end = monotonic_ns();
        pthread_mutex_lock(&r->mu);
        r->known = rc == 0;
        r->files += res.files;
        r->bytes += res.bytes;
        /* Writes while it walked that break a limit (seen as they came,
         * or not, as known was) are due now. */
        r->due = writes_call_for_a_check(r);
        next = r->interval > 0 ? end + r->interval : INT64_MAX;
        earliest = end + quiet_after(&res, end - now);
        pthread_mutex_unlock(&r->mu);
        if (!atomic_load(&r->stop))
            r->report(r->arg, rc, err, &res, end - now);
        pthread_mutex_lock(&r->mu);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

struct retention_runner *retention_runner_start(const char *dir, const struct retention_limits *lim,
                                                int64_t interval_ns, retention_report_fn report,
                                                void *arg)
{
    struct retention_runner *r = calloc(1, sizeof(*r));
    if (!r || !(r->dir = strdup(dir))) {
        free(r);
        return NULL;
    }
    r->lim = *lim;
    r->interval = interval_ns;
    r->report = report;
    r->arg = arg;
    atomic_init(&r->stop, false);
    pthread_mutex_init(&r->mu, NULL);
    monotonic_cond_init(&r->wake);
    if (pthread_create(&r->thread, NULL, run, r) != 0) {
        pthread_cond_destroy(&r->wake);
        pthread_mutex_destroy(&r->mu);
        free(r->dir);
        free(r);
        return NULL;
    }
    return r;
}

void retention_runner_wrote(struct retention_runner *r, uint64_t bytes)
{
    pthread_mutex_lock(&r->mu);
    r->files++;
    r->bytes += bytes;
    r->written++;
    if (!r->due && writes_call_for_a_check(r)) {
        r->due = true;
        pthread_cond_signal(&r->wake);
    }
    pthread_mutex_unlock(&r->mu);
}

void retention_runner_stop(struct retention_runner *r)
{
    if (!r)
        return;
    atomic_store(&r->stop, true);
    pthread_mutex_lock(&r->mu);
    pthread_cond_signal(&r->wake);
    pthread_mutex_unlock(&r->mu);
    pthread_join(r->thread, NULL);
    pthread_cond_destroy(&r->wake);
    pthread_mutex_destroy(&r->mu);
    free(r->dir);
    free(r);
}
