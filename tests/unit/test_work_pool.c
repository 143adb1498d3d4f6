// SPDX-License-Identifier: Apache-2.0
/* The work pool: jobs run on its threads, their completions on the loop's,
 * and freeing the pool finishes everything submitted. */
#include <event2/event.h>
#include <pthread.h>
#include <unistd.h>

#include "../../core/work_pool.h"
#include "check.h"

#define JOBS 40

struct job {
    struct profd_work work;
    pthread_t ran_on, done_on;
    int *done_count;
    bool ran_on_pool, done_on_pool;   /* as profd_work_pool_thread saw it */
};

static void job_run(struct profd_work *w)
{
    struct job *j = (struct job *)w;
    j->ran_on = pthread_self();
    j->ran_on_pool = profd_work_pool_thread();
}

static void job_done(struct profd_work *w)
{
    struct job *j = (struct job *)w;
    j->done_on = pthread_self();
    j->done_on_pool = profd_work_pool_thread();
    (*j->done_count)++;
}

TEST(jobs_run_on_pool_threads_and_complete_on_the_loop)
{
    struct event_base *base = event_base_new();
    struct profd_work_pool *p = profd_work_pool_new(base, 3);
    CHECK(p != NULL);
    struct job jobs[JOBS];
    int done = 0;
    for (int i = 0; i < JOBS; i++) {
        jobs[i] = (struct job){{job_run, job_done, NULL, NULL}, 0, 0, &done, false, true};
        profd_work_submit(p, &jobs[i].work);
    }
    while (done < JOBS)   /* the loop wakes when jobs finish */
        event_base_loop(base, EVLOOP_ONCE);
    for (int i = 0; i < JOBS; i++) {
        CHECK(!pthread_equal(jobs[i].ran_on, pthread_self()));
        CHECK(pthread_equal(jobs[i].done_on, pthread_self()));
        CHECK(jobs[i].ran_on_pool);
        CHECK(!jobs[i].done_on_pool);
    }
    CHECK(!profd_work_pool_thread());
    profd_work_pool_free(p);
    event_base_free(base);
}

TEST(freeing_the_pool_finishes_what_was_submitted)
{
    struct event_base *base = event_base_new();
    struct profd_work_pool *p = profd_work_pool_new(base, 2);
    struct job jobs[JOBS];
    int done = 0;
    for (int i = 0; i < JOBS; i++) {
        jobs[i] = (struct job){{job_run, job_done, NULL, NULL}, 0, 0, &done, false, true};
        profd_work_submit(p, &jobs[i].work);
    }
    profd_work_pool_free(p);   /* no loop ran: free runs every completion */
    CHECK_INT(done, JOBS);
    for (int i = 0; i < JOBS; i++)
        CHECK(pthread_equal(jobs[i].done_on, pthread_self()));
    event_base_free(base);
}

static void slow_run(struct profd_work *w)
{
    usleep(2000);
    job_run(w);
}

TEST(jobs_given_for_another_loop_complete_there)
{
    struct event_base *pools = event_base_new(), *other = event_base_new();
    struct profd_work_pool *p = profd_work_pool_new(pools, 2);
    struct profd_work_returns *r = profd_work_returns_new(other);
    CHECK(r != NULL);
    struct job jobs[JOBS];
    int done = 0;
    for (int i = 0; i < JOBS; i++) {
        jobs[i] = (struct job){{job_run, job_done, NULL, NULL}, 0, 0, &done, false, true};
        profd_work_submit_to(p, &jobs[i].work, r);
    }
    while (done < JOBS)   /* only the other loop runs: it gets them all */
        event_base_loop(other, EVLOOP_ONCE);
    for (int i = 0; i < JOBS; i++)
        CHECK(jobs[i].ran_on_pool && !jobs[i].done_on_pool);
    profd_work_returns_free(r);
    profd_work_pool_free(p);
    event_base_free(other);
    event_base_free(pools);
}

TEST(freeing_returns_waits_for_the_jobs_given_with_them)
{
    struct event_base *pools = event_base_new(), *other = event_base_new();
    struct profd_work_pool *p = profd_work_pool_new(pools, 2);
    struct profd_work_returns *r = profd_work_returns_new(other);
    struct job jobs[8];
    int done = 0;
    for (int i = 0; i < 8; i++) {
        jobs[i] = (struct job){{slow_run, job_done, NULL, NULL}, 0, 0, &done, false, true};
        profd_work_submit_to(p, &jobs[i].work, r);
    }
    profd_work_returns_free(r);   /* 2 ms each on two threads: still running when called */
    CHECK_INT(done, 8);
    for (int i = 0; i < 8; i++)
        CHECK(pthread_equal(jobs[i].done_on, pthread_self()));
    profd_work_pool_free(p);
    event_base_free(other);
    event_base_free(pools);
}

RUN_TESTS()
