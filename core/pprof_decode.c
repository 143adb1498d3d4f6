// SPDX-License-Identifier: Apache-2.0
/*
 * pprof decoder. Four sweeps over the top-level fields, each cheap because
 * fields of other kinds are skipped by length:
 *   1. count every repeated field, so tables are allocated once;
 *   2. strings, sample types, mappings, functions and scalars;
 *   3. locations (their mapping and function ids are resolvable now);
 *   4. samples (their location ids are resolvable now).
 * Strings point into the decompressed buffer, which the profile owns.
 */
#include "pprof.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "arena.h"
#include "gzip.h"
#include "pb.h"
#include "profile.h"

enum {
    F_SAMPLE_TYPE = 1, F_SAMPLE, F_MAPPING, F_LOCATION, F_FUNCTION, F_STRING, F_DROP_FRAMES,
    F_KEEP_FRAMES, F_TIME, F_DURATION, F_PERIOD_TYPE, F_PERIOD, F_COMMENT, F_DEFAULT_TYPE,
    F_DOC_URL, F_LAST_
};

static const char *const field_names[F_LAST_] = {
    "", "sample_type", "sample", "mapping", "location", "function", "string_table",
    "drop_frames", "keep_frames", "time_nanos", "duration_nanos", "period_type", "period",
    "comment", "default_sample_type", "doc_url",
};

/* Maps the ids of one table to refs (position + 1). */
struct idmap {
    bool dense;            /* id == position + 1 for every entry */
    uint64_t *keys;
    uint32_t *refs;
    size_t mask;
};

struct table_ids {
    uint64_t *ids;         /* id of each entry, in table order */
    size_t *offsets;       /* byte offset of each entry */
    struct idmap map;
};

struct decoder {
    const uint8_t *buf;
    size_t len;
    struct profd_profile *p;
    char *err;
    size_t errlen;
    size_t counts[F_LAST_];
    struct table_ids mappings, locations, functions;
};

__attribute__((format(printf, 3, 4))) static bool fail(struct decoder *d, size_t offset,
                                                       const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(d->err, d->errlen, "pprof: %s at byte %zu", msg, offset);
    return false;
}

static bool str_index(struct decoder *d, uint64_t v, uint32_t *out, const char *what, size_t off)
{
    if (v >= d->counts[F_STRING])
        return fail(d, off, "%s string index %lld out of range (table has %zu)", what,
                    (long long)v, d->counts[F_STRING]);
    *out = (uint32_t)v;
    return true;
}

static bool expect_wire(struct decoder *d, const struct pb_field *f, uint32_t wire,
                        const char *what)
{
    if (f->wire == wire)
        return true;
    return fail(d, f->offset, "%s field %u has wire type %u, want %u", what, f->number, f->wire,
                wire);
}

/* ---- ids ---- */

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static bool idmap_build(struct decoder *d, struct table_ids *t, size_t n, const char *what)
{
    struct idmap *m = &t->map;
    m->dense = true;
    for (size_t i = 0; i < n; i++) {
        if (t->ids[i] == 0)
            return fail(d, t->offsets[i], "%s #%zu has id 0", what, i);
        if (t->ids[i] != i + 1)
            m->dense = false;
    }
    if (m->dense)
        return true;
    size_t size = 16;
    while (size < n * 2)
        size *= 2;
    m->mask = size - 1;
    m->keys = profd_xcalloc(size, sizeof(*m->keys));
    m->refs = profd_xcalloc(size, sizeof(*m->refs));
    for (size_t i = 0; i < n; i++) {
        size_t h = mix64(t->ids[i]) & m->mask;
        while (m->keys[h]) {
            if (m->keys[h] == t->ids[i])
                return fail(d, t->offsets[i], "duplicate %s id %llu", what,
                            (unsigned long long)t->ids[i]);
            h = (h + 1) & m->mask;
        }
        m->keys[h] = t->ids[i];
        m->refs[h] = (uint32_t)(i + 1);
    }
    return true;
}

/* Returns the ref for id, or 0 when the table has no such id. */
static inline uint32_t idmap_get(const struct idmap *m, uint64_t id, size_t n)
{
    if (m->dense)
        return id >= 1 && id <= n ? (uint32_t)id : 0;
    if (!m->keys || id == 0)
        return 0;
    for (size_t h = mix64(id) & m->mask; m->keys[h]; h = (h + 1) & m->mask)
        if (m->keys[h] == id)
            return m->refs[h];
    return 0;
}

static void table_ids_free(struct table_ids *t)
{
    free(t->ids);
    free(t->offsets);
    free(t->map.keys);
    free(t->map.refs);
}

