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
#include "pprof_decoder.h"
#include "profile.h"
#include "thread_slot.h"

static const char *const field_names[F_LAST_] = {
    "", "sample_type", "sample", "mapping", "location", "function", "string_table",
    "drop_frames", "keep_frames", "time_nanos", "duration_nanos", "period_type", "period",
    "comment", "default_sample_type", "doc_url",
};

bool pprof_fail(struct decoder *d, size_t offset, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(d->err, d->errlen, "pprof: %s at byte %zu", msg, offset);
    return false;
}

bool pprof_str_index(struct decoder *d, uint64_t v, uint32_t *out, const char *what, size_t off)
{
    if (v >= d->counts[F_STRING])
        return pprof_fail(d, off, "%s string index %lld out of range (table has %zu)", what,
                          (long long)v, d->counts[F_STRING]);
    *out = (uint32_t)v;
    return true;
}

bool pprof_expect_wire(struct decoder *d, const struct pb_field *f, uint32_t wire,
                       const char *what)
{
    if (f->wire == wire)
        return true;
    return pprof_fail(d, f->offset, "%s field %u has wire type %u, want %u", what, f->number,
                      f->wire, wire);
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
    case F_MAPPING: return pprof_read_entry_id(d, f, &d->a.mappings, "Mapping");
    case F_LOCATION: return pprof_read_entry_id(d, f, &d->a.locations, "Location");
    case F_FUNCTION: return pprof_read_entry_id(d, f, &d->a.functions, "Function");
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
                    return pprof_fail(d, f.offset, "malformed packed comment");
                d->counts[F_COMMENT] += (size_t)n;
                continue;
            }
        }
        if (!pprof_expect_wire(d, &f, wire_of[f.number], field_names[f.number]))
            return false;
        if (f.number == F_TIME && d->counts[F_TIME])
            return pprof_fail(d, f.offset,
                              "second time_nanos: concatenated profiles are not supported");
        d->counts[f.number]++;
        if (!d->ids_assumed && !read_field_ids(d, &f))
            return false;
    }
    if (rc < 0)
        return pprof_fail(d, f.offset, "%s", err);
    if (d->counts[F_STRING] == 0)
        return pprof_fail(d, 0, "string_table is empty; entry 0 must be \"\"");
    if (d->counts[F_STRING] > UINT32_MAX || d->counts[F_LOCATION] >= UINT32_MAX ||
        d->counts[F_FUNCTION] >= UINT32_MAX || d->counts[F_MAPPING] >= UINT32_MAX)
        return pprof_fail(d, 0, "table too large");
    if (d->ids_assumed) {
        pprof_assume_ids(&d->a.mappings, d->counts[F_MAPPING]);
        pprof_assume_ids(&d->a.locations, d->counts[F_LOCATION]);
        pprof_assume_ids(&d->a.functions, d->counts[F_FUNCTION]);
        return true;
    }
    return pprof_idmap_build(d, &d->a.mappings, "mapping") &&
           pprof_idmap_build(d, &d->a.locations, "location") &&
           pprof_idmap_build(d, &d->a.functions, "function");
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
            ok = pprof_decode_value_type(d, &f, &p->sample_types[at[F_SAMPLE_TYPE]++]);
            break;
        case F_MAPPING: ok = pprof_decode_mapping(d, &f, at[F_MAPPING]++); break;
        case F_FUNCTION: ok = pprof_decode_function(d, &f, at[F_FUNCTION]++); break;
        case F_LOCATION: ok = pprof_decode_location(d, &f, at[F_LOCATION]++); break;
        case F_SAMPLE: ok = pprof_decode_sample(d, &f, &p->samples[at[F_SAMPLE]++]); break;
        default:
            if (f.number >= F_LAST_)
                break;
            if (d->defers_scalars)
                defer_scalar(d, &f);
            else
                ok = pprof_decode_scalar(d, &f);
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
        ok = pb_next(&r, &f, &err) > 0 && pprof_decode_scalar(d, &f);
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
    return ok && (d->p->strings[0].len == 0 || pprof_fail(d, 0, "string_table[0] must be \"\""));
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

/* From this size an encoding whose strings are at most a quarter of it is
 * freed once decoded, its strings copied into the profile's arena: a
 * million locations' 24 MB are then memory the next stages reuse instead
 * of fresh pages (which a virtual machine may have to back anew). */
#define LET_ENCODING_GO_FROM ((size_t)1 << 20)

/* The bytes of p's strings in all. */
static size_t string_bytes(const struct profd_profile *p)
{
    size_t bytes = 0;
    for (uint32_t i = 0; i < p->nstrings; i++)
        bytes += p->strings[i].len;
    return bytes;
}

/* Lets p's strings, which point into its encoding raw (len bytes), live in
 * its arena and frees raw, when that pays (LET_ENCODING_GO_FROM); else p
 * keeps raw as its backing. */
static void settle_strings(struct profd_profile *p, uint8_t *raw, size_t len)
{
    size_t bytes;
    if (len < LET_ENCODING_GO_FROM || (bytes = string_bytes(p)) > len / 4) {
        p->backing = raw;
        return;
    }
    char *to = bytes ? profd_arena_alloc(p->arena, bytes) : NULL;
    for (uint32_t i = 0; i < p->nstrings; i++) {
        struct profd_str *s = &p->strings[i];
        if (!s->len) {
            s->ptr = "";   /* nothing left pointing into raw */
            continue;
        }
        s->ptr = memcpy(to, s->ptr, s->len);
        to += s->len;
    }
    free(raw);
}

/* Decodes raw (len bytes), ids assumed or read: the profile, which owns
 * raw (or has freed it), or NULL with err set (raw not freed). */
static struct profd_profile *decode(uint8_t *raw, size_t len, bool ids_assumed, char *err,
                                    size_t errlen)
{
    struct profd_profile *p = profd_xcalloc(1, sizeof(*p));
    p->arena = profd_arena_create(len + len / 2);   /* tables + samples fit in one block */
    if (!decode_into(p, raw, len, ids_assumed, err, errlen)) {
        profd_profile_free(p);
        return NULL;
    }
    settle_strings(p, raw, len);
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

int profd_pprof_read_type_names(const uint8_t *data, size_t len, size_t max_decoded,
                                struct profd_type_names *out, char *err, size_t errlen)
{
    struct kept *k = profd_thread_slot_get(&kept_slot);
    size_t raw_len;
    const uint8_t *raw = raw_bytes(data, len, max_decoded, &k->raw, &k->raw_cap, &raw_len, err,
                                   errlen);
    if (raw)
        profd_pprof_type_names(raw, raw_len, out);
    check_end(k);
    return raw ? 0 : -1;
}

int profd_pprof_check(const uint8_t *data, size_t len, size_t max_decoded, int64_t *time_nanos,
                      int64_t *duration_nanos, struct profd_type_names *types, char *err,
                      size_t errlen)
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
        if (types)
            profd_pprof_type_names(raw, raw_len, types);
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
    if (ok && types)
        profd_pprof_type_names(raw, raw_len, types);
    check_end(k);
    return ok ? 0 : -1;
}
