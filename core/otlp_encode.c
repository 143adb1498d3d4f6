// SPDX-License-Identifier: Apache-2.0
/*
 * Records -> one OTLP ExportProfilesServiceRequest. Every dictionary entry is
 * written as its encoded bytes into a scratch buffer and interned by those
 * bytes: equal entries have equal bytes once their own references are
 * dictionary indices, so deduplication needs no per-table comparison code.
 * Entries are built children first; the scratch buffer is used as a stack,
 * so building a child while a parent is half written is safe. Strings are
 * written valid UTF-8, as proto3 requires of its string fields (a receiver
 * in Java or Go refuses the whole request otherwise): a byte that starts
 * no character becomes U+FFFD.
 */
#include "otlp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/hash.h"
#include "../lib/hex.h"
#include "../lib/transport_labels.h"
#include "../lib/utf8_valid.h"
#include "alloc.h"
#include "block_cache.h"
#include "otlp_attr.h"
#include "pb.h"
#include "record.h"

enum { T_MAPPING = 1, T_LOCATION, T_FUNCTION, T_LINK, T_STRING, T_ATTRIBUTE, T_STACK, T_COUNT_ };

/* One dictionary table: entries' bytes back to back, and a set over them. */
struct dict_table {
    struct pb_writer data;
    size_t *ends;              /* end offset of each entry */
    size_t n, cap;
    uint32_t *slots;           /* entry index + 1; 0 = empty */
    size_t mask, slots_size;   /* slots_size: the bytes of the block slots are in */
};

struct encoder {
    struct dict_table tables[T_COUNT_];
    struct pb_writer scratch;
    struct pb_writer out;      /* the resource_profiles fields */
    const struct profd_profile *p;
    uint32_t *str_map, *fn_map, *mapping_map, *loc_map;   /* model -> dictionary, 0 = not yet */
    uint32_t *sample_stack, *sample_link, *attr_pool;
    size_t *attr_start;        /* sample i's attributes: attr_pool[attr_start[i]..[i + 1]) */
    size_t attr_pool_cap;
    void *record_arrays;       /* the block the record's arrays above are cut from */
    size_t record_arrays_size;
};

static const uint8_t *entry(const struct dict_table *t, size_t i, size_t *len)
{
    size_t start = i ? t->ends[i - 1] : 0;
    *len = t->ends[i] - start;
    return t->data.buf ? t->data.buf + start : (const uint8_t *)"";   /* only empty entries yet */
}

static void table_rehash(struct dict_table *t)
{
    size_t size = t->mask ? (t->mask + 1) * 2 : 1024;
    profd_block_put(t->slots, t->slots_size);
    t->slots = profd_block_get(size * sizeof(*t->slots), &t->slots_size);
    memset(t->slots, 0, size * sizeof(*t->slots));
    t->mask = size - 1;
    for (size_t i = 0; i < t->n; i++) {
        size_t len;
        const uint8_t *e = entry(t, i, &len);
        size_t s = hash_bytes(e, len) & t->mask;
        while (t->slots[s])
            s = (s + 1) & t->mask;
        t->slots[s] = (uint32_t)i + 1;
    }
}

/* The index of the entry with these bytes, added when new. */
static uint32_t table_intern(struct dict_table *t, const uint8_t *bytes, size_t len)
{
    if ((t->n + 1) * 2 > t->mask)
        table_rehash(t);
    size_t s = hash_bytes(bytes, len) & t->mask;
    for (; t->slots[s]; s = (s + 1) & t->mask) {
        size_t elen;
        const uint8_t *e = entry(t, t->slots[s] - 1, &elen);
        if (elen == len && memcmp(e, bytes, len) == 0)
            return t->slots[s] - 1;
    }
    pb_writer_reserve(&t->data, len);
    if (len)
        memcpy(t->data.buf + t->data.len, bytes, len);
    t->data.len += len;
    profd_block_grow(&t->ends, &t->cap, t->n + 1, sizeof(*t->ends));
    t->ends[t->n] = t->data.len;
    t->slots[s] = (uint32_t)t->n + 1;
    return (uint32_t)t->n++;
}

