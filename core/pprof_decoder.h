// SPDX-License-Identifier: Apache-2.0
/*
 * The pprof decoder's state and the parts its files share (pprof_decode.c:
 * the sweeps and entry points; pprof_decode_ids.c: ids; pprof_decode_message.c:
 * sweep 2's messages). Private to the decoder.
 */
#ifndef PROFD_PPROF_DECODER_H
#define PROFD_PPROF_DECODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "pb.h"
#include "pprof_fields.h"
#include "profd/model.h"

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

/* Writes "pprof: <message> at byte <offset>" into d's error; false. */
__attribute__((format(printf, 3, 4))) bool pprof_fail(struct decoder *d, size_t offset,
                                                      const char *fmt, ...);
/* v as an index into the string table (what names the field), or false
 * with the error. */
bool pprof_str_index(struct decoder *d, uint64_t v, uint32_t *out, const char *what, size_t off);
/* Whether field f of message what has wire type wire; false with the error. */
bool pprof_expect_wire(struct decoder *d, const struct pb_field *f, uint32_t wire,
                       const char *what);

/* Room in a scratch array for element `need - 1`. */
static inline void *room(void *items_ptr, size_t *cap, size_t need, size_t elem)
{
    if (need > *cap)
        profd_grow(items_ptr, cap, need, elem);
    return *(void **)items_ptr;
}

/* ---- ids (pprof_decode_ids.c) ---- */

static inline uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
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

/* Maps table t's ids (read in sweep 1) to refs: dense when every id is its
 * position + 1, else a hash map. False, with the error, for an id 0 or a
 * duplicate (what names the table). */
bool pprof_idmap_build(struct decoder *d, struct table_ids *t, const char *what);
/* Entry i's id field (any after the first) must repeat the id read in
 * sweep 1, or be i + 1 when ids are assumed. */
bool pprof_same_id(struct decoder *d, const struct table_ids *t, size_t i, uint64_t v,
                   size_t off, const char *what);
/* An entry without an id is refused in sweep 1 (id 0), or here when ids
 * are assumed. */
bool pprof_has_id(struct decoder *d, bool seen, size_t off, const char *what);
/* Takes a table's n ids to be 1..n. */
void pprof_assume_ids(struct table_ids *t, size_t n);
/* Reads the id (field 1) of the table entry in message outer into t. */
bool pprof_read_entry_id(struct decoder *d, const struct pb_field *outer, struct table_ids *t,
                         const char *what);

/* ---- sweep 2's messages (pprof_decode_message.c) ---- */

/* Each decodes one top-level message (outer) of its kind into the profile
 * being built: a ValueType into *vt, the i-th Mapping, Function or
 * Location into its table, a Sample into *s, or a field that sets one of
 * the profile's single values. False with the error. */
bool pprof_decode_value_type(struct decoder *d, const struct pb_field *outer,
                             struct profd_value_type *vt);
bool pprof_decode_mapping(struct decoder *d, const struct pb_field *outer, size_t i);
bool pprof_decode_function(struct decoder *d, const struct pb_field *outer, size_t i);
bool pprof_decode_location(struct decoder *d, const struct pb_field *outer, size_t i);
bool pprof_decode_sample(struct decoder *d, const struct pb_field *outer, struct profd_sample *s);
bool pprof_decode_scalar(struct decoder *d, const struct pb_field *f);

#endif
