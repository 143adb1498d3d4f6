// SPDX-License-Identifier: Apache-2.0
#include "bind.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/relabel.h"
#include "units.h"

const char *profd_opt_type_name(enum profd_opt_type t)
{
    static const char *const names[] = {
        "", "string", "int", "bool", "duration", "size", "enum", "list of strings",
        "map of strings", "object", "list of objects", "relabel rules", "map",
    };
    return t <= PROFD_OPT_MAP ? names[t] : "?";
}

static bool expect_kind(const struct cfg_node *n, enum cfg_kind k, const char *ctx,
                        const char *name, struct profd_diag *d)
{
    if (n->kind == k)
        return true;
    profd_diag_add(d, n, "%s.%s must be a %s, not a %s", ctx, name, cfg_kind_name(k),
                   cfg_kind_name(n->kind));
    return false;
}

static bool bind_scalar(const struct profd_option *o, void *field, const struct cfg_node *n,
                        const char *ctx, struct profd_diag *d)
{
    if (!expect_kind(n, CFG_SCALAR, ctx, o->name, d))
        return false;
    const char *v = n->value;
    switch (o->type) {
    case PROFD_OPT_STRING:
        free(*(char **)field);
        *(char **)field = profd_xstrdup(v);
        return true;
    case PROFD_OPT_INT:
        if (profd_parse_int(v, field))
            return true;
        profd_diag_add(d, n, "%s.%s: '%s' is not an integer", ctx, o->name, v);
        return false;
    case PROFD_OPT_BOOL:
        if (profd_parse_bool(v, field))
            return true;
        profd_diag_add(d, n, "%s.%s: '%s' is not true or false", ctx, o->name, v);
        return false;
    case PROFD_OPT_DURATION:
        if (profd_parse_duration(v, field))
            return true;
        profd_diag_add(d, n, "%s.%s: '%s' is not a duration (e.g. 15s, 1m30s, 250ms)", ctx,
                       o->name, v);
        return false;
    case PROFD_OPT_SIZE:
        if (profd_parse_size(v, field))
            return true;
        profd_diag_add(d, n, "%s.%s: '%s' is not a size (e.g. 4096, 64MiB, 10MB)", ctx, o->name,
                       v);
        return false;
    case PROFD_OPT_ENUM:
        for (int i = 0; o->choices[i]; i++)
            if (strcmp(v, o->choices[i]) == 0) {
                *(int *)field = i;
                return true;
            }
        char allowed[256] = "";
        for (int i = 0; o->choices[i]; i++) {
            strncat(allowed, i ? ", " : "", sizeof(allowed) - strlen(allowed) - 1);
            strncat(allowed, o->choices[i], sizeof(allowed) - strlen(allowed) - 1);
        }
        profd_diag_add(d, n, "%s.%s: '%s' is not one of: %s", ctx, o->name, v, allowed);
        return false;
    default:
        return false;
    }
}

static bool bind_list(const struct profd_option *o, struct profd_str_list *l,
                      const struct cfg_node *n, const char *ctx, struct profd_diag *d)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i]);
    free(l->items);
    *l = (struct profd_str_list){0};
    if (n->kind == CFG_SCALAR) {   /* a single value stands for a list of one */
        l->items = profd_xmalloc(sizeof(*l->items));
        l->items[l->n++] = profd_xstrdup(n->value);
        return true;
    }
    if (!expect_kind(n, CFG_SEQ, ctx, o->name, d))
        return false;
    l->items = profd_xcalloc(n->n, sizeof(*l->items));
    bool ok = true;
    for (size_t i = 0; i < n->n; i++) {
        if (expect_kind(n->items[i], CFG_SCALAR, ctx, o->name, d))
            l->items[l->n++] = profd_xstrdup(n->items[i]->value);
        else
            ok = false;
    }
    return ok;
}

static bool bind_map(const struct profd_option *o, struct profd_str_map *m,
                     const struct cfg_node *n, const char *ctx, struct profd_diag *d)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->keys[i]);
        free(m->values[i]);
    }
    free(m->keys);
    free(m->values);
    *m = (struct profd_str_map){0};
    if (!expect_kind(n, CFG_MAP, ctx, o->name, d))
        return false;
    m->keys = profd_xcalloc(n->n, sizeof(*m->keys));
    m->values = profd_xcalloc(n->n, sizeof(*m->values));
    bool ok = true;
    for (size_t i = 0; i < n->n; i++) {
        if (!expect_kind(n->items[i], CFG_SCALAR, ctx, n->keys[i]->value, d)) {
            ok = false;
            continue;
        }
        m->keys[m->n] = profd_xstrdup(n->keys[i]->value);
        m->values[m->n++] = profd_xstrdup(n->items[i]->value);
    }
    return ok;
}

