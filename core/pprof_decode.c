// SPDX-License-Identifier: Apache-2.0
/*
 * pprof decoder, in two sweeps over the top-level fields:
 *   1. count every repeated field, so tables are allocated once; the ids
 *      of mappings, locations and functions are first taken to be their
 *      positions + 1, as encoders write them, and that is checked in
 *      sweep 2; a profile whose ids are otherwise (or that fails) is
 *      decoded again with every entry's id read in this sweep (field 1,
 *      which encoders write first), so references resolve whatever the
 *      ids and their order;
 *   2. decode every field, each message in one pass: its repeated parts
 *      gather in scratch arrays and are copied into the arena once the
 *      message is read. A large profile's second half is decoded on a
 *      thread of its own, into an arena of its own, while the first is.
 * Strings point into the decompressed buffer, which the profile owns.
 * The arrays a decode grows (ids, offsets, scratch) stay with the thread
 * for its next decode while they are small, so a stream of small profiles
 * decodes without growing them again.
 */
#include "pprof.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "arena.h"
#include "gzip.h"
#include "pb.h"
#include "pprof_fields.h"
#include "profile.h"
#include "thread_slot.h"

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
    size_t n, cap;
    struct idmap map;
};

/* A message's repeated parts while it is read. */
struct scratch {
    struct profd_line *lines;
    uint64_t *locations, *values;
    struct profd_sample_label *labels;
    size_t lines_cap, locations_cap, values_cap, labels_cap;
};

/* What a decode grows, kept by its thread for the next one (see
 * decoder_take_arrays). */
struct decode_arrays {
    struct table_ids mappings, locations, functions;
    struct scratch scratch;
};

/* Where a part of sweep 2 starts: a top-level field's offset, and how many
 * of each field come before it. */
struct part_start {
    size_t offset;
    size_t before[F_LAST_];
};

