// SPDX-License-Identifier: Apache-2.0
/*
 * The daemon's status: what it runs and how each part is doing, for a
 * person (an HTML page) or a program (JSON). The pipelines as the config
 * draws them, and every component with its kind, type, state, the
 * components it hands records to, its counters and, for an exporter, its
 * queue. Read on the main loop's thread, where the graph is replaced.
 */
#ifndef PROFD_STATUS_H
#define PROFD_STATUS_H

#include <stdint.h>

#include "../config/service.h"
#include "graph.h"

/* What the status is made of; graph may be NULL (none running). */
struct profd_status_source {
    const struct profd_config *config;
    const struct profd_graph *graph;
    const char *config_file;        /* NULL: the default config */
    int64_t started_unix;           /* when the daemon started, seconds */
    unsigned long reloads_ok, reloads_failed;
};

/* The status as a JSON object, malloc'd. */
char *profd_status_json(const struct profd_status_source *s);

/* The status as an HTML page (no script), malloc'd. */
char *profd_status_html(const struct profd_status_source *s);

#endif