/* Binds a list of relabel rules and compiles it; a problem is reported at
 * the rule (or its regex) at fault. */
static bool bind_relabel(const struct profd_option *o, struct profd_relabel **field,
                         const struct cfg_node *n, const char *ctx, struct profd_diag *d)
{
    if (!expect_kind(n, CFG_SEQ, ctx, o->name, d))
        return false;
    struct profd_relabel_rule_cfg *rules = profd_xcalloc(n->n ? n->n : 1, sizeof(*rules));
    bool ok = true;
    for (size_t i = 0; i < n->n; i++) {
        char *item_ctx = profd_xasprintf("%s.%s[%zu]", ctx, o->name, i);
        struct profd_bind_section s = {profd_relabel_rule_options, &rules[i]};
        ok &= profd_bind(&s, 1, n->items[i], item_ctx, d) == 0;
        free(item_ctx);
    }
    if (ok) {
        char err[512];
        size_t bad = 0;
        profd_relabel_free(*field);
        *field = profd_relabel_compile(rules, n->n, err, sizeof(err), &bad);
        if (!*field) {
            const struct cfg_node *at = profd_diag_origin(d, &rules[bad].regex);
            if (!at || !strstr(err, "regex"))
                at = n->items[bad];
            profd_diag_add(d, at, "%s.%s[%zu]: %s", ctx, o->name, bad, err);
            ok = false;
        }
    }
    for (size_t i = 0; i < n->n; i++)
        profd_unbind(profd_relabel_rule_options, &rules[i]);
    free(rules);
    return ok;
}

static bool bind_value(const struct profd_option *o, void *field, const struct cfg_node *n,
                       const char *ctx, struct profd_diag *d);

/* Frees what m holds, o's map, and empties it. */
static void unbind_value_map(const struct profd_option *o, struct profd_map *m)
{
    struct profd_option value[2] = {o->children[0]};
    value[0].offset = 0;
    for (size_t i = 0; i < m->n; i++) {
        profd_unbind(value, (char *)m->values + i * o->elem_size);
        free(m->keys[i]);
    }
    free(m->keys);
    free(m->values);
    *m = (struct profd_map){0};
}

/* Binds each entry of the map n with o's value option, which reports a
 * problem under the entry's name (ctx.option.name). */
static bool bind_value_map(const struct profd_option *o, struct profd_map *m,
                           const struct cfg_node *n, const char *ctx, struct profd_diag *d)
{
    unbind_value_map(o, m);
    if (!expect_kind(n, CFG_MAP, ctx, o->name, d))
        return false;
    char *sub = profd_xasprintf("%s.%s", ctx, o->name);
    m->keys = profd_xcalloc(n->n, sizeof(*m->keys));
    m->values = profd_xcalloc(n->n, o->elem_size);
    bool ok = true;
    for (size_t i = 0; i < n->n; i++) {
        struct profd_option value = o->children[0];
        value.name = n->keys[i]->value;
        void *slot = (char *)m->values + m->n * o->elem_size;
        ok &= bind_value(&value, slot, n->items[i], sub, d);
        m->keys[m->n++] = profd_xstrdup(value.name);
    }
    free(sub);
    return ok;
}

static bool bind_value(const struct profd_option *o, void *field, const struct cfg_node *n,
                       const char *ctx, struct profd_diag *d)
{
    profd_diag_track(d, field, n);
    char *sub = profd_xasprintf("%s.%s", ctx, o->name);
    bool ok;
    switch (o->type) {
    case PROFD_OPT_STRING_LIST:
        ok = bind_list(o, field, n, ctx, d);
        break;
    case PROFD_OPT_STRING_MAP:
        ok = bind_map(o, field, n, ctx, d);
        break;
    case PROFD_OPT_RELABEL:
        ok = bind_relabel(o, field, n, ctx, d);
        break;
    case PROFD_OPT_OBJECT: {
        struct profd_bind_section s = {o->children, field};
        ok = profd_bind(&s, 1, n, sub, d) == 0;
        break;
    }
    case PROFD_OPT_MAP:
        ok = bind_value_map(o, field, n, ctx, d);
        break;
    case PROFD_OPT_OBJECT_LIST: {
        struct profd_obj_list *l = field;
        ok = expect_kind(n, CFG_SEQ, ctx, o->name, d);
        if (!ok)
            break;
        l->items = profd_xcalloc(n->n, o->elem_size);
        l->n = n->n;
        for (size_t i = 0; i < n->n; i++) {
            char *item_ctx = profd_xasprintf("%s[%zu]", sub, i);
            struct profd_bind_section s = {o->children, (char *)l->items + i * o->elem_size};
            ok &= profd_bind(&s, 1, n->items[i], item_ctx, d) == 0;
            free(item_ctx);
        }
        break;
    }
    default:
        ok = bind_scalar(o, field, n, ctx, d);
    }
    free(sub);
    return ok;
}

