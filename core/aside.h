// SPDX-License-Identifier: Apache-2.0
/*
 * A receiver's own thread (host->run_aside): for receivers that read at
 * their own pace (files, scrapes, perf.data), the work that may wait for
 * room in a queue, or take long, runs there one job at a time in the order
 * given, so that it holds up this receiver alone and never the event loop
 * every server shares. Each job's completion then runs on the loop's thread.
 */
#ifndef PROFD_ASIDE_H
#define PROFD_ASIDE_H

struct profd_component;

/* Runs fn(arg) on self's own thread (started with its first job), after
 * the jobs given before it, then done(arg), unless NULL, on the event
 * loop's thread. Once profd_aside_stop has run, runs both here at once.
 * Loop thread. */
void profd_aside_run(struct profd_component *self, void (*fn)(void *arg),
                     void (*done)(void *arg), void *arg);
/* Runs the jobs still queued, waits for them, runs their completions
 * (which may give more jobs: those run at once), and ends the thread.
 * Idempotent. Loop thread. */
void profd_aside_stop(struct profd_component *self);

#endif