/* Interns the scratch bytes written since mark and pops them. */
static uint32_t intern_scratch(struct encoder *e, int table, size_t mark)
{
    uint32_t idx = table_intern(&e->tables[table], e->scratch.buf + mark, e->scratch.len - mark);
    e->scratch.len = mark;
    return idx;
}

/* s (len bytes) as a proto3 string: s itself when it is valid UTF-8, else
 * a copy made valid, into *fixed (the caller frees it). */
static const char *valid_text(const char *s, size_t *len, char **fixed)
{
    *fixed = NULL;
    if (utf8_is_valid(s, *len))
        return s;
    bool changed;
    *fixed = profd_xmalloc(3 * *len + 1);
    *len = utf8_valid_copy(s, *len, 3 * *len, *fixed, &changed);
    return *fixed;
}

static uint32_t intern_string(struct encoder *e, const char *s, size_t len)
{
    char *fixed;
    s = valid_text(s, &len, &fixed);
    uint32_t idx = table_intern(&e->tables[T_STRING], (const uint8_t *)s, len);
    free(fixed);
    return idx;
}

/* A string field of len bytes at s, valid UTF-8 (valid_text), written
 * even when empty. */
static void put_text(struct pb_writer *w, uint32_t field, const char *s, size_t len)
{
    char *fixed;
    s = valid_text(s, &len, &fixed);
    pb_put_bytes_always(w, field, s, len);
    free(fixed);
}

static uint32_t str(struct encoder *e, uint32_t i)
{
    if (i == 0)
        return 0;
    if (!e->str_map[i])
        e->str_map[i] = intern_string(e, e->p->strings[i].ptr, e->p->strings[i].len);
    return e->str_map[i];
}

/* Interns a KeyValueAndUnit with a string, bool or int value. */
enum attr_kind { A_STRING, A_BOOL, A_INT };
static uint32_t attribute(struct encoder *e, uint32_t key, enum attr_kind kind, uint32_t s,
                          int64_t num, uint32_t unit)
{
    size_t mark = e->scratch.len;
    struct pb_writer *w = &e->scratch;
    pb_put_uint(w, 1, key);
    size_t v = pb_begin(w, 2);
    if (kind == A_STRING) {
        size_t len;
        const uint8_t *bytes = entry(&e->tables[T_STRING], s, &len);
        pb_put_bytes_always(w, 1, bytes, len);
    } else {
        pb_put_tag(w, kind == A_BOOL ? 2 : 3, PB_VARINT);
        pb_put_varint(w, (uint64_t)num);
    }
    pb_end(w, v);
    pb_put_uint(w, 3, unit);
    return intern_scratch(e, T_ATTRIBUTE, mark);
}

static uint32_t attribute_cstr(struct encoder *e, const char *key, const char *value, size_t len)
{
    return attribute(e, intern_string(e, key, strlen(key)), A_STRING,
                     intern_string(e, value, len), 0, 0);
}

static uint32_t attribute_flag(struct encoder *e, const char *key)
{
    return attribute(e, intern_string(e, key, strlen(key)), A_BOOL, 0, 1, 0);
}

static bool is_hex(const struct profd_str *s)
{
    for (uint32_t i = 0; i < s->len; i++)
        if (hex_digit(s->ptr[i]) < 0)
            return false;
    return s->len > 0 && s->len % 2 == 0;
}

