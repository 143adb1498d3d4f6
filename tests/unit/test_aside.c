// SPDX-License-Identifier: Apache-2.0
/* A receiver's own thread: its jobs run there one at a time in the order
 * given, their completions on the loop's thread, and stopping finishes
 * them all, after which jobs run at once where they are given. */
#include <event2/event.h>
#include <pthread.h>

#include "../../core/aside.h"
#include "../../core/graph.h"
#include "check.h"

#define JOBS 40

struct run_log {
    struct profd_component *self;
    int order[JOBS + 1], ran;     /* written by the jobs, one at a time */
    pthread_t ran_on[JOBS + 1];
    int done;
    bool done_off_loop;
    pthread_t loop;
};

struct job {
    struct run_log *log;
    int id;
    bool chain;   /* its completion gives one more job */
};

static void job_run(void *arg)
{
    struct job *j = arg;
    j->log->ran_on[j->log->ran] = pthread_self();
    j->log->order[j->log->ran++] = j->id;
}

static struct job chained;

static void job_done(void *arg)
{
    struct job *j = arg;
    j->log->done++;
    j->log->done_off_loop |= !pthread_equal(pthread_self(), j->log->loop);
    if (j->chain) {
        chained = (struct job){j->log, JOBS, false};
        profd_aside_run(j->log->self, job_run, job_done, &chained);
    }
}

/* A receiver on a loop of its own, and the JOBS jobs given to its thread. */
struct receiver {
    struct profd_graph g;
    struct profd_component c;
    struct run_log log;
    struct job jobs[JOBS];
};

/* Sets r up and gives it jobs 0..JOBS-1; with chain_last, the last one's
 * completion gives one more. */
static void give_jobs(struct receiver *r, bool chain_last)
{
    r->g = (struct profd_graph){.base = event_base_new()};
    r->c = (struct profd_component){.graph = &r->g};
    r->log = (struct run_log){.self = &r->c, .loop = pthread_self()};
    for (int i = 0; i < JOBS; i++) {
        r->jobs[i] = (struct job){&r->log, i, chain_last && i == JOBS - 1};
        profd_aside_run(&r->c, job_run, job_done, &r->jobs[i]);
    }
}

TEST(jobs_run_in_order_on_one_thread_and_complete_on_the_loop)
{
    static struct receiver r;
    give_jobs(&r, false);
    struct run_log *log = &r.log;
    while (log->done < JOBS)   /* the loop wakes as jobs finish */
        event_base_loop(r.g.base, EVLOOP_ONCE);
    for (int i = 0; i < JOBS; i++) {
        CHECK_INT(log->order[i], i);
        CHECK(pthread_equal(log->ran_on[i], log->ran_on[0]));
    }
    CHECK(!pthread_equal(log->ran_on[0], pthread_self()));
    CHECK(!log->done_off_loop);
    profd_aside_stop(&r.c);
    event_base_free(r.g.base);
}

TEST(stopping_finishes_every_job_and_later_ones_run_at_once)
{
    static struct receiver r;
    give_jobs(&r, true);
    struct run_log *log = &r.log;
    profd_aside_stop(&r.c);   /* no loop ran: stopping runs every completion */
    CHECK_INT(log->done, JOBS + 1);   /* the chained job too, given while stopping */
    CHECK_INT(log->ran, JOBS + 1);
    CHECK_INT(log->order[JOBS], JOBS);
    CHECK(pthread_equal(log->ran_on[JOBS], pthread_self()));
    CHECK(!log->done_off_loop);
    struct job late = {log, JOBS + 1, false};
    log->ran = JOBS;
    profd_aside_run(&r.c, job_run, job_done, &late);   /* stopped: runs here, now */
    CHECK_INT(log->done, JOBS + 2);
    CHECK_INT(log->order[JOBS], JOBS + 1);
    struct job quiet = {log, JOBS + 2, false};
    log->ran = JOBS;
    profd_aside_run(&r.c, job_run, NULL, &quiet);   /* no completion wanted */
    CHECK_INT(log->order[JOBS], JOBS + 2);
    CHECK_INT(log->done, JOBS + 2);
    profd_aside_stop(&r.c);   /* idempotent */
    event_base_free(r.g.base);
}

RUN_TESTS()
