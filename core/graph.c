// SPDX-License-Identifier: Apache-2.0
#include "graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../config/bind.h"
#include "alloc.h"
#include "aside.h"
#include "log.h"
#include "record.h"

static void link_next(struct profd_component *from, struct profd_component *to)
{
    for (size_t i = 0; i < from->nnext; i++)
        if (from->next[i] == to)
            return;
    profd_grow(&from->next, &from->next_cap, from->nnext + 1, sizeof(*from->next));
    from->next[from->nnext++] = to;
}

static void add_node(struct profd_graph *g, struct profd_component *c)
{
    profd_grow(&g->nodes, &g->cap, g->n + 1, sizeof(*g->nodes));
    g->nodes[g->n++] = c;
    c->graph = g;
}

/* Binds a component's options and runs its module's validate. Problems go to
 * d, or nowhere when d is NULL (a second instance of an already-checked id). */
static struct profd_component *prepare_component(const struct profd_component_cfg *cc,
                                                 struct profd_loader *l, struct profd_diag *d)
{
    char err[1024];
    const struct profd_plugin *p = profd_loader_get(l, cc->kind, cc->type, err, sizeof(err));
    if (!p) {
        if (d)
            profd_diag_add(d, cc->key, "%s", err);
        return NULL;
    }
    struct profd_diag scratch = {0};
    struct profd_diag *dd = d ? d : &scratch;
    size_t before = dd->n;
    struct profd_component *c = profd_xcalloc(1, sizeof(*c));
    pthread_mutex_init(&c->consume_lock, NULL);
    c->id = profd_xstrdup(cc->id);
    c->kind = cc->kind;
    c->plugin = p;
    c->cfg = profd_xcalloc(1, p->config_size ? p->config_size : 1);
    struct profd_bind_section sections[2] = {{p->options, c->cfg}, {profd_exporter_options, &c->xs}};
    char *ctx = profd_xasprintf("%s.%s", profd_kind_section(cc->kind), cc->id);
    profd_bind(sections, cc->kind == PROFD_EXPORTER ? 2 : 1, cc->node, ctx, dd);
    free(ctx);
    if (dd->n == before && p->validate) {
        dd->context = cc->key;
        p->validate(&profd_host_services, dd, c->cfg);
        dd->context = NULL;
    }
    profd_diag_forget_origins(dd);
    bool ok = dd->n == before;
    profd_diag_free(&scratch);
    if (!ok) {
        profd_unbind(p->options, c->cfg);
        profd_unbind(profd_exporter_options, &c->xs);
        pthread_mutex_destroy(&c->consume_lock);
        free(c->cfg);
        free(c->id);
        free(c);
        return NULL;
    }
    c->metrics = profd_metrics_get(c->id, profd_kind_name(c->kind));
    return c;
}