static uint32_t mapping(struct encoder *e, uint32_t ref)
{
    if (ref == 0)
        return 0;
    if (e->mapping_map[ref - 1])
        return e->mapping_map[ref - 1];
    const struct profd_mapping *m = &e->p->mappings[ref - 1];
    uint32_t attrs[5], n = 0;
    if (m->build_id) {
        const struct profd_str *b = &e->p->strings[m->build_id];
        attrs[n++] = attribute_cstr(e, is_hex(b) ? OTLP_ATTR_BUILD_ID_GNU : OTLP_ATTR_BUILD_ID_GO,
                                    b->ptr, b->len);
    }
    if (m->has_functions)
        attrs[n++] = attribute_flag(e, OTLP_ATTR_HAS_FUNCTIONS);
    if (m->has_filenames)
        attrs[n++] = attribute_flag(e, OTLP_ATTR_HAS_FILENAMES);
    if (m->has_line_numbers)
        attrs[n++] = attribute_flag(e, OTLP_ATTR_HAS_LINE_NUMBERS);
    if (m->has_inline_frames)
        attrs[n++] = attribute_flag(e, OTLP_ATTR_HAS_INLINE_FRAMES);
    uint32_t filename = str(e, m->filename);
    size_t mark = e->scratch.len;
    pb_put_uint(&e->scratch, 1, m->memory_start);
    pb_put_uint(&e->scratch, 2, m->memory_limit);
    pb_put_uint(&e->scratch, 3, m->file_offset);
    pb_put_uint(&e->scratch, 4, filename);
    pb_put_packed_u32(&e->scratch, 5, attrs, n);
    return e->mapping_map[ref - 1] = intern_scratch(e, T_MAPPING, mark);
}

static uint32_t function(struct encoder *e, uint32_t ref)
{
    if (ref == 0)
        return 0;
    if (e->fn_map[ref - 1])
        return e->fn_map[ref - 1];
    const struct profd_function *fn = &e->p->functions[ref - 1];
    uint32_t name = str(e, fn->name), system_name = str(e, fn->system_name);
    uint32_t filename = str(e, fn->filename);
    size_t mark = e->scratch.len;
    pb_put_uint(&e->scratch, 1, name);
    pb_put_uint(&e->scratch, 2, system_name);
    pb_put_uint(&e->scratch, 3, filename);
    pb_put_int(&e->scratch, 4, fn->start_line);
    return e->fn_map[ref - 1] = intern_scratch(e, T_FUNCTION, mark);
}

static uint32_t location(struct encoder *e, uint32_t ref)
{
    if (e->loc_map[ref - 1])
        return e->loc_map[ref - 1];
    const struct profd_location *loc = &e->p->locations[ref - 1];
    uint32_t map = mapping(e, loc->mapping);
    uint32_t folded = loc->is_folded ? attribute_flag(e, OTLP_ATTR_IS_FOLDED) : 0;
    for (uint32_t i = 0; i < loc->nlines; i++)
        function(e, loc->lines[i].function);   /* children before the entry is begun */
    size_t mark = e->scratch.len;
    struct pb_writer *w = &e->scratch;
    pb_put_uint(w, 1, map);
    pb_put_uint(w, 2, loc->address);
    for (uint32_t i = 0; i < loc->nlines; i++) {
        size_t lm = pb_begin(w, 3);
        pb_put_uint(w, 1, function(e, loc->lines[i].function));
        pb_put_int(w, 2, loc->lines[i].line);
        pb_put_int(w, 3, loc->lines[i].column);
        pb_end(w, lm);
    }
    pb_put_packed_u32(w, 4, &folded, folded ? 1 : 0);
    return e->loc_map[ref - 1] = intern_scratch(e, T_LOCATION, mark);
}

static uint32_t stack(struct encoder *e, const struct profd_sample *s)
{
    uint32_t buf[256];
    uint32_t *idx = s->nlocations <= 256 ? buf : profd_xmalloc(s->nlocations * sizeof(*idx));
    for (uint32_t i = 0; i < s->nlocations; i++)
        idx[i] = location(e, s->locations[i]);
    size_t mark = e->scratch.len;
    pb_put_packed_u32(&e->scratch, 1, idx, s->nlocations);
    if (idx != buf)
        free(idx);
    return intern_scratch(e, T_STACK, mark);
}

