// SPDX-License-Identifier: Apache-2.0
/*
 * Threads for the work an event loop should not do itself: a job runs on
 * one of the pool's threads, then its completion runs on the loop's thread
 * (woken through an eventfd it watches), so that only the loop's thread
 * ever touches what the loop owns (connections, sessions). The loop is the
 * pool's, or another that the job was given for (profd_work_submit_to).
 */
#ifndef PROFD_WORK_POOL_H
#define PROFD_WORK_POOL_H

#include <stdbool.h>
#include <stddef.h>

#include "loop_inbox.h"

struct event_base;

struct profd_work_returns;

/* A job, embedded in the caller's own struct. */
struct profd_work {
    void (*run)(struct profd_work *w);    /* on a pool thread */
    void (*done)(struct profd_work *w);   /* then on the loop's thread; may free w */
    struct profd_work *next;              /* the pool's queue's */
    struct profd_work_returns *returns;   /* the pool's: where done runs */
    struct profd_inbox_link finished;     /* the pool's: in the returns' inbox once run */
};

struct profd_work_pool;

/* A pool of up to threads threads (started as jobs come) whose completions
 * run on base's loop; NULL when the eventfd or its event cannot be made. */
struct profd_work_pool *profd_work_pool_new(struct event_base *base, unsigned threads);
/* True on a pool thread (of any pool), false elsewhere. */
bool profd_work_pool_thread(void);
/* Queues w: w->run on a pool thread, then w->done on the loop's thread. */
void profd_work_submit(struct profd_work_pool *p, struct profd_work *w);
/* Runs every job still queued, waits for them, runs their done callbacks
 * here (on the loop's thread), stops the threads and frees the pool: jobs
 * given with returns of their own must have been waited for
 * (profd_work_returns_free), and no more be given. Accepts NULL. */
void profd_work_pool_free(struct profd_work_pool *p);

/* Another loop the completions of a pool's jobs can run on, so that one
 * pool serves several loops: returns on base's loop, made on its thread;
 * NULL when the eventfd or its event cannot be made. */
struct profd_work_returns *profd_work_returns_new(struct event_base *base);
/* Queues w as profd_work_submit does, its done on r's loop. */
void profd_work_submit_to(struct profd_work_pool *p, struct profd_work *w,
                          struct profd_work_returns *r);
/* Waits for the jobs given with r to finish, runs their done callbacks
 * here (on r's loop's thread) and frees r. Accepts NULL. */
void profd_work_returns_free(struct profd_work_returns *r);

#endif
