// SPDX-License-Identifier: Apache-2.0
/* The serving loops: jobs run on each loop's own thread in the order
 * posted, a call returns once its job ran, each loop's base serves events
 * on that thread, and freeing the loops runs what was posted first. */
#include <dirent.h>
#include <event2/event.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <unistd.h>

#include "../../core/exporter.h"
#include "../../core/serve_loops.h"
#include "../../lib/cpus.h"
#include "check.h"

#define LOOPS 3
#define JOBS 200

struct seen {
    pthread_t thread;
    int64_t wait_until;   /* the queue deadline the thread serves under */
    int order[JOBS];
    int n;
};

struct posted {
    struct seen *seen;
    int i;
};

static void note_job(void *arg)
{
    struct posted *p = arg;
    p->seen->thread = pthread_self();
    p->seen->order[p->seen->n++] = p->i;
}

static void note_thread(void *arg)
{
    struct seen *s = arg;
    s->thread = pthread_self();
    s->wait_until = profd_queue_wait_until(PROFD_QUEUE_NO_WAIT);
}

TEST(one_loop_for_each_usable_cpu_beside_the_main_one_and_never_more_than_the_most)
{
    CHECK(profd_serve_loops_new(0) == NULL);
    CHECK_INT(profd_serve_loops_count(NULL), 0);
    profd_serve_loops_free(NULL);
    unsigned others = cpus_usable() - 1;   /* beside the main loop's */
    CHECK_INT(profd_serve_loops_wanted(), others < PROFD_SERVE_LOOPS_MAX ? others
                                                                          : PROFD_SERVE_LOOPS_MAX);
}

TEST(jobs_run_on_their_loops_thread_in_the_order_posted)
{
    struct profd_serve_loops *l = profd_serve_loops_new(LOOPS);
    CHECK_INT(profd_serve_loops_count(l), LOOPS);
    struct seen seen[LOOPS] = {0};
    static struct posted posted[LOOPS][JOBS];
    for (unsigned i = 0; i < LOOPS; i++)
        CHECK(profd_serve_loops_base(l, i) != NULL);
    for (int j = 0; j < JOBS; j++) {
        for (unsigned i = 0; i < LOOPS; i++) {
            posted[i][j] = (struct posted){&seen[i], j};
            profd_serve_loops_post(l, i, note_job, &posted[i][j]);
        }
    }
    struct seen called[LOOPS] = {0};
    for (unsigned i = 0; i < LOOPS; i++)   /* after the jobs posted before it */
        profd_serve_loops_call(l, i, note_thread, &called[i]);
    for (unsigned i = 0; i < LOOPS; i++) {
        CHECK_INT(seen[i].n, JOBS);
        for (int j = 0; j < JOBS; j++)
            CHECK_INT(seen[i].order[j], j);
        CHECK(pthread_equal(seen[i].thread, called[i].thread));
        CHECK(!pthread_equal(called[i].thread, pthread_self()));
        CHECK(called[i].wait_until == PROFD_QUEUE_NO_WAIT);   /* a loop never waits */
        for (unsigned k = 0; k < i; k++)
            CHECK(!pthread_equal(called[i].thread, called[k].thread));
    }
    profd_serve_loops_free(l);
}

struct watched {
    struct event_base *base;
    int fds[2];
    struct event *ev;
    pthread_t fired_on;
    sem_t fired;
};

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    struct watched *w = arg;
    char c;
    if (read(fd, &c, 1) == 1) {
        w->fired_on = pthread_self();
        sem_post(&w->fired);
    }
}

static void watch(void *arg)
{
    struct watched *w = arg;
    w->ev = event_new(w->base, w->fds[0], EV_READ | EV_PERSIST, on_readable, w);
    event_add(w->ev, NULL);
}

static void unwatch(void *arg)
{
    struct watched *w = arg;
    event_free(w->ev);
}

TEST(a_loops_base_serves_events_on_its_thread)
{
    struct profd_serve_loops *l = profd_serve_loops_new(2);
    struct watched w = {.base = profd_serve_loops_base(l, 1)};
    CHECK(w.base != NULL);
    CHECK(pipe(w.fds) == 0);
    sem_init(&w.fired, 0, 0);
    struct seen loop = {0};
    profd_serve_loops_call(l, 1, watch, &w);
    profd_serve_loops_call(l, 1, note_thread, &loop);
    CHECK(write(w.fds[1], "x", 1) == 1);
    sem_wait(&w.fired);   /* the loop's thread saw the descriptor ready */
    CHECK(pthread_equal(w.fired_on, loop.thread));
    profd_serve_loops_call(l, 1, unwatch, &w);
    profd_serve_loops_free(l);
    sem_destroy(&w.fired);
    close(w.fds[0]);
    close(w.fds[1]);
}

static atomic_int ran;

static void count_job(void *arg)
{
    (void)arg;
    atomic_fetch_add(&ran, 1);
}

TEST(freeing_the_loops_runs_what_was_posted_first)
{
    struct profd_serve_loops *l = profd_serve_loops_new(2);
    CHECK(profd_serve_loops_base(l, 0) != NULL);
    for (int j = 0; j < JOBS; j++)
        profd_serve_loops_post(l, (unsigned)j % 2, count_job, NULL);
    profd_serve_loops_free(l);
    CHECK_INT(atomic_load(&ran), JOBS);
}

/* The threads the process runs now. */
static int threads_now(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

TEST(threads_start_when_a_base_is_first_asked_for)
{
    int before = threads_now();
    struct profd_serve_loops *l = profd_serve_loops_new(2);
    CHECK_INT(threads_now(), before);   /* a daemon that serves nothing runs none */
    CHECK(profd_serve_loops_base(l, 1) != NULL);
    CHECK_INT(threads_now(), before + 2);
    profd_serve_loops_free(l);
    CHECK_INT(threads_now(), before);
}

RUN_TESTS()
