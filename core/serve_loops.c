// SPDX-License-Identifier: Apache-2.0
#include "serve_loops.h"

#include <event2/event.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>

#include "../lib/cpus.h"
#include "../lib/thread_name.h"
#include "alloc.h"
#include "exporter.h"
#include "log.h"
#include "loop_inbox.h"

struct job {
    void (*fn)(void *arg);
    void *arg;
    struct profd_inbox_link link;
};

struct loop {
    struct event_base *base;
    pthread_t thread;
    struct profd_loop_inbox *jobs;    /* posted to run on the loop */
};

struct profd_serve_loops {
    unsigned n;
    bool started, failed;
    struct loop *loops;
};

unsigned profd_serve_loops_wanted(void)
{
    unsigned cpus = cpus_usable();
    return cpus - 1 < PROFD_SERVE_LOOPS_MAX ? cpus - 1 : PROFD_SERVE_LOOPS_MAX;
}

struct profd_serve_loops *profd_serve_loops_new(unsigned n)
{
    if (!n)
        return NULL;
    struct profd_serve_loops *l = profd_xcalloc(1, sizeof(*l));
    l->n = n;
    return l;
}

unsigned profd_serve_loops_count(const struct profd_serve_loops *l)
{
    return l ? l->n : 0;
}

/* Runs the jobs posted, in order (the loop's thread). */
static void run_jobs(void *arg, struct profd_inbox_link *first)
{
    (void)arg;
    while (first) {
        struct profd_inbox_link *next = first->next;
        struct job *j = (struct job *)((char *)first - offsetof(struct job, link));
        j->fn(j->arg);
        free(j);
        first = next;
    }
}

static void *loop_main(void *arg)
{
    struct loop *lp = arg;
    /* Like the main loop, a serving loop never waits for room in a queue. */
    profd_queue_wait_until(PROFD_QUEUE_NO_WAIT);
    event_base_loop(lp->base, EVLOOP_NO_EXIT_ON_EMPTY);
    return NULL;
}

/* Makes loop lp (not its thread); -1 when its base or inbox cannot be. */
static int loop_init(struct loop *lp)
{
    lp->base = profd_event_base_new();
    lp->jobs = lp->base ? profd_loop_inbox_new(lp->base, run_jobs, NULL) : NULL;
    return lp->jobs ? 0 : -1;
}

/* Frees what loop_init made (its thread ended or never started). */
static void loop_fini(struct loop *lp)
{
    profd_loop_inbox_free(lp->jobs);
    if (lp->base)
        event_base_free(lp->base);
}

static void break_loop(void *arg)
{
    event_base_loopbreak(arg);
}

/* Ends the threads of the first n loops and frees all of l's loops. */
static void loops_end(struct profd_serve_loops *l, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        profd_serve_loops_post(l, i, break_loop, l->loops[i].base);
        pthread_join(l->loops[i].thread, NULL);
    }
    for (unsigned i = 0; i < l->n; i++)
        loop_fini(&l->loops[i]);
    free(l->loops);
    l->loops = NULL;
}

/* Makes the loops and starts their threads; on failure, none runs. */
static void loops_start(struct profd_serve_loops *l)
{
    l->started = true;
    l->loops = profd_xcalloc(l->n, sizeof(*l->loops));
    unsigned running = 0;
    for (; running < l->n; running++) {
        struct loop *lp = &l->loops[running];
        if (loop_init(lp) < 0 || pthread_create(&lp->thread, NULL, loop_main, lp) != 0)
            break;
        thread_name(lp->thread, "profd-serve-%u", (running + 1) % 1000);
    }
    if (running == l->n)
        return;
    profd_log(PROFD_LOG_WARN, "profd", "cannot start serving loop %u of %u: serving on the main "
                                       "loop alone", running + 1, l->n);
    loops_end(l, running);
    l->failed = true;
}

struct event_base *profd_serve_loops_base(struct profd_serve_loops *l, unsigned i)
{
    if (!l->started)
        loops_start(l);
    return l->failed ? NULL : l->loops[i].base;
}

void profd_serve_loops_post(struct profd_serve_loops *l, unsigned i, void (*fn)(void *arg),
                            void *arg)
{
    struct job *j = profd_xmalloc(sizeof(*j));
    *j = (struct job){fn, arg, {NULL}};
    profd_loop_inbox_post(l->loops[i].jobs, &j->link);
}

struct call {
    void (*fn)(void *arg);
    void *arg;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    bool done;
};

static void run_call(void *arg)
{
    struct call *c = arg;
    c->fn(c->arg);
    pthread_mutex_lock(&c->mu);
    c->done = true;
    pthread_cond_signal(&c->cond);
    pthread_mutex_unlock(&c->mu);
}

void profd_serve_loops_call(struct profd_serve_loops *l, unsigned i, void (*fn)(void *arg),
                            void *arg)
{
    struct call c = {.fn = fn, .arg = arg};
    pthread_mutex_init(&c.mu, NULL);
    pthread_cond_init(&c.cond, NULL);
    profd_serve_loops_post(l, i, run_call, &c);
    pthread_mutex_lock(&c.mu);
    while (!c.done)
        pthread_cond_wait(&c.cond, &c.mu);
    pthread_mutex_unlock(&c.mu);
    pthread_cond_destroy(&c.cond);
    pthread_mutex_destroy(&c.mu);
}

void profd_serve_loops_free(struct profd_serve_loops *l)
{
    if (!l)
        return;
    if (l->started && !l->failed)
        loops_end(l, l->n);
    free(l);
}

struct event_base *profd_event_base_new(void)
{
    struct event_config *cfg = event_config_new();
    if (cfg)
        event_config_set_flag(cfg, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
    struct event_base *base = cfg ? event_base_new_with_config(cfg) : NULL;
    if (cfg)
        event_config_free(cfg);
    return base ? base : event_base_new();
}
