// SPDX-License-Identifier: Apache-2.0
/* pprof encoder: ids are positions + 1, packed repeated fields, gzip optional. */
#include "pprof.h"

#include <stdlib.h>

#include "gzip.h"
#include "gzip_pipe.h"
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

/* Where the encoding goes: whole into w, or with gzip a chunk at a time,
 * each compressed as a gzip member of its own, so that a large profile is
 * never held uncompressed whole (5 MB for a 100 MB perf.data's). A large
 * one's chunks are compressed on the pipe's threads while the next are
 * encoded. */
struct sink {
    struct pb_writer w;
    bool gzip;
    struct profd_gzip_pipe *pipe;
    size_t chunks;     /* chunks compressed or handed to the pipe */
    uint8_t *gz;
    size_t gz_len, gz_cap;
    size_t expected;   /* the encoding's size, about: it sets the gzip level */
};

#define GZIP_CHUNK (1u << 20)
/* From this expected size on, compression runs beside the encoding (on
 * threads whose buffers and compressors cost a few MiB: below it, more
 * than the time saved is worth). */
#define GZIP_PIPE_FROM (16 * GZIP_CHUNK)

/* Called between top-level fields: compresses what w holds once it is a
 * chunk, or at the end whatever is left (an empty profile is one empty
 * member). */
static void field_done(struct sink *s, bool end)
{
    if (!s->gzip || (end ? s->chunks && !s->w.len : s->w.len < GZIP_CHUNK))
        return;
    s->chunks++;
    if (s->pipe) {
        profd_gzip_pipe_push(s->pipe, &s->w);
        return;
    }
    profd_gzip_append(s->w.buf, s->w.len, s->expected, &s->gz, &s->gz_len, &s->gz_cap);
    s->w.len = 0;
}

static void encode(const struct profd_profile *p, struct sink *s)
{
    struct pb_writer *w = &s->w;
    pb_writer_reserve(w, s->gzip ? GZIP_CHUNK + 4096 : 64 + p->nsamples * 32);
    for (uint32_t i = 0; i < p->nsample_types; i++)
        put_value_type(w, 1, &p->sample_types[i]);
    for (size_t i = 0; i < p->nsamples; i++) {
        put_sample(w, p, &p->samples[i]);
        field_done(s, false);
    }
    for (uint32_t i = 0; i < p->nmappings; i++)
        put_mapping(w, &p->mappings[i], i + 1);
    for (uint32_t i = 0; i < p->nlocations; i++) {
        if (i + 8 < p->nlocations)   /* lines may be anywhere: a symbolizer adds them in its order */
            __builtin_prefetch(p->locations[i + 8].lines);
        put_location(w, &p->locations[i], i + 1);
        field_done(s, false);
    }
    for (uint32_t i = 0; i < p->nfunctions; i++) {
        put_function(w, &p->functions[i], i + 1);
        field_done(s, false);
    }
    for (uint32_t i = 0; i < p->nstrings; i++) {
        pb_put_bytes_always(w, 6, p->strings[i].ptr, p->strings[i].len);
        field_done(s, false);
    }
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
    field_done(s, true);
}

void profd_pprof_encode_raw(const struct profd_profile *p, uint8_t **out, size_t *len)
{
    struct sink s = {0};
    encode(p, &s);
    *out = s.w.buf;
    *len = s.w.len;
}

/* About how many bytes p encodes to (varints counted at 2 or 3 bytes). */
static size_t encoded_size(const struct profd_profile *p)
{
    size_t n = 64;
    for (size_t i = 0; i < p->nsamples; i++)
        n += 6 + 2 * (size_t)p->samples[i].nlocations + 3 * p->nsample_types +
             10 * (size_t)p->samples[i].nlabels;
    for (uint32_t i = 0; i < p->nlocations; i++)
        n += 12 + 6 * (size_t)p->locations[i].nlines;
    n += 12 * (size_t)p->nfunctions;
    for (uint32_t i = 0; i < p->nstrings; i++)
        n += 2 + p->strings[i].len;
    return n;
}

int profd_pprof_encode(const struct profd_profile *p, bool gzip, uint8_t **out, size_t *len)
{
    if (!gzip) {
        profd_pprof_encode_raw(p, out, len);
        return 0;
    }
    struct sink s = {.gzip = true, .expected = encoded_size(p)};
    if (s.expected >= GZIP_PIPE_FROM)
        s.pipe = profd_gzip_pipe_start(s.expected);
    encode(p, &s);
    free(s.w.buf);
    if (s.pipe)
        profd_gzip_pipe_finish(s.pipe, &s.gz, &s.gz_len);
    *out = s.gz;
    *len = s.gz_len;
    return 0;
}
