// SPDX-License-Identifier: Apache-2.0
/*
 * The top level of a profd config: components by kind, pipelines, and the
 * daemon's own settings. Module options are bound later, by the graph, once
 * the modules are loaded.
 */
#ifndef PROFD_SERVICE_H
#define PROFD_SERVICE_H

#include "profd/plugin.h"
#include "tree.h"

struct profd_component_cfg {
    char *id;                       /* "type" or "type/name" */
    char *type;
    enum profd_kind kind;
    const struct cfg_node *key;     /* where the id was written */
    const struct cfg_node *node;    /* its options */
    bool used;
};

struct profd_pipeline_cfg {
    char *id;
    const struct cfg_node *key;
    size_t nstages[4];                        /* indexed by enum profd_kind */
    struct profd_component_cfg **stages[4];   /* receivers, processors, exporters */
};

struct profd_config {
    struct cfg_node *root;
    struct profd_component_cfg *components;
    size_t ncomponents, components_cap;
    struct profd_pipeline_cfg *pipelines;
    size_t npipelines;
    char *telemetry_address;        /* "host:port", or NULL to disable */
    int log_level;                  /* enum profd_log_level */
};

/* The config profd runs when given none: watch ./spool, write ./profiles. */
extern const char profd_default_config[];

/*
 * Reads the service structure of a loaded tree (taking ownership of root).
 * Every problem goes to d; the config is returned even then, holding what
 * could be read, so that module options can still be checked and every
 * error reported in one run. Callers must check d->n before using it.
 */
struct profd_config *profd_config_parse(struct cfg_node *root, struct profd_diag *d);
void profd_config_free(struct profd_config *c);
/* "receivers", "processors" or "exporters". */
const char *profd_kind_section(enum profd_kind k);
/* "receiver", "processor" or "exporter". */
const char *profd_kind_name(enum profd_kind k);

#endif
