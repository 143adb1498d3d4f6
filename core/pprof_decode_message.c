// SPDX-License-Identifier: Apache-2.0
/* The pprof decoder's sweep 2, message by message: value types,
 * mappings, functions, the profile's single values, locations, samples.
 * Each message is read in one pass; its repeated parts gather in the
 * decoder's scratch arrays and are copied into the arena at its end. */
#include <string.h>

#include "arena.h"
#include "pprof_decoder.h"
#include "profile.h"

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
        if (!pprof_expect_wire(d, &f, PB_VARINT, what) ||
            !set(d, target, f.number, f.value, f.offset))
            return false;
    }
    return rc == 0 || pprof_fail(d, f.offset, "%s: %s", what, err);
}

static bool set_value_type(struct decoder *d, void *target, uint32_t number, uint64_t v, size_t off)
{
    struct profd_value_type *vt = target;
    return pprof_str_index(d, v, number == 1 ? &vt->type : &vt->unit, "ValueType", off);
}

bool pprof_decode_value_type(struct decoder *d, const struct pb_field *outer,
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
    case 1: t->id_seen = true; return pprof_same_id(d, &d->a.mappings, t->index, v, off, "Mapping");
    case 2: m->memory_start = v; return true;
    case 3: m->memory_limit = v; return true;
    case 4: m->file_offset = v; return true;
    case 5: return pprof_str_index(d, v, &m->filename, "Mapping.filename", off);
    case 6: return pprof_str_index(d, v, &m->build_id, "Mapping.build_id", off);
    case 7: m->has_functions = v != 0; return true;
    case 8: m->has_filenames = v != 0; return true;
    case 9: m->has_line_numbers = v != 0; return true;
    default: m->has_inline_frames = v != 0; return true;
    }
}

bool pprof_decode_mapping(struct decoder *d, const struct pb_field *outer, size_t i)
{
    struct table_entry t = {&d->p->mappings[i], i, false};
    return each_varint_field(d, outer, 10, "Mapping", set_mapping, &t) &&
           pprof_has_id(d, t.id_seen, outer->offset, "Mapping");
}

static bool set_function(struct decoder *d, void *target, uint32_t number, uint64_t v, size_t off)
{
    struct table_entry *t = target;
    struct profd_function *fn = t->entry;
    switch (number) {
    case 1:
        t->id_seen = true;
        return pprof_same_id(d, &d->a.functions, t->index, v, off, "Function");
    case 2: return pprof_str_index(d, v, &fn->name, "Function.name", off);
    case 3: return pprof_str_index(d, v, &fn->system_name, "Function.system_name", off);
    case 4: return pprof_str_index(d, v, &fn->filename, "Function.filename", off);
    default: fn->start_line = (int64_t)v; return true;
    }
}

bool pprof_decode_function(struct decoder *d, const struct pb_field *outer, size_t i)
{
    struct table_entry t = {&d->p->functions[i], i, false};
    return each_varint_field(d, outer, 5, "Function", set_function, &t) &&
           pprof_has_id(d, t.id_seen, outer->offset, "Function");
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
    if (!pprof_str_index(s->d, v, &idx, "comment", s->offset))
        return false;
    p->comments[p->ncomments++] = idx;
    return true;
}

bool pprof_decode_scalar(struct decoder *d, const struct pb_field *f)
{
    struct profd_profile *p = d->p;
    switch (f->number) {
    case F_DROP_FRAMES:
        return pprof_str_index(d, f->value, &p->drop_frames, "drop_frames", f->offset);
    case F_KEEP_FRAMES:
        return pprof_str_index(d, f->value, &p->keep_frames, "keep_frames", f->offset);
    case F_DEFAULT_TYPE:
        return pprof_str_index(d, f->value, &p->default_sample_type, "default_sample_type",
                               f->offset);
    case F_DOC_URL: return pprof_str_index(d, f->value, &p->doc_url, "doc_url", f->offset);
    case F_TIME: p->time_nanos = (int64_t)f->value; return true;
    case F_DURATION: p->duration_nanos = (int64_t)f->value; return true;
    case F_PERIOD: p->period = (int64_t)f->value; return true;
    case F_PERIOD_TYPE: return pprof_decode_value_type(d, f, &p->period_type);
    case F_COMMENT: {
        struct comment_sink s = {d, f->offset};
        return pb_each_varint(f, add_comment, &s) ||
               (d->err[0] ? false : pprof_fail(d, f->offset, "malformed comment"));
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
            return pprof_fail(d, off, "Line refers to unknown function id %llu",
                              (unsigned long long)v);
    } else if (number == 2) {
        ln->line = (int64_t)v;
    } else {
        ln->column = (int64_t)v;
    }
    return true;
}

bool pprof_decode_location(struct decoder *d, const struct pb_field *outer, size_t i)
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
        if (!pprof_expect_wire(d, &f, f.number == 4 ? PB_LEN : PB_VARINT, "Location"))
            return false;
        switch (f.number) {
        case 1:
            id_seen = true;
            if (!pprof_same_id(d, &d->a.locations, i, f.value, f.offset, "Location"))
                return false;
            break;
        case 2:
            loc->mapping = idmap_get(&d->a.mappings, f.value);
            if (!loc->mapping && f.value)
                return pprof_fail(d, f.offset, "Location refers to unknown mapping id %llu",
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
        return pprof_fail(d, f.offset, "Location: %s", err);
    if (!pprof_has_id(d, id_seen, outer->offset, "Location"))
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
        return pprof_fail(d, f->offset, "Sample field %u has wire type %u", f->number, f->wire);
    struct pb_reader r;
    pb_reader_init(&r, f->data, f->data, f->len);
    /* A value takes at least a byte. The array and count are kept in
     * locals: a value stored through *v may alias *n for the compiler. */
    uint64_t *out = room(v, cap, *n + f->len, sizeof(**v));
    size_t k = *n;
    while (r.p < r.end)
        if (!pb_varint(&r, &out[k++]))
            return pprof_fail(d, f->offset, "malformed packed Sample field %u", f->number);
    *n = k;
    return true;
}

static bool set_label(struct decoder *d, void *target, uint32_t number, uint64_t v, size_t off)
{
    struct profd_sample_label *l = target;
    switch (number) {
    case 1: return pprof_str_index(d, v, &l->key, "Label.key", off);
    case 2: return pprof_str_index(d, v, &l->str, "Label.str", off);
    case 3: l->num = (int64_t)v; return true;
    default: return pprof_str_index(d, v, &l->num_unit, "Label.num_unit", off);
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
        return pprof_fail(d, outer->offset, "sample has %zu values, profile has %u sample types",
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
        return pprof_fail(d, outer->offset, "sample refers to unknown location id %llu",
                          (unsigned long long)sc->locations[unknown]);
    s->nlocations = (uint32_t)nlocs;
    for (size_t i = 0; i < nvalues; i++)
        s->values[i] = (int64_t)sc->values[i];
    if (nlabels)
        memcpy(s->labels, sc->labels, nlabels * sizeof(*s->labels));
    s->nlabels = (uint32_t)nlabels;
    return true;
}

bool pprof_decode_sample(struct decoder *d, const struct pb_field *outer, struct profd_sample *s)
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
            ok = pprof_expect_wire(d, &f, PB_LEN, "Sample.label") &&
                 each_varint_field(d, &f, 4, "Label", set_label, l);
        }
        if (!ok)
            return false;
    }
    if (rc < 0)
        return pprof_fail(d, f.offset, "Sample: %s", err);
    return store_sample(d, outer, s, nlocs, nvalues, nlabels);
}

