// SPDX-License-Identifier: Apache-2.0
/*
 * processor downsample: fewer, smaller profiles.
 * - `window`: the profiles of one series (the same labels, period type and
 *   kept sample types) that arrive within one window, windows aligned to
 *   the wall clock, become one profile, merged as pprof merges profiles
 *   (merge.h). At the end of a window its profiles go on, on this
 *   processor's own thread, where an emit waits for room as the full
 *   policy says. A window holds each series' merged profile, not its
 *   inputs; their acks (a pprof_file receiver deleting its files) wait for
 *   the merged profile's, and fail when it fails. 0: no merging, each
 *   profile goes on at once, cut as below.
 * - `sample_types`: the sample types kept (by type name); a profile with
 *   none of them is dropped, and samples left with no value are removed.
 * - `max_stack_depth`: stacks cut to that many frames, those nearest the
 *   leaf kept.
 * - `snapshot_sample_types`: the types that say what was in use at an
 *   instant (inuse_space, goroutine): a window holds their average, not
 *   the sum that would count the same memory once per profile.
 * At shutdown the open window goes on at once; what no queue takes then is
 * dropped and counted, its inputs' acks failed.
 */
#include <event2/event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../lib/clock.h"
#include "../../lib/grow.h"
#include "../../lib/hash.h"
#include "../../lib/key_map.h"
#include "../../lib/tick.h"
#include "merge.h"
#include "profd/plugin.h"

struct config {
    int64_t window;
    struct profd_str_list sample_types;
    int64_t max_stack_depth;
    struct profd_str_list snapshot_sample_types;
};

static const struct profd_option options[] = {
    {"window", PROFD_OPT_DURATION, offsetof(struct config, window), "1m",
     "profiles of one series within this window (aligned to the clock) become one; 0s: none"},
    {"sample_types", PROFD_OPT_STRING_LIST, offsetof(struct config, sample_types), NULL,
     "sample types kept, by type name (cpu, alloc_space, ...); empty: all"},
    {"max_stack_depth", PROFD_OPT_INT, offsetof(struct config, max_stack_depth), "0",
     "stacks cut to this many frames, those nearest the leaf kept; 0: whole"},
    {"snapshot_sample_types", PROFD_OPT_STRING_LIST,
     offsetof(struct config, snapshot_sample_types), "[inuse_space, inuse_objects, goroutine]",
     "sample types that say what was in use at an instant: a window holds their average over "
     "its profiles, not their sum; []: every type summed, as pprof merges"},
    {0},
};

/* A series' key as it is written: each piece its length, then its bytes,
 * so that no two series share one whatever bytes their strings hold. */
struct key {
    char *bytes;
    size_t len, cap;
};

/* One series' profiles in the open window. */
struct series {
    struct key key;   /* its labels, period type and kept types */
    struct profd_labels labels;
    struct merged merged;
    size_t records;
};

/* The profiles of a window: merged by series, and holds on the inputs'
 * acks, which wait for them. */
struct window {
    int64_t end;   /* wall clock, ns */
    struct series *series;
    size_t nseries, series_cap;
    struct key_map by_key;   /* hash of a series' key -> its index */
    struct profd_ack **held;
    size_t nheld, held_cap;
};

struct state {
    const struct profd_host *host;
    struct profd_component *self;
    const struct config *cfg;
    pthread_mutex_t mu;     /* open, ready, flushing */
    struct window open;
    struct profd_batch **ready;   /* ended windows' profiles, not yet taken downstream */
    size_t nready, ready_cap;
    bool flushing;          /* a flush job is on the processor's thread */
    bool stopped;           /* shut down: nothing more is merged */
    struct event *tick;
};

static int validate(const struct profd_host *host, struct profd_diag *d, const void *cfgp)
{
    const struct config *cfg = cfgp;
    if (cfg->max_stack_depth < 0 || cfg->max_stack_depth > UINT32_MAX)
        host->diag(d, &cfg->max_stack_depth, "max_stack_depth must be 0 or a frame count");
    return PROFD_OK;
}

/* The indices of p's sample types the config keeps, into types (room for
 * p->nsample_types); how many. */
static uint32_t kept_types(const struct config *cfg, const struct profd_profile *p,
                           uint32_t *types)
{
    uint32_t n = 0;
    for (uint32_t t = 0; t < p->nsample_types; t++) {
        const struct profd_str *name = &p->strings[p->sample_types[t].type];
        bool keep = cfg->sample_types.n == 0;
        for (size_t k = 0; k < cfg->sample_types.n && !keep; k++)
            keep = strlen(cfg->sample_types.items[k]) == name->len &&
                   !memcmp(cfg->sample_types.items[k], name->ptr, name->len);
        if (keep)
            types[n++] = t;
    }
    return n;
}