/* ---- sweep 1: counting ---- */

static bool count_fields(struct decoder *d)
{
    static const uint8_t wire_of[F_LAST_] = {
        [F_SAMPLE_TYPE] = PB_LEN, [F_SAMPLE] = PB_LEN, [F_MAPPING] = PB_LEN,
        [F_LOCATION] = PB_LEN, [F_FUNCTION] = PB_LEN, [F_STRING] = PB_LEN,
        [F_PERIOD_TYPE] = PB_LEN,
    };
    struct pb_reader r;
    struct pb_field f;
    const char *err;
    int rc;
    pb_reader_init(&r, d->buf, d->buf, d->len);
    while ((rc = pb_next(&r, &f, &err)) > 0) {
        if (f.number >= F_LAST_)
            continue;
        if (f.number == F_COMMENT) {
            if (f.wire == PB_LEN) {
                ptrdiff_t n = pb_packed_count(f.data, f.len);
                if (n < 0)
                    return fail(d, f.offset, "malformed packed comment");
                d->counts[F_COMMENT] += (size_t)n;
                continue;
            }
        }
        if (!expect_wire(d, &f, wire_of[f.number], field_names[f.number]))
            return false;
        if (f.number == F_TIME && d->counts[F_TIME])
            return fail(d, f.offset, "second time_nanos: concatenated profiles are not supported");
        d->counts[f.number]++;
    }
    if (rc < 0)
        return fail(d, f.offset, "%s", err);
    if (d->counts[F_STRING] == 0)
        return fail(d, 0, "string_table is empty; entry 0 must be \"\"");
    if (d->counts[F_STRING] > UINT32_MAX || d->counts[F_LOCATION] >= UINT32_MAX ||
        d->counts[F_FUNCTION] >= UINT32_MAX || d->counts[F_MAPPING] >= UINT32_MAX)
        return fail(d, 0, "table too large");
    return true;
}

/* ---- sweep 2 ---- */

/* Field setter of a message made only of varints: false stops the decode. */
typedef bool (*varint_setter)(struct decoder *d, void *target, uint32_t number, uint64_t value,
                              size_t offset);

/* Walks a message whose fields 1..max_field are all varints, calling set for
 * each; higher (unknown) fields are skipped. */
static bool each_varint_field(struct decoder *d, const struct pb_field *outer, uint32_t max_field,
                              const char *what, varint_setter set, void *target)
{
    struct pb_reader r;
    struct pb_field f;
    const char *err;
    int rc;
    pb_reader_init(&r, d->buf, outer->data, outer->len);
    while ((rc = pb_next(&r, &f, &err)) > 0) {
        if (f.number > max_field)
            continue;
        if (!expect_wire(d, &f, PB_VARINT, what) || !set(d, target, f.number, f.value, f.offset))
            return false;
    }
    return rc == 0 || fail(d, f.offset, "%s: %s", what, err);
}

static bool set_value_type(struct decoder *d, void *target, uint32_t number, uint64_t v, size_t off)
{
    struct profd_value_type *vt = target;
    return str_index(d, v, number == 1 ? &vt->type : &vt->unit, "ValueType", off);
}

static bool decode_value_type(struct decoder *d, const struct pb_field *outer,
                              struct profd_value_type *vt)
{
    return each_varint_field(d, outer, 2, "ValueType", set_value_type, vt);
}

struct table_entry {
    void *entry;
    uint64_t *id;
};

static bool set_mapping(struct decoder *d, void *target, uint32_t number, uint64_t v, size_t off)
{
    struct table_entry *t = target;
    struct profd_mapping *m = t->entry;
    switch (number) {
    case 1: *t->id = v; return true;
    case 2: m->memory_start = v; return true;
    case 3: m->memory_limit = v; return true;
    case 4: m->file_offset = v; return true;
    case 5: return str_index(d, v, &m->filename, "Mapping.filename", off);
    case 6: return str_index(d, v, &m->build_id, "Mapping.build_id", off);
    case 7: m->has_functions = v != 0; return true;
    case 8: m->has_filenames = v != 0; return true;
    case 9: m->has_line_numbers = v != 0; return true;
    default: m->has_inline_frames = v != 0; return true;
    }
}

static bool decode_mapping(struct decoder *d, const struct pb_field *outer, size_t i)
{
    struct table_entry t = {&d->p->mappings[i], &d->mappings.ids[i]};
    d->mappings.offsets[i] = outer->offset;
    return each_varint_field(d, outer, 10, "Mapping", set_mapping, &t);
}