struct decoder {
    const uint8_t *buf;
    size_t len;
    struct profd_profile *p;
    struct profd_arena *arena;   /* where this decoder's messages go */
    char *err;
    size_t errlen;
    size_t counts[F_LAST_];
    struct decode_arrays a;
    struct part_start second_half;   /* offset 0: decoded whole, on one thread */
    /* Sweep 1 read no ids: every table's are taken to be 1..n, which sweep
     * 2 checks (a mismatch fails the decode). */
    bool ids_assumed;
    /* Decoding the second half: the offsets of its fields that set the
     * profile's single values, left for after the first half. */
    bool defers_scalars;
    size_t *scalars;
    size_t nscalars, scalars_cap;
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

/* Room in a scratch array for element `need - 1`. */
static inline void *room(void *items_ptr, size_t *cap, size_t need, size_t elem)
{
    if (need > *cap)
        profd_grow(items_ptr, cap, need, elem);
    return *(void **)items_ptr;
}

/* ---- ids ---- */

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static bool idmap_build(struct decoder *d, struct table_ids *t, const char *what)
{
    struct idmap *m = &t->map;
    size_t n = t->n;
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
static inline uint32_t idmap_get(const struct table_ids *t, uint64_t id)
{
    const struct idmap *m = &t->map;
    if (m->dense)
        return id >= 1 && id <= t->n ? (uint32_t)id : 0;
    if (!m->keys || id == 0)
        return 0;
    for (size_t h = mix64(id) & m->mask; m->keys[h]; h = (h + 1) & m->mask)
        if (m->keys[h] == id)
            return m->refs[h];
    return 0;
}

/* Entry i's id field (any after the first) must repeat the id read in
 * sweep 1, or be i + 1 when ids are assumed. */
static bool same_id(struct decoder *d, const struct table_ids *t, size_t i, uint64_t v,
                    size_t off, const char *what)
{
    if (d->ids_assumed)
        return v == i + 1 || fail(d, off, "%s id %llu is not its position + 1", what,
                                  (unsigned long long)v);
    return v == t->ids[i] || fail(d, off, "%s has two different ids", what);
}

/* An entry without an id is refused in sweep 1 (id 0), or here when ids
 * are assumed. */
static bool has_id(struct decoder *d, bool seen, size_t off, const char *what)
{
    return seen || !d->ids_assumed || fail(d, off, "%s has no id", what);
}

/* Takes a table's n ids to be 1..n. */
static void assume_ids(struct table_ids *t, size_t n)
{
    t->n = n;
    t->map.dense = true;
}

/* Reads the id (field 1) of the table entry in message outer into t. */
static bool read_entry_id(struct decoder *d, const struct pb_field *outer, struct table_ids *t,
                          const char *what)
{
    struct pb_reader r;
    struct pb_field f;
    const char *err;
    int rc;
    uint64_t id = 0;
    pb_reader_init(&r, d->buf, outer->data, outer->len);
    while ((rc = pb_next(&r, &f, &err)) > 0)
        if (f.number == 1) {
            if (!expect_wire(d, &f, PB_VARINT, what))
                return false;
            id = f.value;
            break;
        }
    if (rc < 0)
        return fail(d, f.offset, "%s: %s", what, err);
    if (t->n == t->cap) {
        size_t cap = t->cap;
        profd_grow(&t->ids, &cap, t->n + 1, sizeof(*t->ids));
        profd_grow(&t->offsets, &t->cap, t->n + 1, sizeof(*t->offsets));
    }
    t->ids[t->n] = id;
    t->offsets[t->n++] = outer->offset;
    return true;
}

/* The most a thread keeps between decodes, of the decode's arrays and of
 * a check's inflated bytes and model. */
enum { KEPT_MAX_BYTES = 1 << 20, CHECK_KEPT_MAX_BYTES = 4 << 20 };

/* What a thread keeps: the arrays a decode grows, and what a check
 * inflates and builds (see profd_pprof_check). */
struct kept {
    struct decode_arrays arrays;
    uint8_t *raw;
    size_t raw_cap;
    struct profd_arena *arena;
};

static void free_scratch(struct scratch *sc)
{
    free(sc->lines);
    free(sc->locations);
    free(sc->values);
    free(sc->labels);
}

static void free_arrays(struct decode_arrays *a)
{
    struct table_ids *t[3] = {&a->mappings, &a->locations, &a->functions};
    for (int i = 0; i < 3; i++) {
        free(t[i]->ids);
        free(t[i]->offsets);
        free(t[i]->map.keys);
        free(t[i]->map.refs);
    }
    free_scratch(&a->scratch);
}

/* A thread's kept state, at its exit. */
static void kept_destroy(void *arg)
{
    struct kept *k = arg;
    free_arrays(&k->arrays);
    free(k->raw);
    profd_arena_destroy(k->arena);
    free(k);
}

static struct profd_thread_slot kept_slot = PROFD_THREAD_SLOT(sizeof(struct kept), kept_destroy);

/* Starts d with the arrays this thread kept (the thread keeps none while
 * d has them). */
static void decoder_take_arrays(struct decoder *d)
{
    struct kept *k = profd_thread_slot_get(&kept_slot);
    d->a = k->arrays;
    k->arrays = (struct decode_arrays){0};
}

/* Ends d: its id maps are freed, its arrays given back to the thread, or
 * freed when they grew past KEPT_MAX_BYTES. */
static void decoder_end(struct decoder *d)
{
    struct table_ids *t[3] = {&d->a.mappings, &d->a.locations, &d->a.functions};
    size_t bytes = 0;
    for (int i = 0; i < 3; i++) {
        free(t[i]->map.keys);
        free(t[i]->map.refs);
        t[i]->map = (struct idmap){0};
        t[i]->n = 0;
        bytes += t[i]->cap * (sizeof(*t[i]->ids) + sizeof(*t[i]->offsets));
    }
    const struct scratch *sc = &d->a.scratch;
    bytes += sc->lines_cap * sizeof(*sc->lines) + sc->locations_cap * sizeof(*sc->locations) +
             sc->values_cap * sizeof(*sc->values) + sc->labels_cap * sizeof(*sc->labels);
    struct kept *k = profd_thread_slot_get(&kept_slot);
    if (bytes <= KEPT_MAX_BYTES)
        k->arrays = d->a;
    else
        free_arrays(&d->a);
}

/* ---- sweep 1: counting, ids ---- */

/* From this size on, a profile's two halves are decoded on two threads. */
enum { TWO_THREADS_FROM = 4 << 20 };

static bool read_field_ids(struct decoder *d, const struct pb_field *f)
{
    switch (f->number) {
    case F_MAPPING: return read_entry_id(d, f, &d->a.mappings, "Mapping");
    case F_LOCATION: return read_entry_id(d, f, &d->a.locations, "Location");
    case F_FUNCTION: return read_entry_id(d, f, &d->a.functions, "Function");
    }
    return true;
}

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
        if (d->len >= TWO_THREADS_FROM && !d->second_half.offset &&
            f.offset >= d->len / 2) {
            d->second_half.offset = f.offset;
            memcpy(d->second_half.before, d->counts, sizeof(d->counts));
        }
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
        if (!d->ids_assumed && !read_field_ids(d, &f))
            return false;
    }
    if (rc < 0)
        return fail(d, f.offset, "%s", err);
    if (d->counts[F_STRING] == 0)
        return fail(d, 0, "string_table is empty; entry 0 must be \"\"");
    if (d->counts[F_STRING] > UINT32_MAX || d->counts[F_LOCATION] >= UINT32_MAX ||
        d->counts[F_FUNCTION] >= UINT32_MAX || d->counts[F_MAPPING] >= UINT32_MAX)
        return fail(d, 0, "table too large");
    if (d->ids_assumed) {
        assume_ids(&d->a.mappings, d->counts[F_MAPPING]);
        assume_ids(&d->a.locations, d->counts[F_LOCATION]);
        assume_ids(&d->a.functions, d->counts[F_FUNCTION]);
        return true;
    }
    return idmap_build(d, &d->a.mappings, "mapping") && idmap_build(d, &d->a.locations, "location") &&
           idmap_build(d, &d->a.functions, "function");
}