/* Decodes up to max bytes of lowercase or uppercase hex; 0 when s is not. */
static size_t unhex(const struct profd_str *s, uint8_t *out, size_t max)
{
    if (s->len != 2 * max || !is_hex(s))
        return 0;
    for (size_t i = 0; i < max; i++)
        out[i] = (uint8_t)hex_byte(s->ptr + 2 * i);
    return max;
}

/* A sample's trace_id/span_id labels as a Link (0 when it has none); the
 * labels it used are marked in used[]. */
static uint32_t link(struct encoder *e, const struct profd_sample *s, bool *used)
{
    uint8_t trace[16] = {0}, span[8] = {0};
    bool any = false;
    for (uint32_t i = 0; i < s->nlabels && i < 64; i++) {
        const struct profd_sample_label *l = &s->labels[i];
        const struct profd_str *key = &e->p->strings[l->key], *val = &e->p->strings[l->str];
        if (key->len == 8 && memcmp(key->ptr, OTLP_LABEL_TRACE_ID, 8) == 0)
            used[i] = unhex(val, trace, 16) != 0;
        else if (key->len == 7 && memcmp(key->ptr, OTLP_LABEL_SPAN_ID, 7) == 0)
            used[i] = unhex(val, span, 8) != 0;
        any |= used[i];
    }
    if (!any)
        return 0;
    size_t mark = e->scratch.len;
    pb_put_bytes_always(&e->scratch, 1, trace, 16);
    pb_put_bytes_always(&e->scratch, 2, span, 8);
    return intern_scratch(e, T_LINK, mark);
}

/* Stacks, links and attribute lists of every sample, shared by the profiles
 * of all sample types. */
static void prepare_samples(struct encoder *e)
{
    const struct profd_profile *p = e->p;
    size_t n = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct profd_sample *s = &p->samples[i];
        bool used[64] = {0};
        e->sample_stack[i] = stack(e, s);
        e->sample_link[i] = link(e, s, used);
        e->attr_start[i] = n;
        profd_block_grow(&e->attr_pool, &e->attr_pool_cap, n + s->nlabels,
                         sizeof(*e->attr_pool));
        for (uint32_t k = 0; k < s->nlabels; k++) {
            const struct profd_sample_label *l = &s->labels[k];
            if (k < 64 && used[k])
                continue;
            uint32_t key = str(e, l->key);
            e->attr_pool[n++] = (l->str || (!l->num_unit && !l->num))
                                    ? attribute(e, key, A_STRING, str(e, l->str), 0, 0)
                                    : attribute(e, key, A_INT, 0, l->num, str(e, l->num_unit));
        }
    }
    e->attr_start[p->nsamples] = n;
}

static void put_value_type(struct pb_writer *w, uint32_t field, uint32_t type, uint32_t unit)
{
    size_t m = pb_begin(w, field);
    pb_put_uint(w, 1, type);
    pb_put_uint(w, 2, unit);
    pb_end(w, m);
}

/* Profile attributes for the pprof fields OTLP lacks. */
static size_t profile_attributes(struct encoder *e, uint32_t *attrs)
{
    const struct profd_profile *p = e->p;
    size_t n = 0;
    if (p->ncomments) {
        size_t mark = e->scratch.len;
        struct pb_writer *w = &e->scratch;
        pb_put_uint(w, 1, intern_string(e, OTLP_ATTR_COMMENT, strlen(OTLP_ATTR_COMMENT)));
        size_t v = pb_begin(w, 2), arr = pb_begin(w, 5);
        for (uint32_t i = 0; i < p->ncomments; i++) {
            const struct profd_str *c =
                (uint64_t)p->comments[i] < p->nstrings ? &p->strings[p->comments[i]] : NULL;
            size_t one = pb_begin(w, 1);
            put_text(w, 1, c ? c->ptr : "", c ? c->len : 0);
            pb_end(w, one);
        }
        pb_end(w, arr);
        pb_end(w, v);
        attrs[n++] = intern_scratch(e, T_ATTRIBUTE, mark);
    }
    static const char *const keys[] = {OTLP_ATTR_DROP_FRAMES, OTLP_ATTR_KEEP_FRAMES,
                                       OTLP_ATTR_DOC_URL};
    const uint32_t values[] = {p->drop_frames, p->keep_frames, p->doc_url};
    for (size_t i = 0; i < 3; i++)
        if (values[i])
            attrs[n++] = attribute_cstr(e, keys[i], p->strings[values[i]].ptr,
                                        p->strings[values[i]].len);
    return n;
}