static bool set_function(struct decoder *d, void *target, uint32_t number, uint64_t v, size_t off)
{
    struct table_entry *t = target;
    struct profd_function *fn = t->entry;
    switch (number) {
    case 1: *t->id = v; return true;
    case 2: return str_index(d, v, &fn->name, "Function.name", off);
    case 3: return str_index(d, v, &fn->system_name, "Function.system_name", off);
    case 4: return str_index(d, v, &fn->filename, "Function.filename", off);
    default: fn->start_line = (int64_t)v; return true;
    }
}

static bool decode_function(struct decoder *d, const struct pb_field *outer, size_t i)
{
    struct table_entry t = {&d->p->functions[i], &d->functions.ids[i]};
    d->functions.offsets[i] = outer->offset;
    return each_varint_field(d, outer, 5, "Function", set_function, &t);
}

struct comment_sink {
    struct decoder *d;
    size_t offset;
};

static bool add_comment(void *arg, uint64_t v)
{
    struct comment_sink *s = arg;
    struct profd_profile *p = s->d->p;
    uint32_t idx = 0;
    if (!str_index(s->d, v, &idx, "comment", s->offset))
        return false;
    p->comments[p->ncomments++] = idx;
    return true;
}

static bool decode_scalar(struct decoder *d, const struct pb_field *f)
{
    struct profd_profile *p = d->p;
    switch (f->number) {
    case F_DROP_FRAMES: return str_index(d, f->value, &p->drop_frames, "drop_frames", f->offset);
    case F_KEEP_FRAMES: return str_index(d, f->value, &p->keep_frames, "keep_frames", f->offset);
    case F_DEFAULT_TYPE:
        return str_index(d, f->value, &p->default_sample_type, "default_sample_type", f->offset);
    case F_DOC_URL: return str_index(d, f->value, &p->doc_url, "doc_url", f->offset);
    case F_TIME: p->time_nanos = (int64_t)f->value; return true;
    case F_DURATION: p->duration_nanos = (int64_t)f->value; return true;
    case F_PERIOD: p->period = (int64_t)f->value; return true;
    case F_PERIOD_TYPE: return decode_value_type(d, f, &p->period_type);
    case F_COMMENT: {
        struct comment_sink s = {d, f->offset};
        return pb_each_varint(f, add_comment, &s) ||
               (d->err[0] ? false : fail(d, f->offset, "malformed comment"));
    }
    }
    return true;
}

static bool sweep_tables(struct decoder *d)
{
    struct profd_profile *p = d->p;
    struct pb_reader r;
    struct pb_field f;
    const char *err;
    size_t ns = 0, nt = 0, nm = 0, nf = 0;
    pb_reader_init(&r, d->buf, d->buf, d->len);
    while (pb_next(&r, &f, &err) > 0) {
        bool ok = true;
        switch (f.number) {
        case F_STRING:
            p->strings[ns++] = (struct profd_str){(const char *)f.data, (uint32_t)f.len};
            break;
        case F_SAMPLE_TYPE: ok = decode_value_type(d, &f, &p->sample_types[nt++]); break;
        case F_MAPPING: ok = decode_mapping(d, &f, nm++); break;
        case F_FUNCTION: ok = decode_function(d, &f, nf++); break;
        case F_SAMPLE:
        case F_LOCATION: break;
        default:
            if (f.number < F_LAST_)
                ok = decode_scalar(d, &f);
        }
        if (!ok)
            return false;
    }
    if (p->strings[0].len != 0)
        return fail(d, 0, "string_table[0] must be \"\"");
    return idmap_build(d, &d->mappings, nm, "mapping") &&
           idmap_build(d, &d->functions, nf, "function");
}

/* ---- sweep 3: locations ---- */

static bool set_line(struct decoder *d, void *target, uint32_t number, uint64_t v, size_t off)
{
    struct profd_line *ln = target;
    if (number == 1) {
        ln->function = idmap_get(&d->functions.map, v, d->p->nfunctions);
        if (!ln->function && v)
            return fail(d, off, "Line refers to unknown function id %llu", (unsigned long long)v);
    } else if (number == 2) {
        ln->line = (int64_t)v;
    } else {
        ln->column = (int64_t)v;
    }
    return true;
}