static bool apply_default(const struct profd_option *o, void *field, const char *ctx,
                          struct profd_diag *d)
{
    if (o->type == PROFD_OPT_OBJECT) {
        struct profd_bind_section s = {o->children, field};
        char *sub = profd_xasprintf("%s.%s", ctx, o->name);
        int rc = profd_bind(&s, 1, NULL, sub, d);
        free(sub);
        return rc == 0;
    }
    if (!o->default_value)
        return true;
    struct cfg_node *n = cfg_load_string("<default>", o->default_value, d);
    size_t origins = d->norigins;
    bool ok = n && (n->kind == CFG_NULL || bind_value(o, field, n, ctx, d));
    d->norigins = origins;   /* defaults have no place in the user's file */
    cfg_free(n);
    return ok;
}

static const struct profd_option *find_option(const struct profd_bind_section *sections,
                                              size_t nsections, const char *key, void **base)
{
    for (size_t s = 0; s < nsections; s++)
        for (const struct profd_option *o = sections[s].opts; o && o->name; o++)
            if (strcmp(o->name, key) == 0) {
                *base = sections[s].base;
                return o;
            }
    return NULL;
}

int profd_bind(const struct profd_bind_section *sections, size_t nsections,
               const struct cfg_node *node, const char *ctx, struct profd_diag *d)
{
    size_t errors_before = d->n;
    if (node && node->kind != CFG_NULL && node->kind != CFG_MAP) {
        profd_diag_add(d, node, "%s must be a map, not a %s", ctx, cfg_kind_name(node->kind));
        return -1;
    }
    size_t nkeys = node && node->kind == CFG_MAP ? node->n : 0;
    for (size_t i = 0; i < nkeys; i++) {
        void *base;
        const char *key = node->keys[i]->value;
        const struct profd_option *o = find_option(sections, nsections, key, &base);
        if (!o) {
            profd_diag_add(d, node->keys[i], "unknown key '%s' in %s", key, ctx);
            continue;
        }
        if (node->items[i]->kind != CFG_NULL)
            bind_value(o, (char *)base + o->offset, node->items[i], ctx, d);
    }
    for (size_t s = 0; s < nsections; s++) {
        for (const struct profd_option *o = sections[s].opts; o && o->name; o++) {
            const struct cfg_node *given = node ? cfg_get(node, o->name) : NULL;
            if (given && given->kind != CFG_NULL)
                continue;
            if (o->required && !o->default_value) {
                profd_diag_add(d, node && node->kind == CFG_MAP ? node : NULL,
                               "%s: missing required option '%s'", ctx, o->name);
                continue;
            }
            apply_default(o, (char *)sections[s].base + o->offset, ctx, d);
        }
    }
    return d->n > errors_before ? -1 : 0;
}

void profd_unbind(const struct profd_option *opts, void *base)
{
    for (const struct profd_option *o = opts; o && o->name; o++) {
        void *field = (char *)base + o->offset;
        switch (o->type) {
        case PROFD_OPT_STRING:
            free(*(char **)field);
            *(char **)field = NULL;
            break;
        case PROFD_OPT_STRING_LIST: {
            struct profd_str_list *l = field;
            for (size_t i = 0; i < l->n; i++)
                free(l->items[i]);
            free(l->items);
            *l = (struct profd_str_list){0};
            break;
        }
        case PROFD_OPT_STRING_MAP: {
            struct profd_str_map *m = field;
            for (size_t i = 0; i < m->n; i++) {
                free(m->keys[i]);
                free(m->values[i]);
            }
            free(m->keys);
            free(m->values);
            *m = (struct profd_str_map){0};
            break;
        }
        case PROFD_OPT_OBJECT:
            profd_unbind(o->children, field);
            break;
        case PROFD_OPT_RELABEL:
            profd_relabel_free(*(struct profd_relabel **)field);
            *(struct profd_relabel **)field = NULL;
            break;
        case PROFD_OPT_OBJECT_LIST: {
            struct profd_obj_list *l = field;
            for (size_t i = 0; i < l->n; i++)
                profd_unbind(o->children, (char *)l->items + i * o->elem_size);
            free(l->items);
            *l = (struct profd_obj_list){0};
            break;
        }
        case PROFD_OPT_MAP:
            unbind_value_map(o, field);
            break;
        default:
            break;
        }
    }
}
