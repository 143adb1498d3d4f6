// SPDX-License-Identifier: Apache-2.0
#include "metrics.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/hash.h"
#include "alloc.h"
#include "text.h"

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct profd_metrics *registry;

/* Free-form gauges, in a chained hash table keyed by name and labels:
 * thousands of scrape targets each set three of them every interval. */
struct gauge {
    const char *name, *help, *component, *labels;   /* in text */
    double value;
    const atomic_size_t *source;   /* NULL, or where the value is read when rendered */
    uint64_t hash;
    struct gauge *next;
    char text[];   /* the four strings, one after another: a lookup reads one block */
};

static struct gauge **buckets;
static size_t nbuckets, ngauges;

/* Each part hashed on its own, eight bytes at a time (a scrape sets three
 * gauges of a target's labels, some 70 bytes, every time it ends). */
static uint64_t gauge_hash(const char *name, const char *component, const char *labels)
{
    return hash_mix(hash_mix(hash_string(name), hash_string(component)), hash_string(labels));
}

static struct gauge **gauge_slot(const char *name, const char *component, const char *labels,
                                 uint64_t h)
{
    struct gauge **at = &buckets[h & (nbuckets - 1)];
    while (*at && ((*at)->hash != h || strcmp((*at)->name, name) ||
                   strcmp((*at)->component, component) || strcmp((*at)->labels, labels)))
        at = &(*at)->next;
    return at;
}

static void gauges_grow(void)
{
    size_t n = nbuckets ? nbuckets * 2 : 256;
    struct gauge **nb = profd_xcalloc(n, sizeof(*nb));
    for (size_t i = 0; i < nbuckets; i++) {
        for (struct gauge *g = buckets[i], *next; g; g = next) {
            next = g->next;
            g->next = nb[g->hash & (n - 1)];
            nb[g->hash & (n - 1)] = g;
        }
    }
    free(buckets);
    buckets = nb;
    nbuckets = n;
}

/* A gauge of these strings, copied into one block with it. */
static struct gauge *gauge_new(const char *name, const char *help, const char *component,
                               const char *labels)
{
    const char *parts[4] = {name, help, component, labels};
    size_t lens[4], total = 0;
    for (int i = 0; i < 4; i++)
        total += lens[i] = strlen(parts[i]) + 1;
    struct gauge *g = profd_xcalloc(1, sizeof(*g) + total);
    const char **fields[4] = {&g->name, &g->help, &g->component, &g->labels};
    char *at = g->text;
    for (int i = 0; i < 4; i++) {
        memcpy(at, parts[i], lens[i]);
        *fields[i] = at;
        at += lens[i];
    }
    return g;
}

/* The gauge of these strings, made when there is none; registry_lock
 * held. */
static struct gauge *gauge_get(const char *name, const char *help, const char *component,
                               const char *labels)
{
    uint64_t h = gauge_hash(name, component, labels);
    if (ngauges + 1 > nbuckets)
        gauges_grow();
    struct gauge **at = gauge_slot(name, component, labels, h);
    if (!*at) {
        struct gauge *g = gauge_new(name, help, component, labels);
        g->hash = h;
        *at = g;
        ngauges++;
    }
    return *at;
}

void profd_metrics_gauge_set(const char *name, const char *help, const char *component,
                             const char *labels, double v)
{
    pthread_mutex_lock(&registry_lock);
    gauge_get(name, help, component, labels)->value = v;
    pthread_mutex_unlock(&registry_lock);
}

void profd_metrics_gauge_watch(const char *name, const char *help, const char *component,
                               const char *labels, const atomic_size_t *source)
{
    pthread_mutex_lock(&registry_lock);
    gauge_get(name, help, component, labels)->source = source;
    pthread_mutex_unlock(&registry_lock);
}

void profd_metrics_gauge_del(const char *name, const char *component, const char *labels)
{
    uint64_t h = gauge_hash(name, component, labels);
    pthread_mutex_lock(&registry_lock);
    struct gauge **at = nbuckets ? gauge_slot(name, component, labels, h) : NULL;
    if (at && *at) {
        struct gauge *g = *at;
        *at = g->next;
        free(g);
        ngauges--;
    }
    pthread_mutex_unlock(&registry_lock);
}

static int gauge_order(const void *a, const void *b)
{
    const struct gauge *x = *(struct gauge *const *)a, *y = *(struct gauge *const *)b;
    int c = strcmp(x->name, y->name);
    if (!c)
        c = strcmp(x->component, y->component);
    return c ? c : strcmp(x->labels, y->labels);
}

struct profd_metrics *profd_metrics_get(const char *id, const char *kind)
{
    pthread_mutex_lock(&registry_lock);
    struct profd_metrics *m;
    for (m = registry; m; m = m->next)
        if (strcmp(m->id, id) == 0 && strcmp(m->kind, kind) == 0)
            break;
    if (!m) {
        m = profd_xcalloc(1, sizeof(*m));
        m->id = profd_xstrdup(id);
        m->kind = kind;
        m->next = registry;
        registry = m;
    }
    pthread_mutex_unlock(&registry_lock);
    return m;
}

void profd_metrics_count_in(struct profd_metrics *m, size_t records, size_t bytes)
{
    atomic_fetch_add(&m->counters[PROFD_C_ACCEPTED_RECORDS], records);
    atomic_fetch_add(&m->counters[PROFD_C_ACCEPTED_BYTES], bytes);
}