static bool decode_location(struct decoder *d, const struct pb_field *outer, size_t i)
{
    struct profd_location *loc = &d->p->locations[i];
    struct pb_reader r;
    struct pb_field f;
    const char *err;
    int rc;
    uint32_t nlines = 0;
    d->locations.offsets[i] = outer->offset;
    pb_reader_init(&r, d->buf, outer->data, outer->len);
    while ((rc = pb_next(&r, &f, &err)) > 0)
        nlines += f.number == 4;
    if (rc < 0)
        return fail(d, f.offset, "Location: %s", err);
    if (nlines)
        loc->lines = profd_arena_zalloc(d->p->arena, nlines * sizeof(*loc->lines));
    pb_reader_init(&r, d->buf, outer->data, outer->len);
    while (pb_next(&r, &f, &err) > 0) {
        if (f.number > 5)
            continue;
        if (!expect_wire(d, &f, f.number == 4 ? PB_LEN : PB_VARINT, "Location"))
            return false;
        switch (f.number) {
        case 1: d->locations.ids[i] = f.value; break;
        case 2:
            loc->mapping = idmap_get(&d->mappings.map, f.value, d->p->nmappings);
            if (!loc->mapping && f.value)
                return fail(d, f.offset, "Location refers to unknown mapping id %llu",
                            (unsigned long long)f.value);
            break;
        case 3: loc->address = f.value; break;
        case 4:
            if (!each_varint_field(d, &f, 3, "Line", set_line, &loc->lines[loc->nlines++]))
                return false;
            break;
        case 5: loc->is_folded = f.value != 0; break;
        }
    }
    return true;
}

static bool sweep_locations(struct decoder *d)
{
    struct pb_reader r;
    struct pb_field f;
    const char *err;
    size_t n = 0;
    pb_reader_init(&r, d->buf, d->buf, d->len);
    while (pb_next(&r, &f, &err) > 0)
        if (f.number == F_LOCATION && !decode_location(d, &f, n++))
            return false;
    return idmap_build(d, &d->locations, n, "location");
}

/* ---- sweep 4: samples ---- */

struct sample_fill {
    struct decoder *d;
    struct profd_sample *s;
    size_t offset;
    size_t nvalues;
};

static bool add_location(void *arg, uint64_t id)
{
    struct sample_fill *sf = arg;
    uint32_t ref = idmap_get(&sf->d->locations.map, id, sf->d->p->nlocations);
    if (!ref)
        return fail(sf->d, sf->offset, "sample refers to unknown location id %llu",
                    (unsigned long long)id);
    sf->s->locations[sf->s->nlocations++] = ref;
    return true;
}

static bool add_value(void *arg, uint64_t v)
{
    struct sample_fill *sf = arg;
    sf->s->values[sf->nvalues++] = (int64_t)v;
    return true;
}

static bool set_label(struct decoder *d, void *target, uint32_t number, uint64_t v, size_t off)
{
    struct profd_sample_label *l = target;
    switch (number) {
    case 1: return str_index(d, v, &l->key, "Label.key", off);
    case 2: return str_index(d, v, &l->str, "Label.str", off);
    case 3: l->num = (int64_t)v; return true;
    default: return str_index(d, v, &l->num_unit, "Label.num_unit", off);
    }
}

static bool count_repeated(struct decoder *d, const struct pb_field *f, size_t *n)
{
    if (f->wire == PB_VARINT) {
        (*n)++;
        return true;
    }
    if (f->wire != PB_LEN)
        return fail(d, f->offset, "Sample field %u has wire type %u", f->number, f->wire);
    ptrdiff_t c = pb_packed_count(f->data, f->len);
    if (c < 0)
        return fail(d, f->offset, "malformed packed Sample field %u", f->number);
    *n += (size_t)c;
    return true;
}

static bool decode_sample(struct decoder *d, const struct pb_field *outer, struct profd_sample *s)
{
    struct pb_reader r;
    struct pb_field f;
    const char *err;
    int rc;
    size_t nlocs = 0, nvalues = 0, nlabels = 0;
    pb_reader_init(&r, d->buf, outer->data, outer->len);
    while ((rc = pb_next(&r, &f, &err)) > 0) {
        if (f.number == 1 && !count_repeated(d, &f, &nlocs))
            return false;
        if (f.number == 2 && !count_repeated(d, &f, &nvalues))
            return false;
        if (f.number == 3 && !expect_wire(d, &f, PB_LEN, "Sample.label"))
            return false;
        nlabels += f.number == 3;
    }
    if (rc < 0)
        return fail(d, f.offset, "Sample: %s", err);
    if (nvalues != d->p->nsample_types)
        return fail(d, outer->offset, "sample has %zu values, profile has %u sample types",
                    nvalues, d->p->nsample_types);
    struct profd_arena *a = d->p->arena;
    s->locations = nlocs ? profd_arena_alloc(a, nlocs * sizeof(*s->locations)) : NULL;
    s->values = nvalues ? profd_arena_alloc(a, nvalues * sizeof(*s->values)) : NULL;
    s->labels = nlabels ? profd_arena_zalloc(a, nlabels * sizeof(*s->labels)) : NULL;
    struct sample_fill sf = {d, s, outer->offset, 0};
    pb_reader_init(&r, d->buf, outer->data, outer->len);
    while (pb_next(&r, &f, &err) > 0) {
        if (f.number == 1 && !pb_each_varint(&f, add_location, &sf))
            return false;
        if (f.number == 2)
            pb_each_varint(&f, add_value, &sf);
        if (f.number == 3 && !each_varint_field(d, &f, 4, "Label", set_label, &s->labels[s->nlabels++]))
            return false;
    }
    return true;
}