static void put_profile(struct encoder *e, uint32_t type_index, const uint32_t *attrs,
                        size_t nattrs)
{
    const struct profd_profile *p = e->p;
    struct pb_writer *w = &e->out;
    size_t m = pb_begin(w, 2);
    if (type_index < p->nsample_types)
        put_value_type(w, 1, str(e, p->sample_types[type_index].type),
                       str(e, p->sample_types[type_index].unit));
    for (size_t i = 0; type_index < p->nsample_types && i < p->nsamples; i++) {
        size_t sm = pb_begin(w, 2);
        pb_put_uint(w, 1, e->sample_stack[i]);
        size_t nattrs = e->attr_start[i + 1] - e->attr_start[i];
        if (nattrs)
            pb_put_packed_u32(w, 2, e->attr_pool + e->attr_start[i], nattrs);
        pb_put_uint(w, 3, e->sample_link[i]);
        pb_put_packed_i64(w, 4, &p->samples[i].values[type_index], 1);
        pb_end(w, sm);
    }
    pb_put_fixed64(w, 3, (uint64_t)p->time_nanos);
    pb_put_uint(w, 4, (uint64_t)p->duration_nanos);
    if (p->period_type.type || p->period_type.unit)
        put_value_type(w, 5, str(e, p->period_type.type), str(e, p->period_type.unit));
    pb_put_int(w, 6, p->period);
    pb_put_packed_u32(w, 11, attrs, nattrs);
    pb_end(w, m);
}

static void put_resource(struct pb_writer *w, const struct profd_labels *labels)
{
    size_t m = pb_begin(w, 1);
    for (size_t i = 0; i < labels->n; i++) {
        /* the tenant goes as a header; the delta mark has no OTLP form, a
         * receiver reading every OTLP profile as holding deltas */
        if (transport_label(labels->items[i].name))
            continue;
        const char *key = otlp_label_to_attribute(labels->items[i].name);
        size_t kv = pb_begin(w, 1);
        put_text(w, 1, key, strlen(key));
        size_t v = pb_begin(w, 2);
        put_text(w, 1, labels->items[i].value, strlen(labels->items[i].value));
        pb_end(w, v);
        pb_end(w, kv);
    }
    pb_end(w, m);
}

static void put_scope(struct encoder *e)
{
    struct pb_writer *w = &e->out;
    size_t m = pb_begin(w, 1);
    pb_put_bytes(w, 1, "profd", 5);
    pb_put_bytes(w, 2, PROFD_VERSION, strlen(PROFD_VERSION));
    if (e->p->default_sample_type) {
        const struct profd_str *s = &e->p->strings[e->p->default_sample_type];
        size_t kv = pb_begin(w, 3);
        pb_put_bytes_always(w, 1, OTLP_ATTR_DEFAULT_SAMPLE_TYPE,
                            strlen(OTLP_ATTR_DEFAULT_SAMPLE_TYPE));
        size_t v = pb_begin(w, 2);
        put_text(w, 1, s->ptr, s->len);
        pb_end(w, v);
        pb_end(w, kv);
    }
    pb_end(w, m);
}

/* The record's arrays, cut from one block kept for the next record
 * (block_cache.h): the maps from the model's tables to the dictionary's,
 * zeroed, and each sample's stack, link and first attribute. */
