// SPDX-License-Identifier: Apache-2.0
#include "sd_file.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../config/json_text.h"
#include "../config/tree.h"
#include "alloc.h"
#include "labels.h"

static int bad(const struct cfg_node *at, const char *what, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s:%d:%d: %s", at->file, at->line, at->col, what);
    return -1;
}

static int read_group(const struct cfg_node *g, struct profd_target_group *out, char *err,
                      size_t errlen)
{
    if (g->kind != CFG_MAP)
        return bad(g, "each entry must be a map with targets and labels", err, errlen);
    for (size_t i = 0; i < g->n; i++) {
        const char *k = g->keys[i]->value;
        const struct cfg_node *v = g->items[i];
        if (!strcmp(k, "targets")) {
            if (v->kind != CFG_SEQ)
                return bad(v, "targets must be a list", err, errlen);
            out->targets.items = profd_xcalloc(v->n ? v->n : 1, sizeof(char *));
            for (size_t t = 0; t < v->n; t++) {
                if (v->items[t]->kind != CFG_SCALAR)
                    return bad(v->items[t], "a target must be host:port", err, errlen);
                out->targets.items[out->targets.n++] = profd_xstrdup(v->items[t]->value);
            }
        } else if (!strcmp(k, "labels")) {
            if (v->kind == CFG_NULL)
                continue;
            if (v->kind != CFG_MAP)
                return bad(v, "labels must be a map", err, errlen);
            for (size_t l = 0; l < v->n; l++) {
                if (v->items[l]->kind != CFG_SCALAR)
                    return bad(v->items[l], "label values must be strings", err, errlen);
                profd_labels_set(&out->labels, v->keys[l]->value, v->items[l]->value);
            }
        } else {
            return bad(g->keys[i], "unknown key (want targets and labels)", err, errlen);
        }
    }
    return 0;
}

/* The groups of a loaded tree (NULL when it could not be: d says why,
 * else name); then frees root and d. */
static int read_groups(struct cfg_node *root, struct profd_diag *d, const char *name,
                       struct profd_target_group **groups, size_t *n, char *err, size_t errlen)
{
    *groups = NULL;
    *n = 0;
    int rc = 0;
    if (!root) {
        snprintf(err, errlen, "%s", d->n ? d->msgs[0] : name);
        rc = -1;
    } else if (root->kind != CFG_SEQ && root->kind != CFG_NULL) {
        rc = bad(root, "want a list of target groups", err, errlen);
    } else if (root->kind == CFG_SEQ) {
        *groups = profd_xcalloc(root->n ? root->n : 1, sizeof(**groups));
        for (size_t i = 0; i < root->n && rc == 0; i++, (*n)++)
            rc = read_group(root->items[i], &(*groups)[i], err, errlen);
    }
    if (rc < 0) {
        profd_sd_groups_free(*groups, *n);
        *groups = NULL;
        *n = 0;
    }
    cfg_free(root);
    profd_diag_free(d);
    return rc;
}

int profd_sd_file_read(const char *path, struct profd_target_group **groups, size_t *n, char *err,
                       size_t errlen)
{
    struct profd_diag d = {0};
    size_t len = strlen(path);
    bool json = len >= 5 && strcmp(path + len - 5, ".json") == 0;
    return read_groups(json ? cfg_load_json_file(path, &d) : cfg_load_file(path, &d), &d, path,
                       groups, n, err, errlen);
}

int profd_sd_parse(const char *name, const char *text, struct profd_target_group **groups,
                   size_t *n, char *err, size_t errlen)
{
    struct profd_diag d = {0};
    return read_groups(cfg_load_json_string(name, text, &d), &d, name, groups, n, err, errlen);
}

void profd_sd_groups_free(struct profd_target_group *groups, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t t = 0; t < groups[i].targets.n; t++)
            free(groups[i].targets.items[t]);
        free(groups[i].targets.items);
        profd_labels_clear(&groups[i].labels);
    }
    free(groups);
}