static const struct {
    const char *name, *help;
} counter_info[PROFD_C_COUNT_] = {
    [PROFD_C_ACCEPTED_RECORDS] = {"accepted_records", "Records a component took in (not those it told their sender to retry)."},
    [PROFD_C_ACCEPTED_BYTES] = {"accepted_bytes", "Payload bytes a component took in."},
    [PROFD_C_REFUSED_RECORDS] = {"refused_records", "Inputs refused as malformed or invalid."},
    [PROFD_C_SENT_RECORDS] = {"sent_records", "Records an exporter delivered."},
    [PROFD_C_SENT_BYTES] = {"sent_bytes", "Payload bytes an exporter delivered."},
    [PROFD_C_FAILED_RECORDS] = {"failed_records", "Records an exporter failed to deliver."},
    [PROFD_C_DROPPED_RECORDS] = {"dropped_records",
                                 "Records dropped on purpose: a full queue under drop, a shutdown "
                                 "deadline, a relabel or downsample rule."},
    [PROFD_C_RETRY_LATER_RECORDS] = {"retry_later_records",
                                     "Records an exporter's queue refused (full under block, or "
                                     "draining): their sender was told to retry later."},
};

/* The gauges every exporter has, by their place in its counters. */
static const struct {
    const char *name, *help;
} exporter_gauges[PROFD_G_COUNT_] = {
    [PROFD_G_QUEUE_BYTES] = {"queue_bytes", "Bytes the records waiting in an exporter queue "
                             "hold: as received, and their profiles decoded or built in "
                             "memory (in their files alone, as received)."},
    [PROFD_G_QUEUE_RECORDS] = {"queue_records", "Records waiting in an exporter queue."},
    [PROFD_G_QUEUE_MEMORY_BYTES] = {"queue_memory_bytes", "Of an exporter queue's bytes, "
                                    "those held in memory (sending_queue.memory_size)."},
    [PROFD_G_STORED_BYTES] = {"queue_stored_bytes", "Bytes of the files an exporter queue "
                              "keeps its records in (sending_queue.storage)."},
    [PROFD_G_STORED_RECORDS] = {"queue_stored_records", "Records an exporter queue keeps in "
                                "files (sending_queue.storage), with those an earlier run left."},
};

const char *profd_metrics_counter_name(enum profd_counter c)
{
    return counter_info[c].name;
}

const char *profd_metrics_gauge_name(enum profd_exporter_gauge g)
{
    return exporter_gauges[g].name;
}

char *profd_metrics_render(void)
{
    struct profd_text t = {0};
    profd_text_add(&t, "");
    pthread_mutex_lock(&registry_lock);
    for (int c = 0; c < PROFD_C_COUNT_; c++) {
        const char *name = counter_info[c].name;
        profd_text_printf(&t, "# HELP profd_component_%s_total %s\n", name,
                          counter_info[c].help);
        profd_text_printf(&t, "# TYPE profd_component_%s_total counter\n", name);
        for (struct profd_metrics *m = registry; m; m = m->next)
            profd_text_printf(&t, "profd_component_%s_total{kind=\"%s\",id=\"%s\"} %llu\n", name,
                              m->kind, m->id, (unsigned long long)atomic_load(&m->counters[c]));
    }
    for (int i = 0; i < PROFD_G_COUNT_; i++) {
        const char *name = exporter_gauges[i].name;
        profd_text_printf(&t, "# HELP profd_exporter_%s %s\n# TYPE profd_exporter_%s gauge\n",
                          name, exporter_gauges[i].help, name);
        for (struct profd_metrics *m = registry; m; m = m->next)
            if (!strcmp(m->kind, "exporter"))
                profd_text_printf(&t, "profd_exporter_%s{id=\"%s\"} %lld\n", name, m->id,
                                  (long long)atomic_load(&m->gauges[i]));
    }
    struct gauge **sorted = profd_xcalloc(ngauges + 1, sizeof(*sorted));
    size_t n = 0;
    for (size_t i = 0; i < nbuckets; i++)
        for (struct gauge *g = buckets[i]; g; g = g->next)
            sorted[n++] = g;
    qsort(sorted, n, sizeof(*sorted), gauge_order);
    for (size_t i = 0; i < n; i++) {
        const struct gauge *g = sorted[i];
        if (!i || strcmp(sorted[i - 1]->name, g->name) != 0)   /* first of its name */
            profd_text_printf(&t, "# HELP %s %s\n# TYPE %s gauge\n", g->name, g->help, g->name);
        profd_text_printf(&t, "%s{component=\"%s\"%s%s} %.17g\n", g->name, g->component,
                          *g->labels ? "," : "", g->labels,
                          g->source ? (double)atomic_load(g->source) : g->value);
    }
    free(sorted);
    pthread_mutex_unlock(&registry_lock);
    return t.s;
}

void profd_metrics_free_all(void)
{
    pthread_mutex_lock(&registry_lock);
    while (registry) {
        struct profd_metrics *next = registry->next;
        free(registry->id);
        free(registry);
        registry = next;
    }
    for (size_t i = 0; i < nbuckets; i++) {
        for (struct gauge *g = buckets[i], *next; g; g = next) {
            next = g->next;
            free(g);
        }
    }
    free(buckets);
    buckets = NULL;
    nbuckets = ngauges = 0;
    pthread_mutex_unlock(&registry_lock);
}
