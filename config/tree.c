// SPDX-License-Identifier: Apache-2.0
#include "tree.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "../core/alloc.h"

struct anchor {
    char *name;
    struct cfg_node *node;
};

struct parse {
    yaml_parser_t parser;
    const char *file;
    struct profd_diag *d;
    struct anchor *anchors;
    size_t nanchors, anchors_cap;
    unsigned depth;
};

#define MAX_DEPTH 64

const char *cfg_kind_name(enum cfg_kind k)
{
    static const char *const names[] = {"null", "scalar", "map", "list"};
    return names[k];
}

static void node_free(struct cfg_node *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->n; i++) {
        if (n->keys)
            node_free(n->keys[i]);
        node_free(n->items[i]);
    }
    free(n->keys);
    free(n->items);
    free(n->value);
    free(n);
}

void cfg_free(struct cfg_node *root)
{
    if (!root)
        return;
    char *file = (char *)root->file;
    node_free(root);
    free(file);
}

static struct cfg_node *node_copy(const struct cfg_node *src)
{
    struct cfg_node *n = profd_xcalloc(1, sizeof(*n));
    *n = *src;
    n->value = src->value ? profd_xstrdup(src->value) : NULL;
    n->keys = src->keys ? profd_xcalloc(src->n, sizeof(*n->keys)) : NULL;
    n->items = src->n ? profd_xcalloc(src->n, sizeof(*n->items)) : NULL;
    for (size_t i = 0; i < src->n; i++) {
        if (src->keys)
            n->keys[i] = node_copy(src->keys[i]);
        n->items[i] = node_copy(src->items[i]);
    }
    return n;
}

const struct cfg_node *cfg_get(const struct cfg_node *map, const char *key)
{
    if (!map || map->kind != CFG_MAP)
        return NULL;
    for (size_t i = 0; i < map->n; i++)
        if (strcmp(map->keys[i]->value, key) == 0)
            return map->items[i];
    return NULL;
}

char *cfg_expand_env(const char *s, const char **err)
{
    size_t cap = strlen(s) + 1, len = 0;
    char *out = profd_xmalloc(cap);
    while (*s) {
        const char *piece = s;
        size_t plen = 1;
        char *owned = NULL;
        if (strncmp(s, "$${", 3) == 0) {
            piece = "${";
            plen = 2;
            s += 3;
        } else if (strncmp(s, "${env:", 6) == 0) {
            const char *end = strchr(s, '}');
            if (!end) {
                free(out);
                *err = "unterminated ${env:...} reference";
                return NULL;
            }
            char *ref = profd_xstrndup(s + 6, (size_t)(end - s - 6));
            char *dflt = strstr(ref, ":-");
            if (dflt) {
                *dflt = '\0';
                dflt += 2;
            }
            const char *val = getenv(ref);
            if (!val || (dflt && !*val))
                val = dflt ? dflt : "";
            owned = profd_xstrdup(val);
            free(ref);
            piece = owned;
            plen = strlen(owned);
            s = end + 1;
        } else {
            s++;
        }
        profd_grow(&out, &cap, len + plen + 1, 1);
        memcpy(out + len, piece, plen);
        len += plen;
        free(owned);
    }
    out[len] = '\0';
    return out;
}

static struct cfg_node *new_node(struct parse *ps, enum cfg_kind kind, const yaml_event_t *ev)
{
    struct cfg_node *n = profd_xcalloc(1, sizeof(*n));
    n->kind = kind;
    n->file = ps->file;
    n->line = (int)ev->start_mark.line + 1;
    n->col = (int)ev->start_mark.column + 1;
    return n;
}

static void remember_anchor(struct parse *ps, const yaml_char_t *anchor, struct cfg_node *n)
{
    if (!anchor)
        return;
    profd_grow(&ps->anchors, &ps->anchors_cap, ps->nanchors + 1, sizeof(*ps->anchors));
    ps->anchors[ps->nanchors++] = (struct anchor){profd_xstrdup((const char *)anchor), n};
}

static bool next_event(struct parse *ps, yaml_event_t *ev)
{
    if (yaml_parser_parse(&ps->parser, ev))
        return true;
    profd_diag_add(ps->d, NULL, "%s:%zu:%zu: YAML: %s", ps->file,
                   ps->parser.problem_mark.line + 1, ps->parser.problem_mark.column + 1,
                   ps->parser.problem ? ps->parser.problem : "syntax error");
    return false;
}

static struct cfg_node *parse_node(struct parse *ps, yaml_event_t *ev);

static struct cfg_node *parse_scalar(struct parse *ps, yaml_event_t *ev)
{
    const char *v = (const char *)ev->data.scalar.value;
    bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    if (plain && (!*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
                  !strcmp(v, "NULL"))) {
        struct cfg_node *n = new_node(ps, CFG_NULL, ev);
        remember_anchor(ps, ev->data.scalar.anchor, n);
        return n;
    }
    struct cfg_node *n = new_node(ps, CFG_SCALAR, ev);
    const char *err = NULL;
    n->value = cfg_expand_env(v, &err);
    if (!n->value) {
        profd_diag_add(ps->d, n, "%s", err);
        n->value = profd_xstrdup(v);
    }
    remember_anchor(ps, ev->data.scalar.anchor, n);
    return n;
}

