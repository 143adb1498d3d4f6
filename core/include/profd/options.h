// SPDX-License-Identifier: Apache-2.0
/*
 * Option tables: how a module declares its configuration. The daemon binds
 * YAML into the module's config struct from this table, applies defaults,
 * reports type errors with file:line:col, and documents the module in
 * `profd components`.
 */
#ifndef PROFD_OPTIONS_H
#define PROFD_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

enum profd_opt_type {
    PROFD_OPT_END = 0,
    PROFD_OPT_STRING,        /* char *  (NULL when unset without default) */
    PROFD_OPT_INT,           /* int64_t */
    PROFD_OPT_BOOL,          /* bool */
    PROFD_OPT_DURATION,      /* int64_t nanoseconds: "15s", "1m30s", "250ms" */
    PROFD_OPT_SIZE,          /* uint64_t bytes: "64MiB", "10MB", "4096" */
    PROFD_OPT_ENUM,          /* int: index into choices */
    PROFD_OPT_STRING_LIST,   /* struct profd_str_list */
    PROFD_OPT_STRING_MAP,    /* struct profd_str_map */
    PROFD_OPT_OBJECT,        /* nested struct at offset, fields in children */
    PROFD_OPT_OBJECT_LIST,   /* struct profd_obj_list of elem_size structs */
    PROFD_OPT_RELABEL,       /* struct profd_relabel *: Prometheus relabel rules, compiled
                              * at config time; apply with host->relabel */
    PROFD_OPT_MAP,           /* struct profd_map: names to values of elem_size bytes, each
                              * bound by children[0] (its offset 0; its name, say
                              * "<name>", stands for the key in documentation) */
};

struct profd_str_list {
    size_t n;
    char **items;
};

struct profd_str_map {
    size_t n;
    char **keys, **values;   /* in the order written */
};

struct profd_map {
    size_t n;
    char **keys;             /* in the order written */
    void *values;            /* n values of the option's elem_size bytes */
};

struct profd_obj_list {
    size_t n;
    void *items;             /* n structs of the option's elem_size bytes */
};

struct profd_option {
    const char *name;
    enum profd_opt_type type;
    size_t offset;                         /* where the value lands */
    const char *default_value;             /* as it would be written in YAML, or NULL */
    const char *help;                      /* one line */
    const struct profd_option *children;   /* OBJECT, OBJECT_LIST, MAP */
    size_t elem_size;                      /* OBJECT_LIST, MAP */
    const char *const *choices;            /* ENUM, NULL-terminated */
    int required;
};

#endif