struct profd_graph *profd_graph_prepare(const struct profd_config *cfg, struct profd_loader *l,
                                        struct profd_diag *d)
{
    size_t before = d->n;
    struct profd_graph *g = profd_xcalloc(1, sizeof(*g));
    /* Shared receivers and exporters, one instance per id, in config order. */
    struct profd_component **shared = profd_xcalloc(cfg->ncomponents, sizeof(*shared));
    for (size_t i = 0; i < cfg->ncomponents; i++) {
        const struct profd_component_cfg *cc = &cfg->components[i];
        if (cc->kind != PROFD_PROCESSOR)
            shared[i] = prepare_component(cc, l, d);
    }
    for (size_t i = 0; i < cfg->ncomponents; i++)
        if (shared[i] && shared[i]->kind == PROFD_EXPORTER)
            add_node(g, shared[i]);
    for (size_t pi = 0; pi < cfg->npipelines; pi++) {
        const struct profd_pipeline_cfg *pl = &cfg->pipelines[pi];
        size_t nproc = pl->nstages[PROFD_PROCESSOR];
        struct profd_component **procs = profd_xcalloc(nproc ? nproc : 1, sizeof(*procs));
        for (size_t k = 0; k < nproc; k++) {
            const struct profd_component_cfg *cc = pl->stages[PROFD_PROCESSOR][k];
            bool first_use = true;
            for (size_t pj = 0; pj < pi && first_use; pj++)
                for (size_t m = 0; m < cfg->pipelines[pj].nstages[PROFD_PROCESSOR]; m++)
                    first_use &= cfg->pipelines[pj].stages[PROFD_PROCESSOR][m] != cc;
            procs[k] = prepare_component(cc, l, first_use ? d : NULL);
            if (procs[k])
                add_node(g, procs[k]);
        }
        /* Wire: receivers -> processors... -> exporters. */
        for (size_t k = 0; k + 1 < nproc; k++)
            if (procs[k] && procs[k + 1])
                link_next(procs[k], procs[k + 1]);
        for (size_t e = 0; e < pl->nstages[PROFD_EXPORTER]; e++) {
            struct profd_component *exp = shared[pl->stages[PROFD_EXPORTER][e] - cfg->components];
            if (!exp)
                continue;
            if (nproc && procs[nproc - 1])
                link_next(procs[nproc - 1], exp);
            for (size_t r = 0; !nproc && r < pl->nstages[PROFD_RECEIVER]; r++) {
                struct profd_component *rc = shared[pl->stages[PROFD_RECEIVER][r] - cfg->components];
                if (rc)
                    link_next(rc, exp);
            }
        }
        for (size_t r = 0; nproc && procs[0] && r < pl->nstages[PROFD_RECEIVER]; r++) {
            struct profd_component *rc = shared[pl->stages[PROFD_RECEIVER][r] - cfg->components];
            if (rc)
                link_next(rc, procs[0]);
        }
        free(procs);
    }
    for (size_t i = 0; i < cfg->ncomponents; i++)
        if (shared[i] && shared[i]->kind == PROFD_RECEIVER)
            add_node(g, shared[i]);
    /* An unused processor is already an error; still check its options. */
    for (size_t i = 0; i < cfg->ncomponents; i++) {
        struct profd_component *c = NULL;
        if (cfg->components[i].kind == PROFD_PROCESSOR && !cfg->components[i].used)
            c = prepare_component(&cfg->components[i], l, d);
        if (c)
            add_node(g, c);
    }
    /* Components that failed to prepare were never added: free the others. */
    free(shared);
    if (d->n > before) {
        profd_graph_destroy(g);
        return NULL;
    }
    return g;
}

int profd_graph_create(struct profd_graph *g, struct event_base *base)
{
    g->base = base;
    for (size_t i = 0; i < g->n; i++) {
        struct profd_component *c = g->nodes[i];
        if (c->plugin->create(&profd_host_services, c, c->cfg, &c->state) != PROFD_OK) {
            profd_log(PROFD_LOG_ERROR, c->id, "create failed");
            return -1;
        }
        c->created = true;
        if (c->kind == PROFD_EXPORTER)
            c->queue = profd_queue_create(c, &c->xs);
    }
    return 0;
}

/* Whether c waits on something slow before an emit through it returns:
 * a PROFD_PLUGIN_SLOW processor, or an exporter whose queue syncs the file
 * it writes each record to (sending_queue.storage_fsync), a disk flush.
 * Files not synced are not: written on the loop, one at a time, they cost
 * less than on workers, which contend for the directory (pushes into nop
 * through a stored queue on ext4: 18k/s on the loop, 11k/s on workers). */
static bool slow_itself(const struct profd_component *c)
{
    if (c->kind == PROFD_PROCESSOR)
        return c->plugin->flags & PROFD_PLUGIN_SLOW;
    const char *storage = c->xs.sending_queue.storage;
    return c->kind == PROFD_EXPORTER && storage && *storage &&
           c->xs.sending_queue.storage_fsync;
}

/* Whether something slow (slow_itself) is downstream of c. */
static bool slow_below(const struct profd_component *c)
{
    for (size_t i = 0; i < c->nnext; i++)
        if (slow_itself(c->next[i]) || slow_below(c->next[i]))
            return true;
    return false;
}

bool profd_graph_slow(const struct profd_component *self)
{
    return self->slow_downstream;
}

