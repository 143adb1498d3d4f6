// SPDX-License-Identifier: Apache-2.0
/* Binding YAML nodes into config structs through option tables. */
#ifndef PROFD_BIND_H
#define PROFD_BIND_H

#include "profd/options.h"
#include "tree.h"

/* One option table and the struct its offsets point into. */
struct profd_bind_section {
    const struct profd_option *opts;
    void *base;
};

/*
 * Binds node (a map, or null for "all defaults") into the sections: every key
 * must belong to one of them. Options not given get their defaults. Problems
 * are added to d with their location, naming ctx (e.g. "exporters.debug").
 * Returns 0, or -1 when anything was wrong.
 */
int profd_bind(const struct profd_bind_section *sections, size_t nsections,
               const struct cfg_node *node, const char *ctx, struct profd_diag *d);
/* Frees what profd_bind allocated inside base (not base itself). */
void profd_unbind(const struct profd_option *opts, void *base);
/* "string", "duration", ... for documentation. */
const char *profd_opt_type_name(enum profd_opt_type t);

#endif
