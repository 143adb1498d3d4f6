// SPDX-License-Identifier: Apache-2.0
#include "presets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What Go's net/http/pprof serves and what Alloy and Parca call it. A
 * seconds of -1 means "the scrape interval less one second". */
static const struct {
    const char *name, *path, *expect;
    bool delta, profiler_deltas;
    int seconds;
} presets[] = {
    {"process_cpu", "/debug/pprof/profile", "cpu", false, false, -1},
    {"memory", "/debug/pprof/allocs", "alloc_space", true, false, 0},
    {"goroutine", "/debug/pprof/goroutine", "goroutine", false, false, 0},
    {"mutex", "/debug/pprof/mutex", "contentions", true, false, 0},
    {"block", "/debug/pprof/block", "contentions", true, false, 0},
    {"threadcreate", "/debug/pprof/threadcreate", "threadcreate", false, false, 0},
    {"fgprof", "/debug/fgprof?format=pprof", NULL, false, false, -1},
    {"godeltaprof_memory", "/debug/pprof/delta_heap", "alloc_space", false, true, 0},
    {"godeltaprof_mutex", "/debug/pprof/delta_mutex", "contentions", false, true, 0},
    {"godeltaprof_block", "/debug/pprof/delta_block", "contentions", false, true, 0},
};

#define NPRESETS (sizeof(presets) / sizeof(*presets))

static int preset_index(const char *name)
{
    for (size_t i = 0; i < NPRESETS; i++)
        if (!strcmp(presets[i].name, name))
            return (int)i;
    return -1;
}

static void def_from_preset(struct profile_def *d, size_t i, int64_t interval)
{
    d->name = strdup(presets[i].name);
    d->path = strdup(presets[i].path);
    d->delta = presets[i].delta;
    d->profiler_deltas = presets[i].profiler_deltas;
    d->expect = presets[i].expect;
    int64_t sec = interval - 1000000000LL;
    d->seconds = presets[i].seconds < 0 ? (sec >= 1000000000LL ? sec : 1000000000LL) : 0;
}

static struct profile_def *find_def(struct profile_def *defs, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(defs[i].name, name))
            return &defs[i];
    return NULL;
}

struct profile_def *presets_resolve(const struct job *job, size_t *n, char *err, size_t errlen)
{
    const struct profiling_config *pc = &job->profiling_config;
    size_t cap = pc->presets.n + pc->custom.n + 1;
    struct profile_def *defs = calloc(cap, sizeof(*defs));
    *n = 0;
    for (size_t i = 0; i < pc->presets.n; i++) {
        int p = preset_index(pc->presets.items[i]);
        if (p < 0) {
            snprintf(err, errlen, "unknown preset '%s'", pc->presets.items[i]);
            presets_free(defs, *n);
            return NULL;
        }
        if (!find_def(defs, *n, presets[p].name))
            def_from_preset(&defs[(*n)++], (size_t)p, job->scrape_interval);
    }
    const struct custom_profile *cs = pc->custom.items;
    for (size_t i = 0; i < pc->custom.n; i++) {
        const struct custom_profile *c = &cs[i];
        struct profile_def *d = find_def(defs, *n, c->name);
        int p = preset_index(c->name);
        if (!d) {
            d = &defs[(*n)++];
            if (p >= 0) {
                def_from_preset(d, (size_t)p, job->scrape_interval);
            } else {
                d->name = strdup(c->name);
                if (!c->path) {
                    snprintf(err, errlen, "custom profile '%s' needs a path", c->name);
                    presets_free(defs, *n);
                    return NULL;
                }
            }
        }
        if (c->path) {
            free(d->path);
            d->path = strdup(c->path);
        }
        if (p < 0 || c->delta)
            d->delta = c->delta;
        if (p < 0 || c->seconds)
            d->seconds = c->seconds;
        d->keep_sample_types = c->keep_sample_types;
        if (!c->enabled) {   /* an override that turns a profile off */
            free(d->name);
            free(d->path);
            *d = defs[--(*n)];
            memset(&defs[*n], 0, sizeof(defs[*n]));
        }
    }
    return defs;
}

void presets_free(struct profile_def *defs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(defs[i].name);
        free(defs[i].path);
    }
    free(defs);
}