/* Cuts p in place: the kept types, samples with a value left, stacks at
 * most max_depth deep. Whether that changed it. */
static bool cut_in_place(struct profd_profile *p, const struct merge_cut *cut)
{
    bool all_types = cut->ntypes == p->nsample_types, cut_stacks = false;
    size_t kept = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        struct profd_sample s = p->samples[i];
        bool any = all_types;
        for (uint32_t t = 0; t < cut->ntypes; t++)
            any |= (s.values[t] = s.values[cut->types[t]]) != 0;
        if (!any)
            continue;
        if (cut->max_depth && s.nlocations > cut->max_depth) {
            s.nlocations = cut->max_depth;
            cut_stacks = true;
        }
        p->samples[kept++] = s;
    }
    bool changed = !all_types || cut_stacks || kept != p->nsamples;
    p->nsamples = kept;
    for (uint32_t t = 0; t < cut->ntypes; t++)
        p->sample_types[t] = p->sample_types[cut->types[t]];
    p->nsample_types = cut->ntypes;
    return changed;
}

static void key_append(struct key *k, const char *s, size_t n)
{
    uint32_t n32 = (uint32_t)n;
    k->bytes = grow_array(k->bytes, &k->cap, k->len + sizeof(n32) + n, 1);
    memcpy(k->bytes + k->len, &n32, sizeof(n32));
    memcpy(k->bytes + k->len + sizeof(n32), s, n);
    k->len += sizeof(n32) + n;
}

static void key_append_string(struct key *k, const struct profd_profile *p, uint32_t i)
{
    key_append(k, p->strings[i].ptr, p->strings[i].len);
}

/* The key of r's series with p's kept types: labels, period type, types. */
static struct key series_key(const struct profd_record *r, const struct profd_profile *p,
                             const struct merge_cut *cut)
{
    struct key k = {0};
    for (size_t i = 0; i < r->labels.n; i++) {
        key_append(&k, r->labels.items[i].name, strlen(r->labels.items[i].name));
        key_append(&k, r->labels.items[i].value, strlen(r->labels.items[i].value));
    }
    key_append_string(&k, p, p->period_type.type);
    key_append_string(&k, p, p->period_type.unit);
    for (uint32_t t = 0; t < cut->ntypes; t++) {
        key_append_string(&k, p, p->sample_types[cut->types[t]].type);
        key_append_string(&k, p, p->sample_types[cut->types[t]].unit);
    }
    return k;
}

static bool same_key(const struct key *a, const struct key *b)
{
    return a->len == b->len && !memcmp(a->bytes, b->bytes, a->len);
}

/* The series of w that key names (taken over), made with r's labels when
 * new. */
static struct series *series_for(struct state *s, struct window *w, struct key key,
                                 const struct profd_record *r)
{
    uint64_t h = hash_bytes(key.bytes, key.len);
    uint32_t idx;
    struct series *found = NULL;
    if (key_map_get(&w->by_key, h, &idx)) {   /* the map holds the latest of a hash */
        found = same_key(&w->series[idx].key, &key) ? &w->series[idx] : NULL;
        for (size_t i = 0; !found && i < w->nseries; i++)   /* keys whose hashes collide */
            if (same_key(&w->series[i].key, &key))
                found = &w->series[i];
    }
    if (found) {
        free(key.bytes);
        return found;
    }
    w->series = grow_array(w->series, &w->series_cap, w->nseries + 1, sizeof(*w->series));
    struct series *se = &w->series[w->nseries];
    *se = (struct series){.key = key};
    s->host->labels_copy(&se->labels, &r->labels);
    merged_init(&se->merged, s->host);
    key_map_put(&w->by_key, h, (uint32_t)w->nseries++);
    return se;
}

/* Frees what w holds but its holds on acks, and leaves it empty. */
static void window_clear(struct state *s, struct window *w)
{
    for (size_t i = 0; i < w->nseries; i++) {
        merged_free(&w->series[i].merged);
        s->host->labels_clear(&w->series[i].labels);
        free(w->series[i].key.bytes);
    }
    free(w->series);
    key_map_free(&w->by_key);
    free(w->held);
    *w = (struct window){0};
}

