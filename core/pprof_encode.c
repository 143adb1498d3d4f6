// SPDX-License-Identifier: Apache-2.0
/* pprof encoder: ids are positions + 1, packed repeated fields, gzip optional
 * (in members of about a MiB, made on several threads for a large profile). */
#include "pprof.h"

#include <stdlib.h>

#include "alloc.h"
#include "gzip_pieces.h"
#include "pb.h"

static void put_value_type(struct pb_writer *w, uint32_t field, const struct profd_value_type *vt)
{
    size_t m = pb_begin(w, field);
    pb_put_uint(w, 1, vt->type);
    pb_put_uint(w, 2, vt->unit);
    pb_end(w, m);
}

static void put_sample(struct pb_writer *w, const struct profd_profile *p,
                       const struct profd_sample *s)
{
    size_t m = pb_begin(w, 2);
    pb_put_packed_u32(w, 1, s->locations, s->nlocations);
    pb_put_packed_i64(w, 2, s->values, p->nsample_types);
    for (uint32_t i = 0; i < s->nlabels; i++) {
        const struct profd_sample_label *l = &s->labels[i];
        size_t lm = pb_begin(w, 3);
        pb_put_uint(w, 1, l->key);
        pb_put_uint(w, 2, l->str);
        pb_put_int(w, 3, l->num);
        pb_put_uint(w, 4, l->num_unit);
        pb_end(w, lm);
    }
    pb_end(w, m);
}

static void put_mapping(struct pb_writer *w, const struct profd_mapping *mp, uint32_t id)
{
    size_t m = pb_begin(w, 3);
    pb_put_uint(w, 1, id);
    pb_put_uint(w, 2, mp->memory_start);
    pb_put_uint(w, 3, mp->memory_limit);
    pb_put_uint(w, 4, mp->file_offset);
    pb_put_uint(w, 5, mp->filename);
    pb_put_uint(w, 6, mp->build_id);
    pb_put_bool(w, 7, mp->has_functions);
    pb_put_bool(w, 8, mp->has_filenames);
    pb_put_bool(w, 9, mp->has_line_numbers);
    pb_put_bool(w, 10, mp->has_inline_frames);
    pb_end(w, m);
}

static void put_location(struct pb_writer *w, const struct profd_location *loc, uint32_t id)
{
    size_t m = pb_begin(w, 4);
    pb_put_uint(w, 1, id);
    pb_put_uint(w, 2, loc->mapping);
    pb_put_uint(w, 3, loc->address);
    for (uint32_t i = 0; i < loc->nlines; i++) {
        size_t lm = pb_begin(w, 4);
        pb_put_uint(w, 1, loc->lines[i].function);
        pb_put_int(w, 2, loc->lines[i].line);
        pb_put_int(w, 3, loc->lines[i].column);
        pb_end(w, lm);
    }
    pb_put_bool(w, 5, loc->is_folded);
    pb_end(w, m);
}

static void put_function(struct pb_writer *w, const struct profd_function *fn, uint32_t id)
{
    size_t m = pb_begin(w, 5);
    pb_put_uint(w, 1, id);
    pb_put_uint(w, 2, fn->name);
    pb_put_uint(w, 3, fn->system_name);
    pb_put_uint(w, 4, fn->filename);
    pb_put_int(w, 5, fn->start_line);
    pb_end(w, m);
}

/* The single-valued fields, after every repeated one. */
static void put_scalars(struct pb_writer *w, const struct profd_profile *p)
{
    pb_put_uint(w, 7, p->drop_frames);
    pb_put_uint(w, 8, p->keep_frames);
    pb_put_int(w, 9, p->time_nanos);
    pb_put_int(w, 10, p->duration_nanos);
    if (p->period_type.type || p->period_type.unit)
        put_value_type(w, 11, &p->period_type);
    pb_put_int(w, 12, p->period);
    pb_put_packed_i64(w, 13, p->comments, p->ncomments);
    pb_put_uint(w, 14, p->default_sample_type);
    pb_put_uint(w, 15, p->doc_url);
}

/* The parts of an encoding, in the order they are written; the scalars
 * are one item. */
enum section { VALUE_TYPES, SAMPLES, MAPPINGS, LOCATIONS, FUNCTIONS, STRINGS, SCALARS, SECTIONS };

static size_t section_items(const struct profd_profile *p, enum section sec)
{
    switch (sec) {
    case VALUE_TYPES: return p->nsample_types;
    case SAMPLES: return p->nsamples;
    case MAPPINGS: return p->nmappings;
    case LOCATIONS: return p->nlocations;
    case FUNCTIONS: return p->nfunctions;
    case STRINGS: return p->nstrings;
    default: return 1;
    }
}

