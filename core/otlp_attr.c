// SPDX-License-Identifier: Apache-2.0
#include "otlp_attr.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "labels.h"
#include "profile.h"

static bool key_is(const struct otlp_dict *d, uint32_t key, const char *name)
{
    size_t n = strlen(name);
    return d->strings[key].len == n && memcmp(d->strings[key].ptr, name, n) == 0;
}

static bool key_has_prefix(const struct otlp_dict *d, uint32_t key, const char *prefix)
{
    size_t n = strlen(prefix);
    return d->strings[key].len >= n && memcmp(d->strings[key].ptr, prefix, n) == 0;
}

static const struct otlp_attr *find(const struct otlp_dict *d, struct otlp_list list,
                                    const char *key)
{
    for (uint32_t i = 0; i < list.count; i++) {
        const struct otlp_attr *a = &d->attrs[d->pool[list.start + i]];
        if (key_is(d, a->key, key))
            return a;
    }
    return NULL;
}

bool otlp_attrs_flag(const struct otlp_dict *d, struct otlp_list list, const char *key)
{
    const struct otlp_attr *a = find(d, list, key);
    return a && a->value.kind == OTLP_V_BOOL && a->value.i;
}

/* The text of a scalar value, in buf when it has to be formatted. */
static bool value_text(const struct otlp_value *v, char *buf, size_t n, const char **s,
                       size_t *len)
{
    static const char hex[] = "0123456789abcdef";
    switch (v->kind) {
    case OTLP_V_STRING:
        *s = (const char *)v->bytes;
        *len = v->len;
        return true;
    case OTLP_V_BOOL:
        *s = v->i ? "true" : "false";
        *len = strlen(*s);
        return true;
    case OTLP_V_INT:
        *len = (size_t)snprintf(buf, n, "%" PRId64, v->i);
        *s = buf;
        return true;
    case OTLP_V_DOUBLE:
        *len = (size_t)snprintf(buf, n, "%.17g", v->d);
        *s = buf;
        return true;
    case OTLP_V_BYTES:
        if (v->len * 2 >= n)
            return false;
        for (size_t i = 0; i < v->len; i++) {
            buf[2 * i] = hex[v->bytes[i] >> 4];
            buf[2 * i + 1] = hex[v->bytes[i] & 15];
        }
        *s = buf;
        *len = v->len * 2;
        return true;
    default:
        return false;
    }
}

static uint32_t intern_value(struct profd_profile *p, const struct otlp_value *v)
{
    char buf[512];
    const char *s;
    size_t len;
    return value_text(v, buf, sizeof(buf), &s, &len) ? profd_profile_intern(p, s, len) : 0;
}

void otlp_attrs_to_mapping(const struct otlp_dict *d, struct otlp_list list,
                           struct profd_profile *p, struct profd_mapping *m)
{
    static const char *const build_ids[] = {OTLP_ATTR_BUILD_ID_GNU, OTLP_ATTR_BUILD_ID_GO,
                                            OTLP_ATTR_BUILD_ID_HTLHASH};
    for (size_t i = 0; i < sizeof(build_ids) / sizeof(*build_ids) && !m->build_id; i++) {
        const struct otlp_attr *a = find(d, list, build_ids[i]);
        if (a)
            m->build_id = intern_value(p, &a->value);
    }
    m->has_functions = otlp_attrs_flag(d, list, OTLP_ATTR_HAS_FUNCTIONS);
    m->has_filenames = otlp_attrs_flag(d, list, OTLP_ATTR_HAS_FILENAMES);
    m->has_line_numbers = otlp_attrs_flag(d, list, OTLP_ATTR_HAS_LINE_NUMBERS);
    m->has_inline_frames = otlp_attrs_flag(d, list, OTLP_ATTR_HAS_INLINE_FRAMES);
}

/* Appends the strings of an array value (or the one string) to p's comments. */
static void add_comments(struct profd_profile *p, const struct otlp_value *v)
{
    struct otlp_value one[64];
    size_t n = 0;
    if (v->kind == OTLP_V_ARRAY) {
        struct pb_reader r;
        pb_reader_init(&r, v->bytes, v->bytes, v->len);
        struct pb_field f = {0};
        const char *why;
        while (n < 64 && pb_next(&r, &f, &why) > 0)
            if (f.number == 1 && f.wire == PB_LEN && otlp_value_parse(f.data, f.len, &one[n], &why))
                n++;
    } else {
        one[n++] = *v;
    }
    if (!n)
        return;
    p->comments = profd_arena_realloc(p->arena, p->comments, p->ncomments * sizeof(*p->comments),
                                      (p->ncomments + n) * sizeof(*p->comments));
    for (size_t i = 0; i < n; i++)
        p->comments[p->ncomments++] = intern_value(p, &one[i]);
}

