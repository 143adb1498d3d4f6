// SPDX-License-Identifier: Apache-2.0
/* A sorted set of strings (file paths and file identities). Not thread-safe. */
#ifndef PPROF_FILE_PATHSET_H
#define PPROF_FILE_PATHSET_H

#include <stdbool.h>
#include <stddef.h>

struct pathset {
    char **items;
    size_t n, cap;
};

bool pathset_has(const struct pathset *s, const char *key);
/* Adds a copy of key; false when it was already there. */
bool pathset_add(struct pathset *s, const char *key);
void pathset_del(struct pathset *s, const char *key);
void pathset_free(struct pathset *s);

#endif
