// SPDX-License-Identifier: Apache-2.0
/*
 * The pipeline graph: one instance per receiver and exporter id (shared by
 * every pipeline naming it), one processor instance per pipeline and id, as in
 * the OpenTelemetry Collector. Started exporters first, shut down receivers
 * first, so nothing in flight is lost.
 */
#ifndef PROFD_GRAPH_H
#define PROFD_GRAPH_H

#include <pthread.h>
#include <stdbool.h>

#include "../config/service.h"
#include "exporter.h"
#include "loader.h"
#include "metrics.h"

struct profd_server;

struct profd_component {
    char *id;
    enum profd_kind kind;
    const struct profd_plugin *plugin;
    void *cfg;                         /* bound options, plugin->config_size bytes */
    void *state;
    struct profd_graph *graph;
    struct profd_metrics *metrics;
    struct profd_component **next;     /* downstream components */
    size_t nnext, next_cap;
    struct profd_exporter_settings xs; /* exporters */
    struct profd_queue *queue;         /* exporters */
    /* Processors: one consume at a time, whichever thread emits (the event
     * loop, or a server's worker with a large request). */
    pthread_mutex_t consume_lock;
    bool created, started, done;
    struct profd_work_pool *aside;     /* receivers: their own thread (aside.h) */
    struct profd_server *servers;      /* receivers: those listening for them (rpc_server.c) */
    bool slow_downstream;              /* a PROFD_PLUGIN_SLOW processor is downstream */
    bool fans_out;                     /* exporters are downstream along two or more paths */
    bool aside_stopped;
};

struct profd_graph {
    struct profd_component **nodes;    /* exporters, then processors, then receivers */
    size_t n, cap;
    struct event_base *base;
    struct profd_serve_loops *serve_loops;   /* servers' loops beside base's (the
                                                daemon's); NULL: base's alone */
    size_t receivers_running;          /* one-shot receivers not yet done */
    void (*on_all_done)(void *arg);    /* when every receiver called done() */
    void *on_all_done_arg;
};

/*
 * Loads the modules a config names, binds and validates every component's
 * options (pure: no I/O), and wires the graph. Problems go to d, with their
 * location. NULL when any was found.
 */
struct profd_graph *profd_graph_prepare(const struct profd_config *c, struct profd_loader *l,
                                        struct profd_diag *d);
/* Creates every component. 0, or -1 with the reason logged. */
int profd_graph_create(struct profd_graph *g, struct event_base *base);
/* Starts exporters, processors, then receivers; on failure shuts down what
 * started and returns -1. Main thread. */
int profd_graph_start(struct profd_graph *g);
/* Stops exporters' queues waiting for room (profd_queue_stop_waits), shuts
 * down receivers, processors, then drains and shuts down exporters.
 * Idempotent. Main thread. */
void profd_graph_shutdown(struct profd_graph *g);
/* Destroys every component and frees the graph. Accepts NULL. */
void profd_graph_destroy(struct profd_graph *g);

/* Hands b from component self to its downstream components (host->emit).
 * A receiver's emit that fans out is queued by every exporter it reaches
 * or by none (profd_queue_push_all), so a retry after PROFD_ERETRY
 * duplicates nothing in the branches that had room. */
int profd_graph_emit(struct profd_component *self, struct profd_batch *b);
/* True when a batch of about bytes emitted by self now would wait for room
 * in the queue of an exporter downstream (profd_queue_would_wait): a hint
 * for serving a request where waiting stalls no one else. Any thread. */
bool profd_graph_congested(const struct profd_component *self, size_t bytes);
/* True when a processor downstream of self declares PROFD_PLUGIN_SLOW, or
 * an exporter downstream syncs the files it keeps its queue in
 * (sending_queue.storage_fsync):
 * a server's event loop hands self's requests to workers. Any thread. */
bool profd_graph_slow(const struct profd_component *self);
/* A receiver finished its input (host->done). */
void profd_graph_receiver_done(struct profd_component *self);

/* The host services table given to every module. */
extern const struct profd_host profd_host_services;

#endif