void otlp_attrs_to_profile(const struct otlp_dict *d, struct otlp_list list,
                           struct profd_profile *p)
{
    for (uint32_t i = 0; i < list.count; i++) {
        const struct otlp_attr *a = &d->attrs[d->pool[list.start + i]];
        if (key_is(d, a->key, OTLP_ATTR_COMMENT))
            add_comments(p, &a->value);
        else if (key_is(d, a->key, OTLP_ATTR_DROP_FRAMES))
            p->drop_frames = intern_value(p, &a->value);
        else if (key_is(d, a->key, OTLP_ATTR_KEEP_FRAMES))
            p->keep_frames = intern_value(p, &a->value);
        else if (key_is(d, a->key, OTLP_ATTR_DOC_URL))
            p->doc_url = intern_value(p, &a->value);
    }
}

/* Writes a Prometheus-valid label name for an attribute key into out. */
static void label_name(const char *key, size_t len, char *out, size_t n)
{
    size_t o = 0;
    if (len && key[0] >= '0' && key[0] <= '9' && n > 1)
        out[o++] = '_';
    for (size_t i = 0; i < len && o + 1 < n; i++) {
        char c = key[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_';
        out[o++] = ok ? c : '_';
    }
    out[o] = '\0';
}

static void set_series_label(struct profd_labels *labels, const char *key, size_t key_len,
                             const struct otlp_value *v)
{
    char name[256], buf[512];
    const char *s;
    size_t len;
    if (!key_len || !value_text(v, buf, sizeof(buf), &s, &len))
        return;
    label_name(key, key_len, name, sizeof(name));
    profd_labels_setn(labels, name, s, len);
}

void otlp_attrs_to_series(const struct otlp_dict *d, struct otlp_list list,
                          struct profd_labels *labels)
{
    for (uint32_t i = 0; i < list.count; i++) {
        const struct otlp_attr *a = &d->attrs[d->pool[list.start + i]];
        if (!key_has_prefix(d, a->key, "pprof."))
            set_series_label(labels, d->strings[a->key].ptr, d->strings[a->key].len, &a->value);
    }
}

bool otlp_attr_to_label(const struct otlp_attr *a, struct profd_profile *p,
                        struct profd_sample_label *l, uint32_t key, uint32_t unit)
{
    *l = (struct profd_sample_label){.key = key};
    if (a->value.kind == OTLP_V_INT) {
        l->num = a->value.i;
        l->num_unit = unit;
        return true;
    }
    char buf[512];
    const char *s;
    size_t len;
    if (!value_text(&a->value, buf, sizeof(buf), &s, &len))
        return false;
    l->str = profd_profile_intern(p, s, len);
    return true;
}

static uint32_t hex_label(struct profd_profile *p, struct profd_sample_label *l, const char *key,
                          const uint8_t *id, uint32_t len)
{
    static const char hex[] = "0123456789abcdef";
    char buf[64];
    if (!len || len > 16)
        return 0;
    bool zero = true;
    for (uint32_t i = 0; i < len; i++) {
        buf[2 * i] = hex[id[i] >> 4];
        buf[2 * i + 1] = hex[id[i] & 15];
        zero &= id[i] == 0;
    }
    if (zero)
        return 0;
    *l = (struct profd_sample_label){.key = profd_profile_intern(p, key, strlen(key)),
                                     .str = profd_profile_intern(p, buf, 2 * len)};
    return 1;
}

uint32_t otlp_link_to_labels(const struct otlp_link *link, struct profd_profile *p,
                             struct profd_sample_label *labels)
{
    uint32_t n = hex_label(p, labels, OTLP_LABEL_TRACE_ID, link->trace_id, link->trace_len);
    return n + hex_label(p, labels + n, OTLP_LABEL_SPAN_ID, link->span_id, link->span_len);
}

/* Calls fn for each KeyValue among the fields numbered `field` of a message:
 * key from `key` (string) or `key_strindex`. */
static void each_key_value(const struct otlp_dict *d, const uint8_t *data, size_t len,
                           uint32_t field,
                           void (*fn)(void *arg, const char *key, size_t key_len,
                                      const struct otlp_value *v),
                           void *arg)
{
    struct pb_reader r;
    pb_reader_init(&r, data, data, len);
    struct pb_field f = {0}, g = {0};
    const char *why;
    while (pb_next(&r, &f, &why) > 0) {
        if (f.number != field || f.wire != PB_LEN)
            continue;
        const char *key = NULL;
        size_t key_len = 0;
        struct otlp_value v = {0};
        struct pb_reader kv;
        pb_reader_init(&kv, f.data, f.data, f.len);
        while (pb_next(&kv, &g, &why) > 0) {
            if (g.number == 1 && g.wire == PB_LEN) {
                key = (const char *)g.data;
                key_len = g.len;
            } else if (g.number == 3 && g.wire == PB_VARINT && g.value < d->nstrings) {
                key = d->strings[g.value].ptr;
                key_len = d->strings[g.value].len;
            } else if (g.number == 2 && g.wire == PB_LEN &&
                       !otlp_value_parse(g.data, g.len, &v, &why)) {
                v.kind = OTLP_V_NONE;
            }
        }
        if (v.kind == OTLP_V_STRINDEX) {
            if (v.i < 0 || (uint64_t)v.i >= d->nstrings)
                continue;
            v = (struct otlp_value){.kind = OTLP_V_STRING,
                                    .bytes = (const uint8_t *)d->strings[v.i].ptr,
                                    .len = d->strings[v.i].len};
        }
        if (key)
            fn(arg, key, key_len, &v);
    }
}

static void resource_attr(void *arg, const char *key, size_t key_len, const struct otlp_value *v)
{
    set_series_label(arg, key, key_len, v);
}

void otlp_resource_to_labels(const struct otlp_dict *d, const uint8_t *data, size_t len,
                             struct profd_labels *labels)
{
    each_key_value(d, data, len, 1, resource_attr, labels);
}

struct found_string {
    const char *name;
    const char *s;
    size_t len;
};

static void scope_attr(void *arg, const char *key, size_t key_len, const struct otlp_value *v)
{
    struct found_string *fs = arg;
    if (key_len == strlen(fs->name) && memcmp(key, fs->name, key_len) == 0 &&
        v->kind == OTLP_V_STRING) {
        fs->s = (const char *)v->bytes;
        fs->len = v->len;
    }
}

const char *otlp_scope_default_sample_type(const struct otlp_dict *d, const uint8_t *data,
                                           size_t len, size_t *out_len)
{
    struct found_string fs = {OTLP_ATTR_DEFAULT_SAMPLE_TYPE, NULL, 0};
    each_key_value(d, data, len, 3, scope_attr, &fs);
    *out_len = fs.len;
    return fs.s;
}

void otlp_set_profile_name(struct profd_record *r)
{
    static const struct {
        const char *type, *name;
    } known[] = {
        {"cpu", "process_cpu"},          {"samples", "process_cpu"},
        {"alloc_objects", "memory"},     {"alloc_space", "memory"},
        {"inuse_objects", "memory"},     {"inuse_space", "memory"},
        {"goroutine", "goroutine"},      {"goroutines", "goroutine"},
        {"contentions", "contentions"},  {"delay", "contentions"},
    };
    const struct profd_profile *p = r->profile;
    char name[128] = "unknown";
    for (uint32_t i = 0; p && i < p->nsample_types; i++) {
        const struct profd_str *t = &p->strings[p->sample_types[i].type];
        for (size_t k = 0; k < sizeof(known) / sizeof(*known); k++)
            if (t->len == strlen(known[k].type) && memcmp(t->ptr, known[k].type, t->len) == 0) {
                profd_labels_set(&r->labels, "__name__", known[k].name);
                return;
            }
        if (i == 0 && t->len)
            label_name(t->ptr, t->len, name, sizeof(name));
    }
    profd_labels_set(&r->labels, "__name__", name);
}

const char *otlp_label_to_attribute(const char *name)
{
    static const char *const known[][2] = {
        {"service_name", "service.name"},
        {"service_namespace", "service.namespace"},
        {"service_version", "service.version"},
        {"service_instance_id", "service.instance.id"},
        {"host_name", "host.name"},
        {"process_pid", "process.pid"},
    };
    for (size_t i = 0; i < sizeof(known) / sizeof(*known); i++)
        if (strcmp(name, known[i][0]) == 0)
            return known[i][1];
    return name;
}
