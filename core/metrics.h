// SPDX-License-Identifier: Apache-2.0
/*
 * Per-component counters, kept in a process-wide registry by component id so
 * they survive config reloads, and rendered in Prometheus text format.
 */
#ifndef PROFD_METRICS_H
#define PROFD_METRICS_H

#include <stdatomic.h>
#include <stddef.h>

#include "profd/plugin.h"

/* An exporter's gauges: what its queue holds, and of it what is in files
 * (sending_queue.storage). */
enum profd_exporter_gauge {
    PROFD_G_QUEUE_BYTES,
    PROFD_G_QUEUE_RECORDS,
    PROFD_G_QUEUE_MEMORY_BYTES,
    PROFD_G_STORED_BYTES,
    PROFD_G_STORED_RECORDS,
    PROFD_G_COUNT_
};

struct profd_metrics {
    char *id;
    const char *kind;   /* "receiver", "processor", "exporter" */
    atomic_uint_fast64_t counters[PROFD_C_COUNT_];
    atomic_int_fast64_t gauges[PROFD_G_COUNT_];   /* exporters only */
    struct profd_metrics *next;
};

/* Returns the counters for id, creating them on first use. Thread-safe. */
struct profd_metrics *profd_metrics_get(const char *id, const char *kind);
/* Counts records and bytes a component took in (not those it refused or
 * told their sender to retry). Any thread. */
void profd_metrics_count_in(struct profd_metrics *m, size_t records, size_t bytes);
/* Sets a free-form gauge `name{component="<component>",labels} value` (labels
 * in Prometheus syntax, e.g. `job="a",instance="b"`, or ""), creating it on
 * first use; allocates only then. Thread-safe. */
void profd_metrics_gauge_set(const char *name, const char *help, const char *component,
                             const char *labels, double v);
/* The same gauge, its value read from source each time /metrics is
 * rendered (source must outlive it: profd_metrics_gauge_del it first).
 * Thread-safe. */
void profd_metrics_gauge_watch(const char *name, const char *help, const char *component,
                               const char *labels, const atomic_size_t *source);
/* Removes one gauge series; no-op when absent. Thread-safe. */
void profd_metrics_gauge_del(const char *name, const char *component, const char *labels);
/* The name counter c goes by in /metrics, between
 * profd_component_ and _total: "accepted_records" and the like. */
const char *profd_metrics_counter_name(enum profd_counter c);
/* The name exporter gauge g goes by in
 * /metrics after profd_exporter_: "queue_records" and the like. */
const char *profd_metrics_gauge_name(enum profd_exporter_gauge g);
/* Appends the whole registry in Prometheus text exposition format to a new
 * malloc'd string. */
char *profd_metrics_render(void);
/* Frees the registry (at exit, after every thread stopped). */
void profd_metrics_free_all(void);

#endif