/* What a merged batch's ack lets go of: the holds on its inputs' acks. */
struct held_acks {
    const struct profd_host *host;
    struct profd_ack **acks;
    size_t n;
};

static void let_go_of_inputs(void *arg, bool ok)
{
    struct held_acks *h = arg;
    for (size_t i = 0; i < h->n; i++)
        h->host->ack_let_go(h->acks[i], ok);
    free(h->acks);
    free(h);
}

/* A closed window as a batch: a record per series, its merged profile
 * with the series' labels, and the holds on the inputs' acks tied to it.
 * Empties w. */
static struct profd_batch *window_batch(struct state *s, struct window *w)
{
    const struct profd_host *host = s->host;
    struct profd_batch *b = host->batch_new();
    for (size_t i = 0; i < w->nseries; i++) {
        struct series *se = &w->series[i];
        struct profd_profile *p = merged_take(&se->merged, &s->cfg->snapshot_sample_types);
        if (!p)
            continue;
        struct profd_record *r = host->record_add_profile(b, p);
        for (size_t k = 0; k < se->labels.n; k++)
            host->record_set_label(r, se->labels.items[k].name, se->labels.items[k].value);
        r->time_nanos = p->time_nanos;
        r->duration_nanos = p->duration_nanos;
    }
    if (w->nheld) {
        struct held_acks *h = must_malloc(sizeof(*h));
        *h = (struct held_acks){host, w->held, w->nheld};
        w->held = NULL;
        w->nheld = 0;
        host->batch_set_ack(b, let_go_of_inputs, h);
    }
    window_clear(s, w);
    return b;
}

/* Ends the open window (mu held): its batch joins those ready to go on. */
static void close_window(struct state *s)
{
    if (!s->open.nseries && !s->open.nheld)
        return;
    s->ready = grow_array(s->ready, &s->ready_cap, s->nready + 1, sizeof(*s->ready));
    s->ready[s->nready++] = window_batch(s, &s->open);
}

/* Ends the open window when now is past its end (mu held). */
static void close_window_if_ended(struct state *s, int64_t now)
{
    if (s->open.end && now >= s->open.end)
        close_window(s);
}

/* Emits the ready batches in order. One no queue takes stays first in line
 * for the next try, unless give_up: then it is dropped and counted, its
 * inputs' acks failed. */
static void flush_ready(struct state *s, bool give_up)
{
    for (;;) {
        pthread_mutex_lock(&s->mu);
        struct profd_batch *b = s->nready ? s->ready[0] : NULL;
        pthread_mutex_unlock(&s->mu);
        if (!b)
            return;
        int rc = b->nrecords ? s->host->emit(s->self, b) : PROFD_OK;
        if (rc == PROFD_ERETRY && !give_up)
            return;
        if (rc != PROFD_OK) {
            s->host->batch_fail_acks(b);
            s->host->count(s->self, PROFD_C_DROPPED_RECORDS, b->nrecords);
            s->host->log(s->self, PROFD_LOG_WARN, "dropped %zu merged profile(s): %s",
                         b->nrecords, rc == PROFD_ERETRY ? "no room downstream at shutdown"
                                                         : "refused downstream");
        }
        pthread_mutex_lock(&s->mu);
        memmove(s->ready, s->ready + 1, --s->nready * sizeof(*s->ready));
        pthread_mutex_unlock(&s->mu);
        s->host->batch_unref(b);
    }
}

static void flush_job(void *arg)
{
    flush_ready(arg, false);
}

static void flush_done(void *arg)
{
    struct state *s = arg;
    pthread_mutex_lock(&s->mu);
    s->flushing = false;
    pthread_mutex_unlock(&s->mu);
}

/* On the loop's thread: ends the open window when its time is up, and has
 * the ready batches taken downstream on the processor's own thread. */
static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct state *s = arg;
    pthread_mutex_lock(&s->mu);
    close_window_if_ended(s, realtime_ns());
    bool go = s->nready && !s->flushing;
    s->flushing |= go;
    pthread_mutex_unlock(&s->mu);
    if (go)
        s->host->run_aside(s->self, flush_job, flush_done, s);
}

/* Adds r, cut as cut says, to its series in the open window, which holds
 * r's ack (mu held). */
