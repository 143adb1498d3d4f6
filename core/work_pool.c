// SPDX-License-Identifier: Apache-2.0
#include "work_pool.h"

#include <event2/event.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "alloc.h"
#include "log.h"

struct profd_work_pool {
    pthread_mutex_t mu;
    pthread_cond_t work;                  /* a job queued, or stopping */
    struct profd_work *queue, **queue_tail;
    struct profd_work *finished;          /* run, done not yet called (any order) */
    size_t idle;                          /* threads waiting for a job */
    bool stopping;
    pthread_t *threads;
    unsigned nthreads, max_threads;
    int efd;                              /* written when a job finished */
    struct event *wake;                   /* the loop's watch on efd */
};

/* Takes every finished job and runs its completion (loop thread). */
static void run_completions(struct profd_work_pool *p)
{
    pthread_mutex_lock(&p->mu);
    struct profd_work *w = p->finished;
    p->finished = NULL;
    pthread_mutex_unlock(&p->mu);
    while (w) {
        struct profd_work *next = w->next;
        w->done(w);
        w = next;
    }
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    uint64_t n;
    ssize_t got = read(fd, &n, sizeof(n));   /* EAGAIN: woken already */
    (void)got;
    run_completions(arg);
}

/* w has run: its completion is due on the loop's thread. Only the first
 * of the jobs finished since the loop last took them wakes it: it takes
 * them all. */
static void finished(struct profd_work_pool *p, struct profd_work *w)
{
    pthread_mutex_lock(&p->mu);
    bool first = !p->finished;
    w->next = p->finished;
    p->finished = w;
    pthread_mutex_unlock(&p->mu);
    uint64_t one = 1;
    ssize_t put = first ? write(p->efd, &one, sizeof(one)) : 0;   /* a counter: never full */
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
        finished(p, w);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

struct profd_work_pool *profd_work_pool_new(struct event_base *base, unsigned threads)
{
    struct profd_work_pool *p = profd_xcalloc(1, sizeof(*p));
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    p->queue_tail = &p->queue;
    p->max_threads = threads ? threads : 1;
    p->threads = profd_xcalloc(p->max_threads, sizeof(*p->threads));
    p->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    p->wake = p->efd >= 0 ? event_new(base, p->efd, EV_READ | EV_PERSIST, on_wake, p) : NULL;
    if (!p->wake || event_add(p->wake, NULL) != 0) {
        profd_work_pool_free(p);
        return NULL;
    }
    return p;
}

void profd_work_submit(struct profd_work_pool *p, struct profd_work *w)
{
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
        finished(p, w);
    }
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
    run_completions(p);
    if (p->wake)
        event_free(p->wake);
    if (p->efd >= 0)
        close(p->efd);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
    free(p->threads);
    free(p);
}
