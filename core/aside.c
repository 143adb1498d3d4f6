// SPDX-License-Identifier: Apache-2.0
#include "aside.h"

#include <stdlib.h>

#include "alloc.h"
#include "graph.h"
#include "work_pool.h"

struct aside_job {
    struct profd_work work;   /* first: the pool hands this back */
    void (*fn)(void *arg);
    void (*done)(void *arg);
    void *arg;
};

static void job_run(struct profd_work *w)
{
    struct aside_job *j = (struct aside_job *)w;
    j->fn(j->arg);
}

static void job_done(struct profd_work *w)
{
    struct aside_job *j = (struct aside_job *)w;
    if (j->done)
        j->done(j->arg);
    free(j);
}

void profd_aside_run(struct profd_component *self, void (*fn)(void *arg),
                     void (*done)(void *arg), void *arg)
{
    if (!self->aside && !self->aside_stopped)
        self->aside = profd_work_pool_new(self->graph->base, 1);
    if (!self->aside) {   /* stopped, or no eventfd to come back through */
        fn(arg);
        if (done)
            done(arg);
        return;
    }
    struct aside_job *j = profd_xcalloc(1, sizeof(*j));
    *j = (struct aside_job){{job_run, job_done, NULL}, fn, done, arg};
    profd_work_submit(self->aside, &j->work);
}

void profd_aside_stop(struct profd_component *self)
{
    self->aside_stopped = true;
    struct profd_work_pool *p = self->aside;
    self->aside = NULL;   /* completions giving jobs now run them at once */
    profd_work_pool_free(p);
}