static void record_arrays_get(struct encoder *e)
{
    const struct profd_profile *p = e->p;
    size_t maps = (size_t)p->nstrings + p->nfunctions + p->nmappings + p->nlocations + 4;
    size_t samples = (size_t)p->nsamples + 1, got;
    e->record_arrays_size = samples * sizeof(*e->attr_start) +
                            (maps + 2 * samples) * sizeof(uint32_t);
    e->record_arrays = profd_block_get(e->record_arrays_size, &got);
    e->record_arrays_size = got;
    e->attr_start = e->record_arrays;   /* the 8-byte ones first, aligned as the block is */
    e->str_map = (uint32_t *)(e->attr_start + samples);
    e->fn_map = e->str_map + p->nstrings + 1;
    e->mapping_map = e->fn_map + p->nfunctions + 1;
    e->loc_map = e->mapping_map + p->nmappings + 1;
    e->sample_stack = e->loc_map + p->nlocations + 1;
    e->sample_link = e->sample_stack + samples;
    memset(e->str_map, 0, maps * sizeof(uint32_t));
}

static void put_record(struct encoder *e, const struct profd_record *r)
{
    const struct profd_profile *p = e->p;
    record_arrays_get(e);
    prepare_samples(e);
    uint32_t attrs[4];
    size_t nattrs = profile_attributes(e, attrs);

    struct pb_writer *w = &e->out;
    size_t rm = pb_begin(w, 1);
    put_resource(w, &r->labels);
    size_t sm = pb_begin(w, 2);
    put_scope(e);
    uint32_t types = p->nsample_types ? p->nsample_types : 1;
    for (uint32_t t = 0; t < types; t++)
        put_profile(e, t, attrs, nattrs);
    pb_end(w, sm);
    pb_end(w, rm);

    profd_block_put(e->record_arrays, e->record_arrays_size);
}

void profd_otlp_encode(struct profd_record *const *records, size_t n, uint8_t **out,
                       size_t *len, size_t *skipped, char *err, size_t errlen)
{
    struct encoder e = {0};
    pb_writer_reserve(&e.scratch, 4096);   /* entries are interned from it, even empty ones */
    *skipped = 0;
    if (errlen)
        err[0] = '\0';
    /* Every table's zero entry; the link's is all-zero ids rather than none. */
    static const uint8_t zero_link[28] = {0x0a, 16, [18] = 0x12, [19] = 8};
    for (int t = 1; t < T_COUNT_; t++)
        if (t == T_LINK)
            table_intern(&e.tables[t], zero_link, sizeof(zero_link));
        else
            table_intern(&e.tables[t], NULL, 0);

    for (size_t i = 0; i < n; i++) {
        char why[256];
        e.p = profd_record_profile(records[i], why, sizeof(why));
        if (!e.p) {
            if ((*skipped)++ == 0 && errlen)
                snprintf(err, errlen, "%s", why);
            continue;
        }
        put_record(&e, records[i]);
    }

    struct pb_writer dict = {0};
    for (int t = 1; t < T_COUNT_; t++)
        for (size_t i = 0; i < e.tables[t].n; i++) {
            size_t elen;
            const uint8_t *bytes = entry(&e.tables[t], i, &elen);
            pb_put_bytes_always(&dict, (uint32_t)t, bytes, elen);
        }
    pb_put_bytes_always(&e.out, 2, dict.buf, dict.len);
    free(dict.buf);
    for (int t = 1; t < T_COUNT_; t++) {
        free(e.tables[t].data.buf);
        profd_block_release(e.tables[t].ends, e.tables[t].cap, sizeof(*e.tables[t].ends));
        profd_block_put(e.tables[t].slots, e.tables[t].slots_size);
    }
    free(e.scratch.buf);
    profd_block_release(e.attr_pool, e.attr_pool_cap, sizeof(*e.attr_pool));
    *out = e.out.buf ? e.out.buf : profd_xmalloc(1);
    *len = e.out.len;
}
