// SPDX-License-Identifier: Apache-2.0
/*
 * processor relabel: Prometheus relabel rules on every record's series
 * labels; with sample_labels: true, also on the string labels inside each
 * pprof sample (the profile is decoded only then). A record dropped by the
 * rules, or left without __name__, is removed and counted as dropped; a
 * sample dropped by the rules is removed from its profile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profd/plugin.h"

struct config {
    struct profd_relabel *rules;
    bool sample_labels;
};

static const struct profd_option options[] = {
    {"rules", PROFD_OPT_RELABEL, offsetof(struct config, rules), NULL,
     "Prometheus relabel_configs applied in order"},
    {"sample_labels", PROFD_OPT_BOOL, offsetof(struct config, sample_labels), "false",
     "also apply the rules to the labels of every pprof sample"},
    {0},
};

struct state {
    const struct profd_host *host;
    struct profd_component *self;
    const struct config *cfg;
};

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

static char *str_dup(const struct profd_profile *p, uint32_t idx)
{
    return strndup(p->strings[idx].ptr, p->strings[idx].len);
}

/* The sample's string labels as a label set (numeric ones are not relabeled). */
static void sample_labelset(struct state *s, const struct profd_profile *p,
                            const struct profd_sample *smp, struct profd_labels *set)
{
    s->host->labels_clear(set);
    for (uint32_t k = 0; k < smp->nlabels; k++) {
        const struct profd_sample_label *lb = &smp->labels[k];
        if (!lb->str)
            continue;
        char *key = str_dup(p, lb->key), *val = str_dup(p, lb->str);
        if (key && val)
            s->host->labels_set(set, key, val);
        free(key);
        free(val);
    }
}

/* Rewrites smp's labels: its numeric labels, then the relabeled string ones. */
static void store_labels(struct state *s, struct profd_profile *p, struct profd_sample *smp,
                         const struct profd_labels *set)
{
    uint32_t nnum = 0;
    for (uint32_t k = 0; k < smp->nlabels; k++)
        nnum += !smp->labels[k].str;
    uint32_t n = nnum + (uint32_t)set->n;
    struct profd_sample_label *out =
        n ? s->host->profile_alloc(p, n * sizeof(*out)) : NULL;
    uint32_t j = 0;
    for (uint32_t k = 0; k < smp->nlabels; k++)
        if (!smp->labels[k].str)
            out[j++] = smp->labels[k];
    for (size_t k = 0; k < set->n; k++) {
        const char *name = set->items[k].name, *value = set->items[k].value;
        out[j++] = (struct profd_sample_label){
            .key = s->host->profile_intern(p, name, strlen(name)),
            .str = s->host->profile_intern(p, value, strlen(value)),
        };
    }
    smp->labels = out;
    smp->nlabels = n;
}

static void relabel_samples(struct state *s, struct profd_record *r)
{
    char err[512];
    struct profd_profile *p = s->host->record_profile(r, err, sizeof(err));
    if (!p) {
        s->host->log(s->self, PROFD_LOG_WARN, "sample labels left as they are: %s", err);
        return;
    }
    struct profd_labels set = {0};
    size_t kept = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        struct profd_sample smp = p->samples[i];
        sample_labelset(s, p, &smp, &set);
        if (!s->host->relabel(s->cfg->rules, &set))
            continue;
        store_labels(s, p, &smp, &set);
        p->samples[kept++] = smp;
    }
    s->host->labels_clear(&set);
    p->nsamples = kept;
    s->host->record_touch(r);
}

static int consume(void *st, struct profd_batch *b)
{
    struct state *s = st;
    for (size_t i = b->nrecords; i-- > 0;) {
        struct profd_record *r = b->records[i];
        bool keep = s->host->relabel(s->cfg->rules, &r->labels);
        if (keep && !s->host->record_label(r, "__name__")) {
            s->host->log(s->self, PROFD_LOG_DEBUG, "record without __name__ dropped");
            keep = false;
        }
        if (!keep) {
            s->host->batch_remove(b, i);
            s->host->count(s->self, PROFD_C_DROPPED_RECORDS, 1);
        } else if (s->cfg->sample_labels && s->cfg->rules) {
            relabel_samples(s, r);
        }
    }
    return b->nrecords ? s->host->emit(s->self, b) : PROFD_OK;
}

static void destroy(void *st)
{
    free(st);
}

static const struct profd_plugin plugin = {
    PROFD_PLUGIN_HEADER,
    .kind = PROFD_PROCESSOR,
    .type = "relabel",
    .description = "Prometheus relabel rules on series labels (and, opt-in, on sample labels)",
    .options = options,
    .config_size = sizeof(struct config),
    .flags = PROFD_PLUGIN_MUTATES | PROFD_PLUGIN_CONCURRENT,
    .create = create,
    .consume = consume,
    .destroy = destroy,
};

PROFD_PLUGIN_DEFINE(plugin)
