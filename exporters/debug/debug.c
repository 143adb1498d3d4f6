// SPDX-License-Identifier: Apache-2.0
/*
 * exporter debug: one log line per record (series, sample types, sample
 * count, total per type); with verbosity: detailed, also the top 10 leaf
 * functions by the default sample type.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/saturating.h"
#include "profd/plugin.h"

enum { VERBOSITY_BASIC, VERBOSITY_DETAILED };
static const char *const verbosities[] = {"basic", "detailed", NULL};

struct config {
    int verbosity;
};

static const struct profd_option options[] = {
    {"verbosity", PROFD_OPT_ENUM, offsetof(struct config, verbosity), "basic",
     "basic: one summary line; detailed: also the top 10 functions", .choices = verbosities},
    {0},
};

struct state {
    const struct profd_host *host;
    struct profd_component *self;
    const struct config *cfg;
};

struct text {
    char buf[4096];
    size_t len;
};

__attribute__((format(printf, 2, 3))) static void put(struct text *t, const char *fmt, ...)
{
    if (t->len >= sizeof(t->buf) - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, sizeof(t->buf) - t->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->len += (size_t)n < sizeof(t->buf) - t->len ? (size_t)n : sizeof(t->buf) - t->len - 1;
}

static void put_str(struct text *t, const struct profd_profile *p, uint32_t idx)
{
    put(t, "%.*s", (int)p->strings[idx].len, p->strings[idx].ptr);
}

/* The column viewers show by default: default_sample_type, else the last. */
static uint32_t default_column(const struct profd_profile *p)
{
    for (uint32_t i = 0; p->default_sample_type && i < p->nsample_types; i++)
        if (p->sample_types[i].type == p->default_sample_type)
            return i;
    return p->nsample_types ? p->nsample_types - 1 : 0;
}

struct fn_total {
    uint32_t name;
    int64_t value;
};

static int by_value_desc(const void *a, const void *b)
{
    const struct fn_total *x = a, *y = b;
    return x->value < y->value ? 1 : x->value > y->value ? -1 : 0;
}

static void put_top_functions(struct text *t, const struct profd_profile *p)
{
    if (!p->nsample_types || !p->nfunctions)
        return;
    uint32_t col = default_column(p);
    struct fn_total *totals = calloc(p->nfunctions, sizeof(*totals));
    if (!totals)
        return;
    for (uint32_t i = 0; i < p->nfunctions; i++)
        totals[i].name = p->functions[i].name;
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct profd_sample *s = &p->samples[i];
        if (!s->nlocations)
            continue;
        const struct profd_location *leaf = &p->locations[s->locations[0] - 1];
        if (leaf->nlines && leaf->lines[0].function) {
            int64_t *total = &totals[leaf->lines[0].function - 1].value;
            *total = add_saturating(*total, s->values[col]);
        }
    }
    qsort(totals, p->nfunctions, sizeof(*totals), by_value_desc);
    put(t, " top(");
    put_str(t, p, p->sample_types[col].type);
    put(t, ")=[");
    for (uint32_t i = 0; i < p->nfunctions && i < 10 && totals[i].value; i++) {
        put(t, "%s", i ? ", " : "");
        put_str(t, p, totals[i].name);
        put(t, " %lld", (long long)totals[i].value);
    }
    put(t, "]");
    free(totals);
}

static void log_record(struct state *s, struct profd_record *r)
{
    struct text t = {.len = 0};
    put(&t, "{");
    for (size_t i = 0; i < r->labels.n; i++)
        put(&t, "%s%s=\"%s\"", i ? ", " : "", r->labels.items[i].name, r->labels.items[i].value);
    put(&t, "}");
    char err[512];
    const struct profd_profile *p = s->host->record_profile(r, err, sizeof(err));
    if (!p) {
        s->host->log(s->self, PROFD_LOG_WARN, "%s undecodable: %s", t.buf, err);
        return;
    }
    put(&t, " samples=%zu types=[", p->nsamples);
    for (uint32_t i = 0; i < p->nsample_types; i++) {
        int64_t total = 0;
        for (size_t j = 0; j < p->nsamples; j++)
            total = add_saturating(total, p->samples[j].values[i]);
        put(&t, "%s", i ? ", " : "");
        put_str(&t, p, p->sample_types[i].type);
        put(&t, "/");
        put_str(&t, p, p->sample_types[i].unit);
        put(&t, " total=%lld", (long long)total);
    }
    put(&t, "]");
    if (s->cfg->verbosity == VERBOSITY_DETAILED)
        put_top_functions(&t, p);
    s->host->log(s->self, PROFD_LOG_INFO, "%s", t.buf);
}

static int consume(void *st, struct profd_batch *b)
{
    for (size_t i = 0; i < b->nrecords; i++)
        log_record(st, b->records[i]);
    return PROFD_OK;
}

static int create(const struct profd_host *host, struct profd_component *self, const void *cfg,
                  void **out)
{
    struct state *s = calloc(1, sizeof(*s));
    if (!s)
        return PROFD_ERR;
    *s = (struct state){host, self, cfg};
    *out = s;
    return PROFD_OK;
}

static void destroy(void *st)
{
    free(st);
}

static const struct profd_plugin plugin = {
    PROFD_PLUGIN_HEADER,
    .kind = PROFD_EXPORTER,
    .type = "debug",
    .description = "logs a summary of every profile (and its top functions when detailed)",
    .options = options,
    .config_size = sizeof(struct config),
    .create = create,
    .consume = consume,
    .destroy = destroy,
};

PROFD_PLUGIN_DEFINE(plugin)
