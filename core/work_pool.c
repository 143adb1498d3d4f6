// SPDX-License-Identifier: Apache-2.0
#include "work_pool.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include "../lib/thread_name.h"
#include "alloc.h"
#include "log.h"
#include "loop_inbox.h"

/* Completions due on one loop: the jobs that ran, posted to its inbox. */
struct profd_work_returns {
    struct profd_loop_inbox *inbox;
    _Atomic size_t pending;               /* given, done not yet called */
};

struct profd_work_pool {
    pthread_mutex_t mu;
    pthread_cond_t work;                  /* a job queued, or stopping */
    struct profd_work *queue, **queue_tail;
    size_t idle;                          /* threads waiting for a job */
    bool stopping;
    pthread_t *threads;
    unsigned nthreads, max_threads;
    struct profd_work_returns *returns;   /* the pool's own loop */
};

/* Runs the completions of the jobs that finished (r's loop thread). */
static void run_completions(void *arg, struct profd_inbox_link *first)
{
    struct profd_work_returns *r = arg;
    while (first) {
        struct profd_inbox_link *next = first->next;
        struct profd_work *w = (struct profd_work *)((char *)first -
                                                     offsetof(struct profd_work, finished));
        w->done(w);
        r->pending--;
        first = next;
    }
}

/* w has run: its completion is due on its returns' loop. */
static void finished(struct profd_work *w)
{
    profd_loop_inbox_post(w->returns->inbox, &w->finished);
}

static _Thread_local bool on_pool_thread;

bool profd_work_pool_thread(void)
{
    return on_pool_thread;
}

static void *worker_main(void *arg)
{
    struct profd_work_pool *p = arg;
    on_pool_thread = true;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->queue && !p->stopping) {
            p->idle++;
            pthread_cond_wait(&p->work, &p->mu);
            p->idle--;
        }
        struct profd_work *w = p->queue;
        if (!w)
            break;   /* stopping, and nothing left to run */
        p->queue = w->next;
        if (!p->queue)
            p->queue_tail = &p->queue;
        pthread_mutex_unlock(&p->mu);
        w->run(w);
        finished(w);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

struct profd_work_returns *profd_work_returns_new(struct event_base *base)
{
    struct profd_work_returns *r = profd_xcalloc(1, sizeof(*r));
    r->inbox = profd_loop_inbox_new(base, run_completions, r);
    if (!r->inbox) {
        free(r);
        return NULL;
    }
    return r;
}

void profd_work_returns_free(struct profd_work_returns *r)
{
    if (!r)
        return;
    for (;;) {
        profd_loop_inbox_take(r->inbox);
        if (r->pending == 0)
            break;
        profd_loop_inbox_wait(r->inbox);
    }
    profd_loop_inbox_free(r->inbox);
    free(r);
}

struct profd_work_pool *profd_work_pool_new(struct event_base *base, unsigned threads)
{
    struct profd_work_returns *r = profd_work_returns_new(base);
    if (!r)
        return NULL;
    struct profd_work_pool *p = profd_xcalloc(1, sizeof(*p));
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    p->queue_tail = &p->queue;
    p->max_threads = threads ? threads : 1;
    p->threads = profd_xcalloc(p->max_threads, sizeof(*p->threads));
    p->returns = r;
    return p;
}

void profd_work_submit_to(struct profd_work_pool *p, struct profd_work *w,
                          struct profd_work_returns *r)
{
    w->returns = r;
    r->pending++;
    pthread_mutex_lock(&p->mu);
    if (!p->idle && p->nthreads < p->max_threads &&   /* a thread more, up to the most */
        pthread_create(&p->threads[p->nthreads], NULL, worker_main, p) == 0) {
        thread_name(p->threads[p->nthreads], "profd-work-%u", (p->nthreads + 1) % 1000);
        p->nthreads++;
    }
    bool queued = p->nthreads > 0, waiting = p->idle > 0;
    if (queued) {
        w->next = NULL;
        *p->queue_tail = w;
        p->queue_tail = &w->next;
    }
    pthread_mutex_unlock(&p->mu);
    /* Signalled once the lock is free, so that the thread woken does not
     * wake only to wait for it; none is woken when none waits (a busy
     * thread takes the job from the queue next). */
    if (queued && waiting)
        pthread_cond_signal(&p->work);
    if (!queued) {   /* no thread could start: run here, the completion as usual */
        profd_log(PROFD_LOG_WARN, "profd", "cannot start a worker thread: working inline");
        w->run(w);
        finished(w);
    }
}

void profd_work_submit(struct profd_work_pool *p, struct profd_work *w)
{
    profd_work_submit_to(p, w, p->returns);
}

void profd_work_pool_free(struct profd_work_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stopping = true;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->nthreads; i++)   /* they run what is queued first */
        pthread_join(p->threads[i], NULL);
    profd_work_returns_free(p->returns);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
    free(p->threads);
    free(p);
}