static struct cfg_node *parse_children(struct parse *ps, struct cfg_node *n, bool is_map,
                                       yaml_event_type_t end)
{
    size_t cap = 0;
    for (;;) {
        yaml_event_t ev;
        if (!next_event(ps, &ev))
            goto fail;
        if (ev.type == end) {
            yaml_event_delete(&ev);
            return n;
        }
        struct cfg_node *key = NULL;
        if (is_map) {
            key = parse_node(ps, &ev);
            if (!key)
                goto fail;
            if (key->kind != CFG_SCALAR) {
                profd_diag_add(ps->d, key, "map keys must be plain strings");
                node_free(key);
                goto fail;
            }
            if (cfg_get(n, key->value))
                profd_diag_add(ps->d, key, "duplicate key '%s'", key->value);
            if (!next_event(ps, &ev)) {
                node_free(key);
                goto fail;
            }
        }
        struct cfg_node *item = parse_node(ps, &ev);
        if (!item) {
            node_free(key);
            goto fail;
        }
        profd_grow(&n->items, &cap, n->n + 1, sizeof(*n->items));
        if (is_map) {
            n->keys = profd_xrealloc(n->keys, cap * sizeof(*n->keys));
            n->keys[n->n] = key;
        }
        n->items[n->n++] = item;
    }
fail:
    node_free(n);
    return NULL;
}

/* Consumes ev (and the events of its children). */
static struct cfg_node *parse_node(struct parse *ps, yaml_event_t *ev)
{
    struct cfg_node *n = NULL;
    if (++ps->depth > MAX_DEPTH) {
        profd_diag_add(ps->d, NULL, "%s:%zu: YAML nested deeper than %d levels", ps->file,
                       ev->start_mark.line + 1, MAX_DEPTH);
        yaml_event_delete(ev);
        ps->depth--;
        return NULL;
    }
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        n = parse_scalar(ps, ev);
        break;
    case YAML_ALIAS_EVENT:
        for (size_t i = ps->nanchors; i-- > 0;)
            if (!strcmp(ps->anchors[i].name, (const char *)ev->data.alias.anchor)) {
                n = node_copy(ps->anchors[i].node);
                break;
            }
        if (!n)
            profd_diag_add(ps->d, NULL, "%s:%zu:%zu: unknown YAML alias '%s'", ps->file,
                           ev->start_mark.line + 1, ev->start_mark.column + 1,
                           ev->data.alias.anchor);
        break;
    case YAML_MAPPING_START_EVENT:
    case YAML_SEQUENCE_START_EVENT: {
        bool is_map = ev->type == YAML_MAPPING_START_EVENT;
        n = new_node(ps, is_map ? CFG_MAP : CFG_SEQ, ev);
        const yaml_char_t *anchor =
            is_map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
        n = parse_children(ps, n, is_map, is_map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT);
        if (n)
            remember_anchor(ps, anchor, n);
        break;
    }
    default:
        profd_diag_add(ps->d, NULL, "%s:%zu: unexpected YAML event", ps->file,
                       ev->start_mark.line + 1);
        break;
    }
    yaml_event_delete(ev);
    ps->depth--;
    return n;
}

static struct cfg_node *parse_document(struct parse *ps)
{
    struct cfg_node *root = NULL;
    yaml_event_t ev;
    size_t before = ps->d->n;
    /* STREAM-START, then DOCUMENT-START or STREAM-END for an empty input. */
    while (next_event(ps, &ev)) {
        yaml_event_type_t t = ev.type;
        if (t == YAML_STREAM_END_EVENT || t == YAML_DOCUMENT_END_EVENT) {
            yaml_event_delete(&ev);
            break;
        }
        if (t == YAML_STREAM_START_EVENT || t == YAML_DOCUMENT_START_EVENT) {
            yaml_event_delete(&ev);
            continue;
        }
        root = parse_node(ps, &ev);
        if (!root)
            break;
    }
    if (ps->d->n > before) {
        node_free(root);
        return NULL;
    }
    if (!root) {
        root = profd_xcalloc(1, sizeof(*root));
        root->kind = CFG_NULL;
        root->line = root->col = 1;
    }
    return root;
}

static struct cfg_node *load(const char *name, FILE *f, const char *text, struct profd_diag *d)
{
    struct parse ps = {.d = d};
    char *file = profd_xstrdup(name);
    ps.file = file;
    yaml_parser_initialize(&ps.parser);
    if (f)
        yaml_parser_set_input_file(&ps.parser, f);
    else
        yaml_parser_set_input_string(&ps.parser, (const unsigned char *)text, strlen(text));
    struct cfg_node *root = parse_document(&ps);
    yaml_parser_delete(&ps.parser);
    for (size_t i = 0; i < ps.nanchors; i++)
        free(ps.anchors[i].name);
    free(ps.anchors);
    if (!root) {
        free(file);
        return NULL;
    }
    root->file = file;
    return root;
}

struct cfg_node *cfg_load_file(const char *path, struct profd_diag *d)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        profd_diag_add(d, NULL, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct cfg_node *root = load(path, f, NULL, d);
    fclose(f);
    return root;
}

struct cfg_node *cfg_load_string(const char *name, const char *text, struct profd_diag *d)
{
    return load(name, NULL, text, d);
}