/* ---- sweep 2: small messages ---- */

/* Field setter of a message made only of varints: false stops the decode. */
typedef bool (*varint_setter)(struct decoder *d, void *target, uint32_t number, uint64_t value,
                              size_t offset);

/* Walks a message whose fields 1..max_field are all varints, calling set for
 * each; higher (unknown) fields are skipped. */
static inline bool each_varint_field(struct decoder *d, const struct pb_field *outer,
                                     uint32_t max_field, const char *what, varint_setter set,
                                     void *target)
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

/* A mapping or function being decoded: its entry, its index, and whether
 * its id was seen. */
struct table_entry {
    void *entry;
    size_t index;
    bool id_seen;
};

static bool set_mapping(struct decoder *d, void *target, uint32_t number, uint64_t v, size_t off)
{
    struct table_entry *t = target;
    struct profd_mapping *m = t->entry;
    switch (number) {
    case 1: t->id_seen = true; return same_id(d, &d->a.mappings, t->index, v, off, "Mapping");
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
    struct table_entry t = {&d->p->mappings[i], i, false};
    return each_varint_field(d, outer, 10, "Mapping", set_mapping, &t) &&
           has_id(d, t.id_seen, outer->offset, "Mapping");
}

static bool set_function(struct decoder *d, void *target, uint32_t number, uint64_t v, size_t off)
{
    struct table_entry *t = target;
    struct profd_function *fn = t->entry;
    switch (number) {
    case 1:
        t->id_seen = true;
        return same_id(d, &d->a.functions, t->index, v, off, "Function");
    case 2: return str_index(d, v, &fn->name, "Function.name", off);
    case 3: return str_index(d, v, &fn->system_name, "Function.system_name", off);
    case 4: return str_index(d, v, &fn->filename, "Function.filename", off);
    default: fn->start_line = (int64_t)v; return true;
    }
}

static bool decode_function(struct decoder *d, const struct pb_field *outer, size_t i)
{
    struct table_entry t = {&d->p->functions[i], i, false};
    return each_varint_field(d, outer, 5, "Function", set_function, &t) &&
           has_id(d, t.id_seen, outer->offset, "Function");
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

/* ---- sweep 2: locations ---- */

static bool set_line(struct decoder *d, void *target, uint32_t number, uint64_t v, size_t off)
{
    struct profd_line *ln = target;
    if (number == 1) {
        ln->function = idmap_get(&d->a.functions, v);
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
    struct scratch *sc = &d->a.scratch;
    struct pb_reader r;
    struct pb_field f;
    const char *err;
    int rc;
    size_t nlines = 0;
    bool id_seen = false;
    pb_reader_init(&r, d->buf, outer->data, outer->len);
    while ((rc = pb_next(&r, &f, &err)) > 0) {
        if (f.number > 5)
            continue;
        if (!expect_wire(d, &f, f.number == 4 ? PB_LEN : PB_VARINT, "Location"))
            return false;
        switch (f.number) {
        case 1:
            id_seen = true;
            if (!same_id(d, &d->a.locations, i, f.value, f.offset, "Location"))
                return false;
            break;
        case 2:
            loc->mapping = idmap_get(&d->a.mappings, f.value);
            if (!loc->mapping && f.value)
                return fail(d, f.offset, "Location refers to unknown mapping id %llu",
                            (unsigned long long)f.value);
            break;
        case 3: loc->address = f.value; break;
        case 4: {
            struct profd_line *ln = room(&sc->lines, &sc->lines_cap, nlines + 1, sizeof(*ln));
            ln += nlines++;
            *ln = (struct profd_line){0};
            if (!each_varint_field(d, &f, 3, "Line", set_line, ln))
                return false;
            break;
        }
        case 5: loc->is_folded = f.value != 0; break;
        }
    }
    if (rc < 0)
        return fail(d, f.offset, "Location: %s", err);
    if (!has_id(d, id_seen, outer->offset, "Location"))
        return false;
    if (nlines) {
        loc->lines = profd_arena_alloc(d->arena, nlines * sizeof(*loc->lines));
        memcpy(loc->lines, sc->lines, nlines * sizeof(*loc->lines));
        loc->nlines = (uint32_t)nlines;
    }
    return true;
}

/* ---- sweep 2: samples ---- */

/* Appends the values of repeated varint field f (packed or not) to the
 * scratch array *v of *n values. */
static bool gather_varints(struct decoder *d, const struct pb_field *f, uint64_t **v,
                           size_t *cap, size_t *n)
{
    if (f->wire == PB_VARINT) {
        uint64_t *out = room(v, cap, *n + 1, sizeof(**v));
        out[(*n)++] = f->value;
        return true;
    }
    if (f->wire != PB_LEN)
        return fail(d, f->offset, "Sample field %u has wire type %u", f->number, f->wire);
    struct pb_reader r;
    pb_reader_init(&r, f->data, f->data, f->len);
    /* A value takes at least a byte. The array and count are kept in
     * locals: a value stored through *v may alias *n for the compiler. */
    uint64_t *out = room(v, cap, *n + f->len, sizeof(**v));
    size_t k = *n;
    while (r.p < r.end)
        if (!pb_varint(&r, &out[k++]))
            return fail(d, f->offset, "malformed packed Sample field %u", f->number);
    *n = k;
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

/* Copies the gathered parts of sample s into the arena, in one block
 * (values, labels, then location refs: each part aligned for the next),
 * resolving location ids. */
static bool store_sample(struct decoder *d, const struct pb_field *outer, struct profd_sample *s,
                         size_t nlocs, size_t nvalues, size_t nlabels)
{
    const struct scratch *sc = &d->a.scratch;
    if (nvalues != d->p->nsample_types)
        return fail(d, outer->offset, "sample has %zu values, profile has %u sample types",
                    nvalues, d->p->nsample_types);
    size_t values_size = nvalues * sizeof(*s->values), labels_size = nlabels * sizeof(*s->labels);
    size_t size = values_size + labels_size + nlocs * sizeof(*s->locations);
    char *block = size ? profd_arena_alloc(d->arena, size) : NULL;
    s->values = nvalues ? (int64_t *)block : NULL;
    s->labels = nlabels ? (struct profd_sample_label *)(block + values_size) : NULL;
    s->locations = nlocs ? (uint32_t *)(block + values_size + labels_size) : NULL;
    const struct table_ids *t = &d->a.locations;
    size_t unknown = nlocs;
    if (t->map.dense) {   /* ids are refs: only their range to check */
        for (size_t i = 0; i < nlocs; i++) {
            uint64_t id = sc->locations[i];
            s->locations[i] = (uint32_t)id;
            if (id - 1 >= t->n && unknown == nlocs)
                unknown = i;
        }
    } else {
        for (size_t i = 0; i < nlocs; i++)
            if (!(s->locations[i] = idmap_get(t, sc->locations[i])) && unknown == nlocs)
                unknown = i;
    }
    if (unknown < nlocs)
        return fail(d, outer->offset, "sample refers to unknown location id %llu",
                    (unsigned long long)sc->locations[unknown]);
    s->nlocations = (uint32_t)nlocs;
    for (size_t i = 0; i < nvalues; i++)
        s->values[i] = (int64_t)sc->values[i];
    if (nlabels)
        memcpy(s->labels, sc->labels, nlabels * sizeof(*s->labels));
    s->nlabels = (uint32_t)nlabels;
    return true;
}

static bool decode_sample(struct decoder *d, const struct pb_field *outer, struct profd_sample *s)
{
    struct scratch *sc = &d->a.scratch;
    struct pb_reader r;
    struct pb_field f;
    const char *err;
    int rc;
    size_t nlocs = 0, nvalues = 0, nlabels = 0;
    pb_reader_init(&r, d->buf, outer->data, outer->len);
    while ((rc = pb_next(&r, &f, &err)) > 0) {
        bool ok = true;
        if (f.number == 1) {
            ok = gather_varints(d, &f, &sc->locations, &sc->locations_cap, &nlocs);
        } else if (f.number == 2) {
            ok = gather_varints(d, &f, &sc->values, &sc->values_cap, &nvalues);
        } else if (f.number == 3) {
            struct profd_sample_label *l = room(&sc->labels, &sc->labels_cap, nlabels + 1,
                                                sizeof(*l));
            l += nlabels++;
            *l = (struct profd_sample_label){0};
            ok = expect_wire(d, &f, PB_LEN, "Sample.label") &&
                 each_varint_field(d, &f, 4, "Label", set_label, l);
        }
        if (!ok)
            return false;
    }
    if (rc < 0)
        return fail(d, f.offset, "Sample: %s", err);
    return store_sample(d, outer, s, nlocs, nvalues, nlabels);
}

/* ---- sweep 2 ---- */

/* Notes the offset of a field that sets a single value of the profile. */
static void defer_scalar(struct decoder *d, const struct pb_field *f)
{
    if (d->nscalars == d->scalars_cap)
        profd_grow(&d->scalars, &d->scalars_cap, d->nscalars + 1, sizeof(*d->scalars));
    d->scalars[d->nscalars++] = f->offset;
}

/* Decodes the top-level fields from part->offset to the end of the buffer
 * or to stop, each table's entries from the positions part gives. */
static bool decode_fields(struct decoder *d, const struct part_start *part, size_t stop)
{
    struct profd_profile *p = d->p;
    struct pb_reader r;
    struct pb_field f;
    const char *err;
    size_t at[F_LAST_];
    memcpy(at, part->before, sizeof(at));
    pb_reader_init(&r, d->buf, d->buf + part->offset, stop - part->offset);
    while (pb_next(&r, &f, &err) > 0) {
        bool ok = true;
        switch (f.number) {
        case F_STRING:
            p->strings[at[F_STRING]++] = (struct profd_str){(const char *)f.data, (uint32_t)f.len};
            break;
        case F_SAMPLE_TYPE:
            ok = decode_value_type(d, &f, &p->sample_types[at[F_SAMPLE_TYPE]++]);
            break;
        case F_MAPPING: ok = decode_mapping(d, &f, at[F_MAPPING]++); break;
        case F_FUNCTION: ok = decode_function(d, &f, at[F_FUNCTION]++); break;
        case F_LOCATION: ok = decode_location(d, &f, at[F_LOCATION]++); break;
        case F_SAMPLE: ok = decode_sample(d, &f, &p->samples[at[F_SAMPLE]++]); break;
        default:
            if (f.number >= F_LAST_)
                break;
            if (d->defers_scalars)
                defer_scalar(d, &f);
            else
                ok = decode_scalar(d, &f);
        }
        if (!ok)
            return false;
    }
    return true;
}

/* The second half's job on its own thread. */
struct half_job {
    struct decoder d;
    bool ok;
    char err[256];
};

static void *decode_second_half(void *arg)
{
    struct half_job *job = arg;
    job->ok = decode_fields(&job->d, &job->d.second_half, job->d.len);
    return NULL;
}

/* Decodes d's first half while a thread decodes the second (or, when no
 * thread can start, after it), then the single values the second half
 * set, in order: the profile and the first error in byte order are the
 * ones a decode on one thread would give. */
static bool decode_halves(struct decoder *d)
{
    static const struct part_start start;
    struct half_job *job = profd_xmalloc(sizeof(*job));
    job->d = *d;
    job->d.a.scratch = (struct scratch){0};
    job->d.arena = profd_arena_create(d->len - d->second_half.offset);
    job->d.err = job->err;
    job->d.errlen = sizeof(job->err);
    job->d.defers_scalars = true;
    job->err[0] = '\0';
    pthread_t thread;
    bool threaded = pthread_create(&thread, NULL, decode_second_half, job) == 0;
    bool ok = decode_fields(d, &start, d->second_half.offset);
    if (threaded)
        pthread_join(thread, NULL);
    else
        decode_second_half(job);
    profd_arena_adopt(d->arena, job->d.arena);
    free_scratch(&job->d.a.scratch);
    for (size_t i = 0; ok && i < job->d.nscalars; i++) {
        struct pb_reader r;
        struct pb_field f;
        const char *err;
        size_t at = job->d.scalars[i];
        pb_reader_init(&r, d->buf, d->buf + at, d->len - at);
        ok = pb_next(&r, &f, &err) > 0 && decode_scalar(d, &f);
    }
    if (ok && !job->ok) {
        snprintf(d->err, d->errlen, "%s", job->err);
        ok = false;
    }
    free(job->d.scalars);
    free(job);
    return ok;
}

static bool decode_all_fields(struct decoder *d)
{
    static const struct part_start whole;
    bool ok = d->second_half.offset ? decode_halves(d) : decode_fields(d, &whole, d->len);
    return ok && (d->p->strings[0].len == 0 || fail(d, 0, "string_table[0] must be \"\""));
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
}

/* Decodes raw (len bytes) into p, which has its arena and nothing else
 * yet, ids assumed or read: false with err set. */
static bool decode_into(struct profd_profile *p, const uint8_t *raw, size_t len,
                        bool ids_assumed, char *err, size_t errlen)
{
    struct decoder d = {.buf = raw, .len = len, .p = p, .arena = p->arena, .err = err,
                        .errlen = errlen, .ids_assumed = ids_assumed};
    err[0] = '\0';
    decoder_take_arrays(&d);
    bool ok = count_fields(&d);
    if (ok) {
        alloc_tables(&d);
        ok = decode_all_fields(&d);
    }
    decoder_end(&d);
    return ok;
}

/* Decodes raw (len bytes), ids assumed or read: the profile, which owns
 * raw, or NULL with err set (raw not freed). */
static struct profd_profile *decode(uint8_t *raw, size_t len, bool ids_assumed, char *err,
                                    size_t errlen)
{
    struct profd_profile *p = profd_xcalloc(1, sizeof(*p));
    p->arena = profd_arena_create(len + len / 2);   /* tables + samples fit in one block */
    if (!decode_into(p, raw, len, ids_assumed, err, errlen)) {
        profd_profile_free(p);
        return NULL;
    }
    p->backing = raw;
    return p;
}

struct profd_profile *profd_pprof_decode_owned(uint8_t *raw, size_t len, char *err, size_t errlen)
{
    struct profd_profile *p = decode(raw, len, true, err, errlen);
    if (!p)
        p = decode(raw, len, false, err, errlen);
    if (!p)
        free(raw);
    return p;
}

/* The protobuf bytes of data: data itself, or data inflated into *buf
 * (grown as needed, its size in *cap) when it is gzip'd. NULL with err when
 * it is corrupt or more than max_decoded bytes. */
static const uint8_t *raw_bytes(const uint8_t *data, size_t len, size_t max_decoded,
                                uint8_t **buf, size_t *cap, size_t *raw_len, char *err,
                                size_t errlen)
{
    if (profd_is_gzip(data, len))
        return profd_gunzip_into(data, len, max_decoded, buf, cap, raw_len, err, errlen) < 0
                   ? NULL
                   : *buf;
    if (len > max_decoded) {
        snprintf(err, errlen, "pprof: %zu bytes exceed the limit of %zu", len, max_decoded);
        return NULL;
    }
    *raw_len = len;
    return data;
}

struct profd_profile *profd_pprof_decode(const uint8_t *data, size_t len, size_t max_decoded,
                                         char *err, size_t errlen)
{
    uint8_t *buf = NULL;
    size_t cap = 0, raw_len;
    const uint8_t *raw = raw_bytes(data, len, max_decoded, &buf, &cap, &raw_len, err, errlen);
    if (!raw) {
        free(buf);
        return NULL;
    }
    if (!buf) {   /* the bytes as they came: the profile gets its own copy */
        buf = profd_xmalloc(len ? len : 1);
        memcpy(buf, data, len);
    }
    return profd_pprof_decode_owned(buf, raw_len, err, errlen);
}

/* Ends a check: what it inflated and built is dropped, and kept for the
 * next one unless it grew past CHECK_KEPT_MAX_BYTES. */
static void check_end(struct kept *k)
{
    if (k->raw_cap > CHECK_KEPT_MAX_BYTES) {
        free(k->raw);
        k->raw = NULL;
        k->raw_cap = 0;
    }
    if (k->arena && profd_arena_footprint(k->arena) > CHECK_KEPT_MAX_BYTES) {
        profd_arena_destroy(k->arena);
        k->arena = NULL;
    } else if (k->arena) {
        profd_arena_reset(k->arena);
    }
}

int profd_pprof_check(const uint8_t *data, size_t len, size_t max_decoded, int64_t *time_nanos,
                      int64_t *duration_nanos, char *err, size_t errlen)
{
    struct kept *k = profd_thread_slot_get(&kept_slot);
    size_t raw_len;
    const uint8_t *raw = raw_bytes(data, len, max_decoded, &k->raw, &k->raw_cap, &raw_len, err,
                                   errlen);
    if (!raw) {
        check_end(k);
        return -1;
    }
    if (profd_pprof_quick_valid(raw, raw_len, time_nanos, duration_nanos)) {
        check_end(k);
        return 0;
    }
    if (!k->arena)
        k->arena = profd_arena_create(raw_len + raw_len / 2);
    struct profd_profile p = {.arena = k->arena};
    bool ok = decode_into(&p, raw, raw_len, true, err, errlen);
    if (!ok) {
        profd_arena_reset(k->arena);
        p = (struct profd_profile){.arena = k->arena};
        ok = decode_into(&p, raw, raw_len, false, err, errlen);
    }
    *time_nanos = p.time_nanos;
    *duration_nanos = p.duration_nanos;
    check_end(k);
    return ok ? 0 : -1;
}
