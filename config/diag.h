// SPDX-License-Identifier: Apache-2.0
/*
 * Diagnostics: configuration problems collected with their file:line:col so
 * that one run reports all of them.
 */
#ifndef PROFD_DIAG_H
#define PROFD_DIAG_H

#include <stddef.h>

struct cfg_node;

struct profd_diag {
    char **msgs;
    size_t n, cap;
    /* Which YAML node each bound config field came from, for module diags. */
    struct diag_origin *origins;
    size_t norigins, origins_cap;
    /* Where a problem with a field that has no origin is reported. */
    const struct cfg_node *context;
};

/* Adds "file:line:col: message" (or just the message when at is NULL). */
void profd_diag_add(struct profd_diag *d, const struct cfg_node *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Remembers that the config field at address field was bound from node. */
void profd_diag_track(struct profd_diag *d, const void *field, const struct cfg_node *node);
/* The node a config field was bound from, or NULL. */
const struct cfg_node *profd_diag_origin(const struct profd_diag *d, const void *field);
/* Drops the field origins (once validation is over). */
void profd_diag_forget_origins(struct profd_diag *d);
/* Writes every message to f, one per line, prefixed with "error: ". */
void profd_diag_print(const struct profd_diag *d, void *file);
void profd_diag_free(struct profd_diag *d);

#endif