/* The paths from c down to exporters, counted up to 2. */
static size_t exporter_paths(const struct profd_component *c)
{
    if (c->kind == PROFD_EXPORTER)
        return 1;
    size_t n = 0;
    for (size_t i = 0; i < c->nnext && n < 2; i++)
        n += exporter_paths(c->next[i]);
    return n;
}

int profd_graph_start(struct profd_graph *g)
{
    g->receivers_running = 0;
    for (size_t i = 0; i < g->n; i++) {
        g->nodes[i]->slow_downstream = slow_below(g->nodes[i]);
        g->nodes[i]->fans_out = exporter_paths(g->nodes[i]) > 1;
    }
    for (size_t i = 0; i < g->n; i++)
        g->receivers_running += g->nodes[i]->kind == PROFD_RECEIVER;
    for (size_t i = 0; i < g->n; i++) {
        struct profd_component *c = g->nodes[i];
        int rc = c->plugin->start ? c->plugin->start(c->state) : PROFD_OK;
        if (rc == PROFD_OK && c->queue)
            rc = profd_queue_start(c->queue) == 0 ? PROFD_OK : PROFD_ERR;
        c->started = true;   /* shutdown must run even after a failed start */
        if (rc != PROFD_OK) {
            profd_log(PROFD_LOG_ERROR, c->id, "start failed");
            profd_graph_shutdown(g);
            return -1;
        }
    }
    return 0;
}

void profd_graph_shutdown(struct profd_graph *g)
{
    /* Requests waiting for room (on servers' workers) are answered first,
     * so that stopping the receivers does not wait out block_timeout. */
    for (size_t i = 0; i < g->n; i++)
        if (g->nodes[i]->started && g->nodes[i]->queue)
            profd_queue_stop_waits(g->nodes[i]->queue);
    for (size_t i = g->n; i-- > 0;) {
        struct profd_component *c = g->nodes[i];
        if (!c->started)
            continue;
        profd_aside_stop(c);   /* its jobs finish while it is whole */
        if (c->queue)
            profd_queue_drain(c->queue);
        if (c->plugin->shutdown)
            c->plugin->shutdown(c->state);
        c->started = false;
    }
}

void profd_graph_destroy(struct profd_graph *g)
{
    if (!g)
        return;
    profd_graph_shutdown(g);
    for (size_t i = 0; i < g->n; i++) {
        struct profd_component *c = g->nodes[i];
        profd_queue_destroy(c->queue);
        if (c->created)
            c->plugin->destroy(c->state);
        profd_unbind(c->plugin->options, c->cfg);
        profd_unbind(profd_exporter_options, &c->xs);   /* zeroed for other kinds */
        pthread_mutex_destroy(&c->consume_lock);
        free(c->cfg);
        free(c->next);
        free(c->id);
        free(c);
    }
    free(g->nodes);
    free(g);
}

/* What the receiver's emit this thread is in, when that emit fans out,
 * does at its end: the exporters' pushes, made together
 * (profd_queue_push_all), and, when they are made, the processors'
 * counts of what they took in. */
struct staged_count {
    struct profd_metrics *metrics;
    size_t records, bytes;
};
struct staged_emit {
    struct profd_push *pushes;
    size_t npushes, pushes_cap;
    struct staged_count *counts;
    size_t ncounts, counts_cap;
};
static _Thread_local struct staged_emit *staged;

static void stage_push(struct profd_queue *q, struct profd_batch *b)
{
    profd_grow(&staged->pushes, &staged->pushes_cap, staged->npushes + 1,
               sizeof(*staged->pushes));
    profd_batch_ref(b);
    staged->pushes[staged->npushes++] = (struct profd_push){q, b};
}

/* Counts what processor c took in: now, or when the staged emit's pushes
 * are made. */
static void count_in(struct profd_component *c, size_t records, size_t bytes)
{
    if (!staged) {
        profd_metrics_count_in(c->metrics, records, bytes);
        return;
    }
    profd_grow(&staged->counts, &staged->counts_cap, staged->ncounts + 1,
               sizeof(*staged->counts));
    staged->counts[staged->ncounts++] = (struct staged_count){c->metrics, records, bytes};
}

