// SPDX-License-Identifier: Apache-2.0
#include "work_pool.h"

#include <event2/event.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "alloc.h"
#include "log.h"

/* Completions due on one loop. */
struct profd_work_returns {
    pthread_mutex_t mu;
    struct profd_work *finished;          /* run, done not yet called (any order) */
    size_t pending;                       /* given, done not yet called */
    int efd;                              /* written when a job finished */
    struct event *wake;                   /* the loop's watch on efd */
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

/* Takes every finished job and runs its completion (r's loop thread). */
static void run_completions(struct profd_work_returns *r)
{
    pthread_mutex_lock(&r->mu);
    struct profd_work *w = r->finished;
    r->finished = NULL;
    pthread_mutex_unlock(&r->mu);
    size_t n = 0;
    while (w) {
        struct profd_work *next = w->next;
        w->done(w);
        w = next;
        n++;
    }
    pthread_mutex_lock(&r->mu);
    r->pending -= n;
    pthread_mutex_unlock(&r->mu);
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    uint64_t n;
    ssize_t got = read(fd, &n, sizeof(n));   /* EAGAIN: woken already */
    (void)got;
    run_completions(arg);
}

/* w has run: its completion is due on its returns' loop. Only the first
 * of the jobs finished since the loop last took them wakes it: it takes
 * them all. */
static void finished(struct profd_work *w)
{
    struct profd_work_returns *r = w->returns;
    pthread_mutex_lock(&r->mu);
    bool first = !r->finished;
    w->next = r->finished;
    r->finished = w;
    pthread_mutex_unlock(&r->mu);
    uint64_t one = 1;
    ssize_t put = first ? write(r->efd, &one, sizeof(one)) : 0;   /* a counter: never full */
    (void)put;
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
    pthread_mutex_init(&r->mu, NULL);
    r->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    r->wake = r->efd >= 0 ? event_new(base, r->efd, EV_READ | EV_PERSIST, on_wake, r) : NULL;
    if (!r->wake || event_add(r->wake, NULL) != 0) {
        profd_work_returns_free(r);
        return NULL;
    }
    return r;
}

void profd_work_returns_free(struct profd_work_returns *r)
{
    if (!r)
        return;
    for (;;) {
        run_completions(r);
        pthread_mutex_lock(&r->mu);
        bool waiting = r->pending > 0;
        pthread_mutex_unlock(&r->mu);
        if (!waiting)
            break;
        struct pollfd pfd = {.fd = r->efd, .events = POLLIN};
        if (poll(&pfd, 1, -1) > 0) {   /* a job finished: take it */
            uint64_t n;
            ssize_t got = read(r->efd, &n, sizeof(n));
            (void)got;
        }
    }
    if (r->wake)
        event_free(r->wake);
    if (r->efd >= 0)
        close(r->efd);
    pthread_mutex_destroy(&r->mu);
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
    pthread_mutex_lock(&r->mu);
    r->pending++;
    pthread_mutex_unlock(&r->mu);
    pthread_mutex_lock(&p->mu);
    if (!p->idle && p->nthreads < p->max_threads &&   /* a thread more, up to the most */
        pthread_create(&p->threads[p->nthreads], NULL, worker_main, p) == 0)
        p->nthreads++;
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