/* Writes items [begin, end) of section sec. */
static void put_items(struct pb_writer *w, const struct profd_profile *p, enum section sec,
                      size_t begin, size_t end)
{
    for (size_t i = begin; i < end; i++) {
        switch (sec) {
        case VALUE_TYPES: put_value_type(w, 1, &p->sample_types[i]); break;
        case SAMPLES: put_sample(w, p, &p->samples[i]); break;
        case MAPPINGS: put_mapping(w, &p->mappings[i], (uint32_t)i + 1); break;
        case LOCATIONS:
            if (i + 8 < end)   /* lines may be anywhere: a symbolizer adds them in its order */
                __builtin_prefetch(p->locations[i + 8].lines);
            put_location(w, &p->locations[i], (uint32_t)i + 1);
            break;
        case FUNCTIONS: put_function(w, &p->functions[i], (uint32_t)i + 1); break;
        case STRINGS: pb_put_bytes_always(w, 6, p->strings[i].ptr, p->strings[i].len); break;
        default: put_scalars(w, p); break;
        }
    }
}

/* About how many bytes item i of section sec encodes to (location refs at
 * their largest size, other varints at 2 or 3 bytes). */
static size_t item_size(const struct profd_profile *p, enum section sec, size_t i)
{
    switch (sec) {
    case VALUE_TYPES: return 6;
    case SAMPLES:
        return 6 + pb_varint_size(p->nlocations) * p->samples[i].nlocations +
               3 * p->nsample_types + 10 * (size_t)p->samples[i].nlabels;
    case MAPPINGS: return 40;
    case LOCATIONS: return 12 + 6 * (size_t)p->locations[i].nlines;
    case FUNCTIONS: return 12;
    case STRINGS: return 2 + p->strings[i].len;
    default: return 64 + 11 * (size_t)p->ncomments;
    }
}

/* A place in an encoding: before item `item` of section `sec`. */
struct place {
    enum section sec;
    size_t item;
};

static const struct place START = {VALUE_TYPES, 0}, END = {SECTIONS, 0};

/* Writes everything from one place to a later one. */
static void put_range(struct pb_writer *w, const struct profd_profile *p, struct place from,
                      struct place to)
{
    for (enum section sec = from.sec; sec <= to.sec && sec < SECTIONS; sec++)
        put_items(w, p, sec, sec == from.sec ? from.item : 0,
                  sec == to.sec ? to.item : section_items(p, sec));
}

void profd_pprof_encode_raw(const struct profd_profile *p, uint8_t **out, size_t *len)
{
    struct pb_writer w = {0};
    pb_writer_reserve(&w, 64 + p->nsamples * 32);
    put_range(&w, p, START, END);
    *out = w.buf;
    *len = w.len;
}

/* A gzip'd encoding in pieces of about PIECE_BYTES, each a gzip member:
 * where they start, and the whole encoding's size, about. */
#define PIECE_BYTES (1u << 20)
struct pieces {
    const struct profd_profile *p;
    struct place *starts;
    size_t n, cap;
    size_t bytes;
};

/* Cuts p's encoding into pieces of about PIECE_BYTES (one at least). */
static void plan_pieces(const struct profd_profile *p, struct pieces *pc)
{
    size_t in_piece = 0;
    profd_grow(&pc->starts, &pc->cap, pc->n + 1, sizeof(*pc->starts));
    pc->starts[pc->n++] = START;
    for (enum section sec = VALUE_TYPES; sec < SECTIONS; sec++) {
        for (size_t i = 0, n = section_items(p, sec); i < n; i++) {
            size_t size = item_size(p, sec, i);
            pc->bytes += size;
            in_piece += size;
            if (in_piece >= PIECE_BYTES) {
                profd_grow(&pc->starts, &pc->cap, pc->n + 1, sizeof(*pc->starts));
                pc->starts[pc->n++] = (struct place){sec, i + 1};
                in_piece = 0;
            }
        }
    }
}

/* profd_gzip_piece_fn for a planned encoding. */
static void put_piece(void *ctx, size_t piece, struct pb_writer *w)
{
    const struct pieces *pc = ctx;
    pb_writer_reserve(w, PIECE_BYTES + 4096);
    put_range(w, pc->p, pc->starts[piece], piece + 1 < pc->n ? pc->starts[piece + 1] : END);
}

int profd_pprof_encode(const struct profd_profile *p, bool gzip, uint8_t **out, size_t *len)
{
    if (!gzip) {
        profd_pprof_encode_raw(p, out, len);
        return 0;
    }
    struct pieces pc = {.p = p};
    plan_pieces(p, &pc);
    profd_gzip_pieces(pc.n, put_piece, &pc, pc.bytes, out, len);
    free(pc.starts);
    return 0;
}