static void merge_record(struct state *s, struct profd_record *r, const struct profd_profile *p,
                         const struct merge_cut *cut)
{
    int64_t now = realtime_ns();
    close_window_if_ended(s, now);
    if (!s->open.end)
        s->open.end = (now / s->cfg->window + 1) * s->cfg->window;
    struct series *se = series_for(s, &s->open, series_key(r, p, cut), r);
    merged_add(&se->merged, p, cut);
    struct profd_ack *ack = s->host->ack_hold(r);
    if (ack) {
        s->open.held = grow_array(s->open.held, &s->open.held_cap, s->open.nheld + 1,
                                  sizeof(*s->open.held));
        s->open.held[s->open.nheld++] = ack;
    }
}

static int consume(void *st, struct profd_batch *b)
{
    struct state *s = st;
    const struct profd_host *host = s->host;
    uint32_t *types = NULL;
    size_t types_cap = 0;
    pthread_mutex_lock(&s->mu);
    bool merging = s->cfg->window > 0 && !s->stopped;
    if (!merging)
        pthread_mutex_unlock(&s->mu);
    if (!merging && !s->cfg->sample_types.n && !s->cfg->max_stack_depth)
        return host->emit(s->self, b);   /* nothing to do: not even a decode */
    for (size_t i = 0; i < b->nrecords;) {
        struct profd_record *r = b->records[i];
        char why[256];
        struct profd_profile *p = host->record_profile(r, why, sizeof(why));
        types = p ? grow_array(types, &types_cap, p->nsample_types + 1, sizeof(*types)) : types;
        struct merge_cut cut = {types, p ? kept_types(s->cfg, p, types) : 0,
                                (uint32_t)s->cfg->max_stack_depth};
        if (!p || !cut.ntypes) {
            host->log(s->self, p ? PROFD_LOG_DEBUG : PROFD_LOG_WARN, "dropped a record: %s",
                      p ? "none of its sample types is kept" : why);
            host->batch_remove(b, i);
            host->count(s->self, PROFD_C_DROPPED_RECORDS, 1);
            continue;
        }
        if (merging)
            merge_record(s, r, p, &cut);
        else if (cut_in_place(p, &cut))
            host->record_touch(r);
        i++;
    }
    free(types);
    if (!merging)
        return b->nrecords ? host->emit(s->self, b) : PROFD_OK;
    pthread_mutex_unlock(&s->mu);
    return PROFD_OK;
}

static int create(const struct profd_host *host, struct profd_component *self, const void *cfg,
                  void **out)
{
    struct state *s = calloc(1, sizeof(*s));
    if (!s)
        return PROFD_ERR;
    *s = (struct state){.host = host, .self = self, .cfg = cfg};
    pthread_mutex_init(&s->mu, NULL);
    *out = s;
    return PROFD_OK;
}

static int start(void *st)
{
    struct state *s = st;
    if (s->cfg->window <= 0)
        return PROFD_OK;
    int64_t every = s->cfg->window / 8;   /* a window ends at most an eighth late */
    every = every < 10000000 ? 10000000 : every > 1000000000 ? 1000000000 : every;
    if (!(s->tick = tick_start(s->host, s->self, every, on_tick, s)))
        return PROFD_ERR;
    return PROFD_OK;
}

/* The open window and every ready batch go on now; what no queue takes is
 * dropped and counted. Later profiles pass through, cut but not merged. */
static int stop(void *st)
{
    struct state *s = st;
    tick_stop(&s->tick);
    pthread_mutex_lock(&s->mu);
    s->stopped = true;
    close_window(s);
    pthread_mutex_unlock(&s->mu);
    flush_ready(s, true);
    return PROFD_OK;
}

static void destroy(void *st)
{
    struct state *s = st;
    if (!s)
        return;
    for (size_t i = 0; i < s->nready; i++)
        s->host->batch_unref(s->ready[i]);
    free(s->ready);
    for (size_t i = 0; i < s->open.nheld; i++)
        s->host->ack_let_go(s->open.held[i], false);
    window_clear(s, &s->open);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static const struct profd_plugin plugin = {
    PROFD_PLUGIN_HEADER,
    .kind = PROFD_PROCESSOR,
    .type = "downsample",
    .description = "merges the profiles of a series over a window, keeps chosen sample types, "
                   "cuts deep stacks",
    .options = options,
    .config_size = sizeof(struct config),
    .flags = PROFD_PLUGIN_MUTATES | PROFD_PLUGIN_CONCURRENT,
    .validate = validate,
    .create = create,
    .start = start,
    .consume = consume,
    .shutdown = stop,
    .destroy = destroy,
};

PROFD_PLUGIN_DEFINE(plugin)