static bool sweep_samples(struct decoder *d)
{
    struct pb_reader r;
    struct pb_field f;
    const char *err;
    size_t n = 0;
    pb_reader_init(&r, d->buf, d->buf, d->len);
    while (pb_next(&r, &f, &err) > 0)
        if (f.number == F_SAMPLE && !decode_sample(d, &f, &d->p->samples[n++]))
            return false;
    return true;
}

/* ---- entry points ---- */

static void *table(struct profd_profile *p, size_t n, size_t elem)
{
    return n ? profd_arena_zalloc(p->arena, n * elem) : NULL;
}

static void alloc_tables(struct decoder *d)
{
    struct profd_profile *p = d->p;
    size_t *c = d->counts;
    p->strings = table(p, c[F_STRING], sizeof(*p->strings));
    p->nstrings = p->strings_cap = (uint32_t)c[F_STRING];
    p->sample_types = table(p, c[F_SAMPLE_TYPE], sizeof(*p->sample_types));
    p->nsample_types = (uint32_t)c[F_SAMPLE_TYPE];
    p->samples = table(p, c[F_SAMPLE], sizeof(*p->samples));
    p->nsamples = p->samples_cap = c[F_SAMPLE];
    p->mappings = table(p, c[F_MAPPING], sizeof(*p->mappings));
    p->nmappings = p->mappings_cap = (uint32_t)c[F_MAPPING];
    p->locations = table(p, c[F_LOCATION], sizeof(*p->locations));
    p->nlocations = p->locations_cap = (uint32_t)c[F_LOCATION];
    p->functions = table(p, c[F_FUNCTION], sizeof(*p->functions));
    p->nfunctions = p->functions_cap = (uint32_t)c[F_FUNCTION];
    p->comments = table(p, c[F_COMMENT], sizeof(*p->comments));
    struct table_ids *t[3] = {&d->mappings, &d->locations, &d->functions};
    size_t n[3] = {c[F_MAPPING], c[F_LOCATION], c[F_FUNCTION]};
    for (int i = 0; i < 3; i++) {
        t[i]->ids = profd_xcalloc(n[i], sizeof(*t[i]->ids));
        t[i]->offsets = profd_xcalloc(n[i], sizeof(*t[i]->offsets));
    }
}

struct profd_profile *profd_pprof_decode_owned(uint8_t *raw, size_t len, char *err, size_t errlen)
{
    struct decoder d = {.buf = raw, .len = len, .err = err, .errlen = errlen};
    err[0] = '\0';
    d.p = profd_xcalloc(1, sizeof(*d.p));
    d.p->backing = raw;
    d.p->arena = profd_arena_create(len + len / 2);   /* tables + samples fit in one block */
    bool ok = count_fields(&d);
    if (ok) {
        alloc_tables(&d);
        ok = sweep_tables(&d) && sweep_locations(&d) && sweep_samples(&d);
    }
    table_ids_free(&d.mappings);
    table_ids_free(&d.locations);
    table_ids_free(&d.functions);
    if (!ok) {
        profd_profile_free(d.p);
        return NULL;
    }
    return d.p;
}

struct profd_profile *profd_pprof_decode(const uint8_t *data, size_t len, size_t max_decoded,
                                         char *err, size_t errlen)
{
    uint8_t *raw;
    size_t raw_len;
    if (profd_is_gzip(data, len)) {
        if (profd_gunzip(data, len, max_decoded, &raw, &raw_len, err, errlen) < 0)
            return NULL;
    } else {
        if (len > max_decoded) {
            snprintf(err, errlen, "pprof: %zu bytes exceed the limit of %zu", len, max_decoded);
            return NULL;
        }
        raw = profd_xmalloc(len);
        memcpy(raw, data, len);
        raw_len = len;
    }
    return profd_pprof_decode_owned(raw, raw_len, err, errlen);
}
