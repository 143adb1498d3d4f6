// SPDX-License-Identifier: Apache-2.0
/*
 * YAML documents as a tree of nodes that remember where they were written.
 * Scalars have ${env:VAR} and ${env:VAR:-default} expanded at load.
 */
#ifndef PROFD_TREE_H
#define PROFD_TREE_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"

enum cfg_kind { CFG_NULL, CFG_SCALAR, CFG_MAP, CFG_SEQ };

struct cfg_node {
    enum cfg_kind kind;
    const char *file;           /* shared by every node of a document */
    int line, col;              /* 1-based */
    char *value;                /* CFG_SCALAR */
    size_t n;                   /* CFG_MAP pairs, CFG_SEQ items */
    struct cfg_node **keys;     /* CFG_MAP: scalar key nodes */
    struct cfg_node **items;    /* CFG_MAP values, CFG_SEQ items */
};

/* Parses a YAML file or string into a tree. NULL with a diag on error; an
 * empty document gives a CFG_NULL root. name labels string documents. */
struct cfg_node *cfg_load_file(const char *path, struct profd_diag *d);
struct cfg_node *cfg_load_string(const char *name, const char *text, struct profd_diag *d);
/* Frees a tree returned by cfg_load_*. */
void cfg_free(struct cfg_node *root);
/* The value under key in a map, or NULL. */
const struct cfg_node *cfg_get(const struct cfg_node *map, const char *key);
/* Expands ${env:...} references in s into a new malloc'd string; NULL with
 * *err set on a malformed reference. */
char *cfg_expand_env(const char *s, const char **err);
/* "map", "list", "scalar" or "null". */
const char *cfg_kind_name(enum cfg_kind k);

#endif