/* Hands b to c: an exporter's queue (staged, in a fanning-out emit), or a
 * processor's consume. An exporter's queue counts what it takes in. */
static int consume_at(struct profd_component *c, struct profd_batch *b)
{
    if (c->kind == PROFD_EXPORTER && staged) {
        stage_push(c->queue, b);
        return PROFD_OK;
    }
    if (c->kind == PROFD_EXPORTER)
        return profd_queue_push(c->queue, b);
    size_t records = b->nrecords, bytes = profd_batch_bytes(b);
    bool alone = !(c->plugin->flags & PROFD_PLUGIN_CONCURRENT);
    if (alone)
        pthread_mutex_lock(&c->consume_lock);
    int rc = c->plugin->consume(c->state, b);
    if (alone)
        pthread_mutex_unlock(&c->consume_lock);
    if (rc != PROFD_ERETRY)
        count_in(c, records, bytes);
    return rc;
}

static int emit_downstream(struct profd_component *self, struct profd_batch *b)
{
    int rc = PROFD_OK;
    for (size_t i = 0; i < self->nnext; i++) {
        struct profd_component *to = self->next[i];
        /* A component that mutates gets a private copy whenever anyone else
         * may still see the batch: a sibling branch, or an upstream holder. */
        bool copy = (to->plugin->flags & PROFD_PLUGIN_MUTATES) &&
                    (self->nnext > 1 || atomic_load(&b->refs) > 1);
        struct profd_batch *use = copy ? profd_batch_copy(b) : b;
        int r = consume_at(to, use);
        if (copy)
            profd_batch_unref(use);
        if (r != PROFD_OK)
            rc = r == PROFD_ERETRY && rc == PROFD_OK ? PROFD_ERETRY : r;
    }
    return rc;
}

/* A receiver's emit that fans out: every branch runs, the exporters'
 * pushes are staged, then made all or none. A branch that asked for a
 * retry (a processor's PROFD_ERETRY) makes none: the retry brings the
 * batch to every branch again. A branch's permanent error keeps the
 * others' pushes, as a plain emit does. */
static int emit_all_or_none(struct profd_component *self, struct profd_batch *b)
{
    struct staged_emit emit = {0};
    staged = &emit;
    int rc = emit_downstream(self, b);
    staged = NULL;
    if (rc != PROFD_ERETRY && emit.npushes) {
        int r = profd_queue_push_all(emit.pushes, emit.npushes);
        if (r != PROFD_OK)
            rc = r;
    }
    for (size_t i = 0; rc != PROFD_ERETRY && i < emit.ncounts; i++)
        profd_metrics_count_in(emit.counts[i].metrics, emit.counts[i].records,
                               emit.counts[i].bytes);
    for (size_t i = 0; i < emit.npushes; i++)
        profd_batch_unref(emit.pushes[i].batch);
    free(emit.pushes);
    free(emit.counts);
    return rc;
}

int profd_graph_emit(struct profd_component *self, struct profd_batch *b)
{
    if (self->kind != PROFD_RECEIVER)
        return emit_downstream(self, b);
    size_t records = b->nrecords, bytes = profd_batch_bytes(b);   /* before relabel drops any */
    int rc = self->fans_out && !staged ? emit_all_or_none(self, b) : emit_downstream(self, b);
    if (rc != PROFD_ERETRY)
        profd_metrics_count_in(self->metrics, records, bytes);
    return rc;
}

bool profd_graph_congested(const struct profd_component *self, size_t bytes)
{
    for (size_t i = 0; i < self->nnext; i++) {
        const struct profd_component *to = self->next[i];
        if (to->kind == PROFD_EXPORTER ? profd_queue_would_wait(to->queue, bytes)
                                       : profd_graph_congested(to, bytes))
            return true;
    }
    return false;
}

void profd_graph_receiver_done(struct profd_component *self)
{
    struct profd_graph *g = self->graph;
    if (self->done)
        return;
    self->done = true;
    if (g->receivers_running && --g->receivers_running == 0 && g->on_all_done)
        g->on_all_done(g->on_all_done_arg);
}
