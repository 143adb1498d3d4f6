// SPDX-License-Identifier: Apache-2.0
#include "serve_loops.h"

#include <event2/event.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "../lib/cpus.h"
#include "alloc.h"
#include "exporter.h"
#include "log.h"

struct job {
    void (*fn)(void *arg);
    void *arg;
    struct job *next;
};

struct loop {
    struct event_base *base;
    pthread_t thread;
    pthread_mutex_t mu;
    struct job *jobs, **jobs_tail;    /* posted, not yet taken */
    int efd;                          /* written when the first job is posted */
    struct event *wake;               /* the loop's watch on efd */
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

/* Runs every job posted so far, in order (loop i's thread). */
static void on_wake(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    struct loop *lp = arg;
    uint64_t count;
    ssize_t got = read(fd, &count, sizeof(count));   /* EAGAIN: woken already */
    (void)got;
    pthread_mutex_lock(&lp->mu);
    struct job *j = lp->jobs;
    lp->jobs = NULL;
    lp->jobs_tail = &lp->jobs;
    pthread_mutex_unlock(&lp->mu);
    while (j) {
        struct job *next = j->next;
        j->fn(j->arg);
        free(j);
        j = next;
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

/* Makes loop lp (not its thread); -1 when its base or eventfd cannot be. */
static int loop_init(struct loop *lp)
{
    pthread_mutex_init(&lp->mu, NULL);
    lp->jobs_tail = &lp->jobs;
    lp->base = profd_event_base_new();
    lp->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    lp->wake = lp->base && lp->efd >= 0
                   ? event_new(lp->base, lp->efd, EV_READ | EV_PERSIST, on_wake, lp) : NULL;
    return lp->wake && event_add(lp->wake, NULL) == 0 ? 0 : -1;
}

/* Frees what loop_init made (its thread ended or never started). */
static void loop_fini(struct loop *lp)
{
    if (lp->wake)
        event_free(lp->wake);
    if (lp->efd >= 0)
        close(lp->efd);
    if (lp->base)
        event_base_free(lp->base);
    pthread_mutex_destroy(&lp->mu);
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
    for (unsigned i = 0; i < l->n; i++)
        l->loops[i].efd = -1;
    unsigned running = 0;
    for (; running < l->n; running++) {
        struct loop *lp = &l->loops[running];
        if (loop_init(lp) < 0 || pthread_create(&lp->thread, NULL, loop_main, lp) != 0)
            break;
        char name[16];   /* as ps -L and top -H show it */
        snprintf(name, sizeof(name), "profd-serve-%u", (running + 1) % 1000);
        pthread_setname_np(lp->thread, name);
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
    struct loop *lp = &l->loops[i];
    struct job *j = profd_xmalloc(sizeof(*j));
    *j = (struct job){fn, arg, NULL};
    pthread_mutex_lock(&lp->mu);
    bool first = !lp->jobs;
    *lp->jobs_tail = j;
    lp->jobs_tail = &j->next;
    pthread_mutex_unlock(&lp->mu);
    uint64_t one = 1;
    ssize_t put = first ? write(lp->efd, &one, sizeof(one)) : 0;   /* a counter: never full */
    (void)put;
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
