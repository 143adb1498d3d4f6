// SPDX-License-Identifier: Apache-2.0
/* The pprof codec: corpus round trips, an independent decoder (protobuf-c)
 * reading our output, both repeated-field forms, and malformed input. */
#include "check.h"

#include <libdeflate.h>

#include "../../core/arena.h"
#include "../../core/gzip.h"
#include "../../core/pb.h"
#include "../../core/pprof.h"
#include "../../core/profile.h"
#include "profile.pb-c.h"

static const char *const corpus_files[] = {
    "allocs", "bigheap", "block", "compile-nethttp.cpu", "cpu", "goroutine", "heap", "mutex",
    "threadcreate",
};

static struct profd_profile *decode_corpus(const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/go/%s.pb.gz", check_corpus(), name);
    size_t len;
    unsigned char *data = check_read_file(path, &len);
    char err[256];
    struct profd_profile *p = profd_pprof_decode(data, len, PROFD_PPROF_MAX_DECODED, err, sizeof(err));
    if (!p)
        fprintf(stderr, "  %s: %s\n", name, err);
    free(data);
    return p;
}

static bool str_eq(const struct profd_profile *a, uint32_t i, const struct profd_profile *b,
                   uint32_t j)
{
    return a->strings[i].len == b->strings[j].len &&
           !memcmp(a->strings[i].ptr, b->strings[j].ptr, a->strings[i].len);
}

/* Same content: every table entry and every sample, field by field. */
static void check_same(const struct profd_profile *a, const struct profd_profile *b)
{
    CHECK_INT(a->nsamples, b->nsamples);
    CHECK_INT(a->nlocations, b->nlocations);
    CHECK_INT(a->nfunctions, b->nfunctions);
    CHECK_INT(a->nmappings, b->nmappings);
    CHECK_INT(a->nstrings, b->nstrings);
    CHECK_INT(a->nsample_types, b->nsample_types);
    CHECK_INT(a->time_nanos, b->time_nanos);
    CHECK_INT(a->duration_nanos, b->duration_nanos);
    CHECK_INT(a->period, b->period);
    if (a->nsamples != b->nsamples || a->nlocations != b->nlocations ||
        a->nfunctions != b->nfunctions || a->nstrings != b->nstrings)
        return;
    for (uint32_t i = 0; i < a->nstrings; i++)
        CHECK(str_eq(a, i, b, i));
    for (size_t i = 0; i < a->nsamples; i++) {
        const struct profd_sample *x = &a->samples[i], *y = &b->samples[i];
        CHECK_INT(x->nlocations, y->nlocations);
        CHECK_INT(x->nlabels, y->nlabels);
        if (x->nlocations == y->nlocations && x->nlocations)
            CHECK(!memcmp(x->locations, y->locations, x->nlocations * sizeof(*x->locations)));
        CHECK(!memcmp(x->values, y->values, a->nsample_types * sizeof(*x->values)));
    }
    for (uint32_t i = 0; i < a->nlocations; i++) {
        CHECK_INT(a->locations[i].address, b->locations[i].address);
        CHECK_INT(a->locations[i].mapping, b->locations[i].mapping);
        CHECK_INT(a->locations[i].nlines, b->locations[i].nlines);
        for (uint32_t l = 0; l < a->locations[i].nlines && l < b->locations[i].nlines; l++) {
            CHECK_INT(a->locations[i].lines[l].function, b->locations[i].lines[l].function);
            CHECK_INT(a->locations[i].lines[l].line, b->locations[i].lines[l].line);
        }
    }
    for (uint32_t i = 0; i < a->nfunctions; i++) {
        CHECK_INT(a->functions[i].name, b->functions[i].name);
        CHECK_INT(a->functions[i].filename, b->functions[i].filename);
        CHECK_INT(a->functions[i].start_line, b->functions[i].start_line);
    }
}

TEST(corpus_round_trip)
{
    for (size_t f = 0; f < sizeof(corpus_files) / sizeof(*corpus_files); f++) {
        struct profd_profile *p = decode_corpus(corpus_files[f]);
        CHECK(p != NULL);
        if (!p)
            continue;
        CHECK(p->nsamples > 0 || !strcmp(corpus_files[f], "mutex"));   /* no contention recorded */
        uint8_t *out;
        size_t len;
        CHECK_INT(profd_pprof_encode(p, true, &out, &len), 0);
        CHECK(profd_is_gzip(out, len));
        char err[256];
        struct profd_profile *q = profd_pprof_decode(out, len, PROFD_PPROF_MAX_DECODED, err, sizeof(err));
        CHECK(q != NULL);
        if (q)
            check_same(p, q);
        free(out);
        profd_profile_free(q);
        profd_profile_free(p);
    }
}

/* How many gzip members data holds, -1 when one is bad. */
static int gzip_members(const uint8_t *data, size_t len)
{
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    size_t cap = 64u << 20;
    uint8_t *out = malloc(cap);
    int n = 0;
    for (size_t at = 0; at < len && n >= 0; n++) {
        size_t in_used, out_used;
        if (libdeflate_gzip_decompress_ex(d, data + at, len - at, out, cap, &in_used,
                                          &out_used) != LIBDEFLATE_SUCCESS)
            n = -2;
        at += in_used;
    }
    free(out);
    libdeflate_free_decompressor(d);
    return n;
}

/* Gzips p and checks that the stream decompresses to exactly its raw
 * encoding, which must be above min_raw bytes. Returns the stream's
 * member count (-1 on failure). */
static int gzip_round_trip(const struct profd_profile *p, size_t min_raw)
{
    uint8_t *raw, *gz, *back = NULL;
    size_t raw_len, gz_len, back_len = 0;
    char err[256];
    profd_pprof_encode_raw(p, &raw, &raw_len);
    CHECK(raw_len > min_raw);
    CHECK_INT(profd_pprof_encode(p, true, &gz, &gz_len), 0);
    CHECK_INT(profd_gunzip(gz, gz_len, 64u << 20, &back, &back_len, err, sizeof(err)), 0);
    CHECK_INT(back_len, raw_len);
    bool same = back_len == raw_len && !memcmp(back, raw, raw_len);
    CHECK(same);
    int members = same ? gzip_members(gz, gz_len) : -1;
    free(raw);
    free(gz);
    free(back);
    return members;
}

/* A profile bigger than a piece is gzip'd a piece (a MiB, as estimated)
 * at a time into members of one stream, which decompress to exactly the
 * raw encoding. */
TEST(large_profile_gzips_in_members_of_one_stream)
{
    struct profd_profile *p = decode_corpus("bigheap");
    CHECK(p != NULL);
    if (!p)
        return;
    CHECK(gzip_round_trip(p, 1u << 20) >= 2);   /* 1.8 MB */
    profd_profile_free(p);
}

/* A profile of n samples, each of 4 of 1000 locations, made in memory,
 * with ntypes values: 1..n for one type; for more, numbers of ten bytes
 * in the encoding that hardly compress, where the encoder's estimate of
 * a stream's size takes each value for three bytes. */
static struct profd_profile *samples_of_types(size_t n, size_t ntypes)
{
    struct profd_profile *p = profd_profile_new(1u << 20);
    struct profd_arena *a = p->arena;
    p->sample_types = profd_arena_zalloc(a, ntypes * sizeof(*p->sample_types));
    p->nsample_types = ntypes;
    p->locations = profd_arena_zalloc(a, 1000 * sizeof(*p->locations));
    p->nlocations = p->locations_cap = 1000;
    for (uint32_t i = 0; i < 1000; i++)
        p->locations[i].address = 0x400000 + 16 * (uint64_t)i;
    p->samples = profd_arena_zalloc(a, n * sizeof(*p->samples));
    p->nsamples = p->samples_cap = n;
    uint64_t mixed = 1;
    for (size_t i = 0; i < n; i++) {
        struct profd_sample *sm = &p->samples[i];
        sm->locations = profd_arena_alloc(a, 4 * sizeof(*sm->locations));
        for (uint32_t k = 0; k < 4; k++)
            sm->locations[k] = (uint32_t)((i * 7 + k * 13) % 1000) + 1;
        sm->nlocations = 4;
        sm->values = profd_arena_alloc(a, ntypes * sizeof(*sm->values));
        sm->values[0] = (int64_t)i + 1;
        for (size_t t = 1; t < ntypes; t++) {
            mixed = mixed * 6364136223846793005u + 1442695040888963407u;
            sm->values[t] = (int64_t)(mixed | 0x8000000000000000u);
        }
    }
    return p;
}

/* samples_of_types with one type, the values 1..n. */
static struct profd_profile *many_samples(size_t n)
{
    return samples_of_types(n, 1);
}

/* A profile of 16 MiB and more is encoded and compressed on several
 * threads: every piece arrives, in order, as a member of its own. */
TEST(sixteen_mib_encode_on_threads_in_order)
{
    struct profd_profile *p = many_samples(1300000);
    CHECK(gzip_round_trip(p, 16u << 20) >= 16);   /* a member a MiB */
    profd_profile_free(p);
}

/* A large stream is given room for its estimated size at once; one that
 * compresses to more than that room grows, on one thread (under 16 MiB
 * estimated) and on several, and still arrives whole and in order. */
TEST(streams_past_their_estimate_grow)
{
    size_t sizes[] = {200000, 450000};   /* 8 and 17 MB estimated, 17 and 39 encoded */
    for (size_t i = 0; i < 2; i++) {
        struct profd_profile *p = samples_of_types(sizes[i], 8);
        CHECK(gzip_round_trip(p, sizes[i] * 80) >= 2);
        profd_profile_free(p);
    }
}

/* Encodes p raw, decodes that and says whether the decode kept the
 * encoding as its strings' backing; the decode's strings and its own
 * encoding are p's. */
static bool decode_keeps_encoding(const struct profd_profile *p)
{
    uint8_t *raw, *again;
    size_t len, again_len;
    profd_pprof_encode_raw(p, &raw, &len);
    char err[256];
    struct profd_profile *back = profd_pprof_decode(raw, len, PROFD_PPROF_MAX_DECODED, err,
                                                    sizeof(err));
    CHECK(back != NULL);
    if (!back) {
        free(raw);
        return false;
    }
    CHECK_INT(back->nstrings, p->nstrings);
    for (uint32_t i = 0; i < p->nstrings && i < back->nstrings; i++)
        CHECK(back->strings[i].len == p->strings[i].len &&
              !memcmp(back->strings[i].ptr, p->strings[i].ptr, p->strings[i].len));
    profd_pprof_encode_raw(back, &again, &again_len);
    CHECK(again_len == len && !memcmp(again, raw, len));
    bool kept = back->backing != NULL;
    profd_profile_free(back);
    free(raw);
    free(again);
    return kept;
}

/* A decode of 1 MiB and more whose strings are a small part of it copies
 * them into its arena and frees the encoding (memory the next stages
 * reuse); one mostly of strings, and a small one, keep it. */
TEST(a_large_encoding_of_few_strings_is_let_go_once_decoded)
{
    struct profd_profile *p = many_samples(150000);   /* 2.3 MB, 3 strings */
    p->sample_types[0].type = profd_profile_intern(p, "samples", 7);
    p->sample_types[0].unit = profd_profile_intern(p, "count", 5);
    CHECK(!decode_keeps_encoding(p));
    char name[48];
    for (int i = 0; i < 40000; i++)   /* 1.4 MB of function names */
        profd_profile_intern(p, name, (size_t)snprintf(name, sizeof(name), "pkg.function_%023d", i));
    CHECK(decode_keeps_encoding(p));
    profd_profile_free(p);
    p = many_samples(1000);
    CHECK(decode_keeps_encoding(p));
    profd_profile_free(p);
}

/* Decodes the raw encoding of p, with extra bytes in front and behind:
 * NULL (and the error in err) when refused. */
static struct profd_profile *decode_between(const struct profd_profile *p, const uint8_t *front,
                                            size_t front_len, const uint8_t *tail,
                                            size_t tail_len, char *err, size_t errlen)
{
    uint8_t *raw;
    size_t len;
    profd_pprof_encode_raw(p, &raw, &len);
    CHECK(len >= (4u << 20));   /* large enough to be decoded in halves */
    uint8_t *all = malloc(front_len + len + tail_len);
    if (front_len)
        memcpy(all, front, front_len);
    memcpy(all + front_len, raw, len);
    if (tail_len)
        memcpy(all + front_len + len, tail, tail_len);
    struct profd_profile *back = profd_pprof_decode(all, front_len + len + tail_len,
                                                    PROFD_PPROF_MAX_DECODED, err, errlen);
    free(raw);
    free(all);
    return back;
}

/* A profile of 4 MiB and more is decoded in two halves on two threads:
 * the same profile one thread makes, a single value set by the last field
 * that sets it wherever that lies, and the first error in byte order. */
TEST(large_profile_decodes_in_halves_as_on_one_thread)
{
    struct profd_profile *p = many_samples(600000);
    p->period = 7;
    p->time_nanos = 5;
    const uint8_t period_3[] = {12 << 3, 3};   /* before everything: the encoding's own wins */
    char err[256];
    struct profd_profile *back = decode_between(p, period_3, sizeof(period_3), NULL, 0, err, sizeof(err));
    CHECK(back != NULL);
    if (back)
        check_same(p, back);
    profd_profile_free(back);

    p->samples[10].locations[0] = 888888;       /* in the first half */
    p->samples[590000].locations[0] = 999999;   /* in the second */
    CHECK(!decode_between(p, NULL, 0, NULL, 0, err, sizeof(err)));
    CHECK_CONTAINS(err, "unknown location id 888888");
    p->samples[10].locations[0] = 1;
    CHECK(!decode_between(p, NULL, 0, NULL, 0, err, sizeof(err)));
    CHECK_CONTAINS(err, "unknown location id 999999 at byte");
    profd_profile_free(p);
}

/* Appends a Location of that id and address to w. */
static void put_location_at(struct pb_writer *w, uint64_t id, uint64_t address)
{
    size_t m = pb_begin(w, 4);
    pb_put_uint(w, 1, id);
    pb_put_uint(w, 3, address);
    pb_end(w, m);
}

/* Ids are taken to be positions + 1 until an entry says otherwise: two
 * that do at the very end (ids 1002 and 1001, in that order), the second
 * referred to by the last sample, have references resolved by the ids as
 * read. */
TEST(ids_not_positions_found_late_still_resolve)
{
    struct profd_profile *p = many_samples(600000);
    struct pb_writer tail = {0};
    put_location_at(&tail, 1002, 0xa);
    put_location_at(&tail, 1001, 0xb);
    const uint32_t id = 1001;
    const int64_t value = 1;
    size_t m = pb_begin(&tail, 2);
    pb_put_packed_u32(&tail, 1, &id, 1);
    pb_put_packed_i64(&tail, 2, &value, 1);
    pb_end(&tail, m);
    char err[256];
    struct profd_profile *back = decode_between(p, NULL, 0, tail.buf, tail.len, err, sizeof(err));
    CHECK(back != NULL);
    if (back) {
        CHECK_INT(back->nlocations, 1002);
        CHECK_INT(back->nsamples, 600001);
        uint32_t ref = back->samples[600000].locations[0];
        CHECK_INT(ref, 1002);
        CHECK_INT(back->locations[ref - 1].address, 0xb);
        CHECK_INT(back->samples[599999].locations[3], p->samples[599999].locations[3]);
    }
    profd_profile_free(back);
    free(tail.buf);
    profd_profile_free(p);
}

TEST(protobuf_c_reads_our_encoding)
{
    struct profd_profile *p = decode_corpus("compile-nethttp.cpu");
    CHECK(p != NULL);
    if (!p)
        return;
    uint8_t *raw;
    size_t len;
    profd_pprof_encode_raw(p, &raw, &len);
    Perftools__Profiles__Profile *m = perftools__profiles__profile__unpack(NULL, len, raw);
    CHECK(m != NULL);
    if (m) {
        CHECK_INT(m->n_sample, p->nsamples);
        CHECK_INT(m->n_location, p->nlocations);
        CHECK_INT(m->n_function, p->nfunctions);
        CHECK_INT(m->n_string_table, p->nstrings);
        CHECK_STR(m->string_table[0], "");
        for (size_t i = 0; i < m->n_location; i++)
            CHECK_INT(m->location[i]->id, i + 1);
        for (size_t i = 0; i < m->n_function; i++)
            CHECK_INT(m->function[i]->id, i + 1);
        for (size_t i = 0; i < m->n_mapping; i++)
            CHECK_INT(m->mapping[i]->id, i + 1);
        for (size_t i = 0; i < m->n_sample; i++)
            CHECK_INT(m->sample[i]->n_value, p->nsample_types);
        CHECK_INT(m->period, p->period);
        perftools__profiles__profile__free_unpacked(m, NULL);
    }
    free(raw);
    profd_profile_free(p);
}

/* A small profile written by hand: sparse ids, unpacked repeated fields (as
 * Go writes short lists), and fields this decoder does not know. */
static void build_handmade(struct pb_writer *w, bool bad_string0)
{
    const char *strings[] = {bad_string0 ? "x" : "", "samples", "count", "main", "f.go"};
    size_t m = pb_begin(w, 1);
    pb_put_uint(w, 1, 1);
    pb_put_uint(w, 2, 2);
    pb_end(w, m);
    m = pb_begin(w, 2);             /* sample: unpacked location ids 70, 80; value 5 */
    pb_put_tag(w, 1, PB_VARINT);
    pb_put_varint(w, 70);
    pb_put_tag(w, 1, PB_VARINT);
    pb_put_varint(w, 80);
    pb_put_tag(w, 2, PB_VARINT);
    pb_put_varint(w, 5);
    pb_end(w, m);
    for (int i = 0; i < 2; i++) {
        m = pb_begin(w, 4);         /* locations 70 and 80 -> function 9 */
        pb_put_uint(w, 1, i ? 80 : 70);
        pb_put_uint(w, 3, 0x1000 + (uint64_t)i);
        size_t lm = pb_begin(w, 4);
        pb_put_uint(w, 1, 9);
        pb_put_uint(w, 2, 10 + (uint64_t)i);
        pb_end(w, lm);
        pb_end(w, m);
    }
    m = pb_begin(w, 5);             /* function 9, its id after its name */
    pb_put_uint(w, 2, 3);
    pb_put_uint(w, 1, 9);
    pb_put_uint(w, 4, 4);
    pb_end(w, m);
    for (size_t i = 0; i < 5; i++)
        pb_put_bytes_always(w, 6, strings[i], strlen(strings[i]));
    pb_put_uint(w, 100, 42);        /* unknown fields */
    pb_put_bytes(w, 101, "zz", 2);
}

TEST(unpacked_sparse_ids_unknown_fields)
{
    struct pb_writer w = {0};
    build_handmade(&w, false);
    char err[256];
    struct profd_profile *p = profd_pprof_decode(w.buf, w.len, 1 << 20, err, sizeof(err));
    CHECK(p != NULL);
    if (p) {
        CHECK_INT(p->nsamples, 1);
        CHECK_INT(p->samples[0].nlocations, 2);
        CHECK_INT(p->samples[0].locations[0], 1);   /* ids 70, 80 became refs 1, 2 */
        CHECK_INT(p->samples[0].locations[1], 2);
        CHECK_INT(p->samples[0].values[0], 5);
        CHECK_INT(p->locations[1].lines[0].function, 1);
        CHECK_INT(p->locations[1].lines[0].line, 11);
        CHECK(profd_profile_str_eq(p, p->functions[0].name, "main"));
        CHECK_INT(profd_profile_intern(p, "main", 4), 3);
        CHECK_INT(profd_profile_intern(p, "new", 3), 5);
        CHECK_INT(p->nstrings, 6);
    }
    profd_profile_free(p);
    free(w.buf);
}

/* Decode and check agree on data: both accept it, with the same time and
 * duration, or both refuse it with the same message, which is returned
 * (into err). */
static bool decode_and_check_agree(const uint8_t *data, size_t len, char *err, size_t errlen)
{
    char check_err[256] = "";
    int64_t t = -1, d = -1;
    struct profd_profile *p = profd_pprof_decode(data, len, 1 << 20, err, errlen);
    int rc = profd_pprof_check(data, len, 1 << 20, &t, &d, NULL, check_err, sizeof(check_err));
    CHECK_INT(rc, p ? 0 : -1);
    if (p) {
        CHECK_INT(t, p->time_nanos);
        CHECK_INT(d, p->duration_nanos);
    } else {
        CHECK_STR(check_err, err);
    }
    bool ok = p != NULL;
    profd_profile_free(p);
    return ok;
}

/* Decode and check both refuse data with a message holding want. */
static void expect_error(const uint8_t *data, size_t len, const char *want)
{
    char err[256] = "";
    CHECK(!decode_and_check_agree(data, len, err, sizeof(err)));
    CHECK_CONTAINS(err, want);
}

/* Checks in a row keep what they inflate and build for the next one: each
 * corpus profile, gzip'd and raw, after a larger one and a refused one,
 * is read as its decode reads it. */
TEST(checks_in_a_row_agree_with_decodes)
{
    char err[256];
    for (size_t i = 0; i < sizeof(corpus_files) / sizeof(*corpus_files); i++) {
        char path[512];
        snprintf(path, sizeof(path), "%s/go/%s.pb.gz", check_corpus(), corpus_files[i]);
        size_t len, raw_len;
        unsigned char *gz = check_read_file(path, &len);
        uint8_t *raw;
        CHECK_INT(profd_gunzip(gz, len, PROFD_PPROF_MAX_DECODED, &raw, &raw_len, err,
                               sizeof(err)), 0);
        int64_t t, d;
        CHECK_INT(profd_pprof_check(gz, len, raw_len - 1, &t, &d, NULL, err, sizeof(err)), -1);
        CHECK_CONTAINS(err, "exceeds the limit of");
        int64_t qt, qd;   /* what every encoder writes is proven valid quickly */
        CHECK(profd_pprof_quick_valid(raw, raw_len, &qt, &qd));
        profd_pprof_quick_valid_wide(false);
        CHECK(profd_pprof_quick_valid(raw, raw_len, &qt, &qd));
        profd_pprof_quick_valid_wide(true);
        CHECK(decode_and_check_agree(gz, len, err, sizeof(err)) || raw_len > (1 << 20));
        CHECK(decode_and_check_agree(raw, raw_len, err, sizeof(err)) || raw_len > (1 << 20));
        CHECK(!decode_and_check_agree(raw, raw_len / 2, err, sizeof(err)));
        free(raw);
        free(gz);
    }
}

/* A thread's decodes reuse the arrays they grow: a decode after a larger
 * one, a refused one and one with sparse ids reads as the first did. */
/* Whether string idx of p is name. */
static bool string_is(const struct profd_profile *p, uint32_t idx, const char *name)
{
    return idx < p->nstrings && p->strings[idx].len == strlen(name) &&
           !memcmp(p->strings[idx].ptr, name, p->strings[idx].len);
}

/* The type names a check reads are the decoded profile's, for every corpus
 * profile, gzip'd as received. */
TEST(checks_read_the_type_names_a_decode_finds)
{
    for (size_t i = 0; i < sizeof(corpus_files) / sizeof(*corpus_files); i++) {
        char path[512], err[256];
        snprintf(path, sizeof(path), "%s/go/%s.pb.gz", check_corpus(), corpus_files[i]);
        size_t len;
        unsigned char *gz = check_read_file(path, &len);
        struct profd_type_names t;
        int64_t time_nanos, duration_nanos;
        CHECK_INT(profd_pprof_check(gz, len, PROFD_PPROF_MAX_DECODED, &time_nanos,
                                    &duration_nanos, &t, err, sizeof(err)), 0);
        struct profd_profile *p = decode_corpus(corpus_files[i]);
        CHECK(string_is(p, p->period_type.type, t.period));
        CHECK_INT(t.nsample, p->nsample_types);
        for (uint32_t s = 0; s < t.nsample; s++)
            CHECK(string_is(p, p->sample_types[s].type, t.sample[s]));
        CHECK(t.nsample > 0 && t.sample[0][0]);
        CHECK(!t.cut);
        profd_profile_free(p);
        free(gz);
    }
}

/* Strings before the types, more sample types than are kept, a name past
 * 63 bytes, a type naming no string, and no period type. */
TEST(type_names_in_any_order_cut_to_fit)
{
    static const char long_name[] = "a_sample_type_name_of_seventy_bytes_which_is_more_than_"
                                    "sixty_three_ok";
    const char *strings[] = {"", "count", "late", long_name};
    struct pb_writer w = {0};
    for (size_t i = 0; i < 4; i++)
        pb_put_bytes_always(&w, 6, strings[i], strlen(strings[i]));
    for (uint64_t i = 0; i < PROFD_TYPE_NAMES + 2; i++) {
        size_t m = pb_begin(&w, 1);
        pb_put_uint(&w, 1, i == 0 ? 3 : i == 1 ? 2 : i == 2 ? 99 : 1);
        pb_put_uint(&w, 2, 1);
        pb_end(&w, m);
    }
    struct profd_type_names t;
    memset(&t, 'x', sizeof(t));
    profd_pprof_type_names(w.buf, w.len, &t);
    CHECK_STR(t.period, "");
    CHECK_INT(t.nsample, PROFD_TYPE_NAMES);
    CHECK_INT(strlen(t.sample[0]), 63);
    CHECK(!strncmp(t.sample[0], long_name, 63));
    CHECK_STR(t.sample[1], "late");
    CHECK_STR(t.sample[2], "");
    CHECK_STR(t.sample[3], "count");
    CHECK(t.cut);
    free(w.buf);
}

TEST(decodes_in_a_row_do_not_see_each_other)
{
    struct profd_profile *first = decode_corpus("heap");
    profd_profile_free(decode_corpus("compile-nethttp.cpu"));
    struct pb_writer w = {0};
    build_handmade(&w, true);
    expect_error(w.buf, w.len, "string_table[0] must be \"\"");
    w.len = 0;
    build_handmade(&w, false);
    char err[256];
    struct profd_profile *sparse = profd_pprof_decode(w.buf, w.len, 1 << 20, err, sizeof(err));
    CHECK(sparse != NULL);
    int64_t t, d;   /* ids that are not positions: left to the decoder */
    CHECK(!profd_pprof_quick_valid(w.buf, w.len, &t, &d));
    CHECK(decode_and_check_agree(w.buf, w.len, err, sizeof(err)));
    profd_profile_free(sparse);
    free(w.buf);
    struct profd_profile *again = decode_corpus("heap");
    CHECK(first != NULL && again != NULL);
    if (first && again)
        check_same(first, again);
    profd_profile_free(again);
    profd_profile_free(first);
}

/* Case i, the profile in w (freed here): the quick proof says yes, and
 * the decoder accepts it, exactly when it is valid. */
static void expect_case(size_t i, struct pb_writer *w, bool valid)
{
    int64_t t, d;
    char err[256];
    for (int wide = 1; wide >= 0; wide--) {   /* the same answer from both readings */
        profd_pprof_quick_valid_wide(wide);
        if (profd_pprof_quick_valid(w->buf, w->len, &t, &d) != valid)
            CHECK_FAIL_("case %zu: the quick proof%s says %s", i, wide ? "" : " (not wide)",
                        valid ? "no" : "yes");
    }
    profd_pprof_quick_valid_wide(true);
    if (decode_and_check_agree(w->buf, w->len, err, sizeof(err)) != valid)
        CHECK_FAIL_("case %zu: the decoder %s it (%s)", i, valid ? "refuses" : "accepts", err);
    free(w->buf);
}

/* A profile of one sample type, nlocations locations with ids 1..nlocations,
 * and one sample whose packed location ids are the len bytes at ids. */
static void build_packed_ids(struct pb_writer *w, uint64_t nlocations, const uint8_t *ids,
                             size_t len)
{
    size_t m = pb_begin(w, 1);
    pb_end(w, m);
    for (uint64_t id = 1; id <= nlocations; id++) {
        m = pb_begin(w, 4);
        pb_put_uint(w, 1, id);
        pb_end(w, m);
    }
    m = pb_begin(w, 2);
    pb_put_bytes(w, 1, ids, len);
    pb_put_uint(w, 2, 1);
    pb_end(w, m);
    pb_put_bytes_always(w, 6, "", 0);
}

/* Packed location ids at the edges of the quick proof's readings (eight
 * bytes at a time, then one and two bytes at a time): it says yes exactly
 * when the decoder accepts. */
TEST(packed_location_ids_at_the_edges)
{
    static const struct {
        uint64_t nlocations;
        uint8_t ids[24];
        size_t len;
        bool valid;
    } cases[] = {
        {200, {1, 127, 0x80, 0x01, 0xc8, 0x01}, 6, true},   /* 1, 127, 128, 200 */
        {200, {0xc9, 0x01}, 2, false},                      /* 201 */
        {200, {0}, 1, false},                               /* 0 */
        {200, {0x80, 0x81, 0x00}, 3, true},                 /* 128 in three bytes */
        {200, {5, 0x80}, 2, false},                         /* cut inside the last id */
        {200, {0xff, 0xff, 0xff, 0xff, 0x0f}, 5, false},    /* far past the table */
        /* words of eight bytes: 4246 locations, a high byte below 33 is sure */
        {4246, {1, 0x80, 0x01, 127, 0xa0, 0x20, 0x96, 0x21, 5, 6}, 10, true},  /* 4246 last */
        {4246, {1, 0x97, 0x21, 4, 5, 6, 7, 8, 9}, 9, false},                  /* 4247 */
        {4246, {1, 2, 3, 4, 5, 6, 7, 8, 0x97, 0x21}, 10, false},     /* 4247, after a word */
        {4246, {1, 2, 3, 0, 5, 6, 7, 8, 9}, 9, false},                         /* 0 */
        {4246, {1, 2, 3, 0x80, 0x00, 6, 7, 8, 9}, 9, false},                   /* 0, two bytes */
        {4246, {1, 2, 3, 0x85, 0x00, 6, 7, 8, 9}, 9, true},                    /* 5, two bytes */
        {4246, {1, 2, 3, 4, 5, 6, 7, 0x80, 0x01, 9}, 10, true},   /* 128 across two words */
        {4246, {1, 2, 3, 4, 5, 6, 7, 0x97, 0x21, 9}, 10, false},  /* 4247 across two words */
        {4246, {1, 2, 3, 4, 5, 6, 0xdf, 0xfe, 0x20, 9}, 10, false},   /* 540511 across them */
        {4246, {1, 2, 3, 4, 5, 6, 0x81, 0x80, 0x00, 9}, 10, true},    /* 1 in three, across */
        {4246, {1, 2, 3, 4, 5, 6, 7, 8, 0x80}, 9, false},         /* cut after a word */
        {4246, {1, 2, 0x80, 0x80, 0x01, 6, 7, 8, 9}, 9, false},   /* 16384 */
        {4246, {1, 2, 0x81, 0x80, 0x00, 6, 7, 8, 9}, 9, true},    /* 1 in three bytes */
        {4246, {0xff, 0x20, 0xff, 0x20, 0xff, 0x20, 0xff, 0x20, 0xff, 0x20, 0xff, 0x20}, 12,
         true},                                                   /* 4223, six times */
        /* two whole words; a last word over ids read already */
        {4246, {1, 2, 3, 4, 5, 6, 7, 0x80, 0x01, 2, 3, 4, 5, 6, 0x96, 0x21}, 16, true},
        {4246, {1, 2, 3, 4, 5, 6, 7, 0x80, 0x01, 2, 3, 4, 5, 6, 0x97, 0x21}, 16, false},
        {100, {1, 2, 3, 4, 5, 6, 7, 8, 101}, 9, false},
        {100, {0x81, 0x80, 0x00, 4, 5, 6, 7, 8, 9, 10}, 10, true},   /* 1 in three, then more */
        {100, {1, 2, 3, 4, 5, 6, 7, 100, 9}, 9, true},
        {100, {1, 2, 3, 4, 5, 6, 7, 101, 9}, 9, false},
        {100, {1, 2, 3, 4, 5, 6, 0x80, 0x01, 9}, 9, false},       /* 128 */
        /* 20000 locations: every two-byte id is sure, three are read one by one */
        {20000, {0xff, 0x7f, 1, 2, 3, 4, 5, 6, 0xa0, 0x9c, 0x01}, 11, true},   /* 16383, 20000 */
        {20000, {0xff, 0x7f, 1, 2, 3, 4, 5, 6, 0xa1, 0x9c, 0x01}, 11, false},  /* 20001 */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        struct pb_writer w = {0};
        build_packed_ids(&w, cases[i].nlocations, cases[i].ids, cases[i].len);
        expect_case(i, &w, cases[i].valid);
    }
}

/* One field of a case's location or line: its tag and its value (for
 * the location's tag 0x22, the line's fields instead). */
struct field_bytes {
    uint8_t tag;
    uint64_t value;
};

/* Puts the fields f as they are, up to the one of tag 0. */
static void put_field_bytes(struct pb_writer *w, const struct field_bytes *f)
{
    for (; f->tag; f++) {
        pb_put_varint(w, f->tag);
        pb_put_varint(w, f->value);
    }
}

/* Puts ntypes sample types (no names), mapping 1 and functions 1 (of the
 * fields fn1, or its id alone when NULL) and 2. */
static void put_types_mapping_functions(struct pb_writer *w, unsigned ntypes,
                                        const struct field_bytes *fn1)
{
    for (unsigned i = 0; i < ntypes; i++) {
        size_t m = pb_begin(w, 1);
        pb_end(w, m);
    }
    size_t m = pb_begin(w, 3);
    pb_put_uint(w, 1, 1);
    pb_end(w, m);
    for (uint64_t id = 1; id <= 2; id++) {
        m = pb_begin(w, 5);
        if (id == 1 && fn1)
            put_field_bytes(w, fn1);
        else
            pb_put_uint(w, 1, id);
        pb_end(w, m);
    }
}

/* A profile of one sample type, one mapping, two functions (the first of
 * the fields fn1, or its id alone when NULL) and one location with the
 * fields loc (lines: line's fields), and one sample of that location with
 * nvalues values not packed. */
static void build_location_case(struct pb_writer *w, const struct field_bytes *loc,
                                const struct field_bytes *line, unsigned nvalues,
                                const struct field_bytes *fn1)
{
    put_types_mapping_functions(w, 1, fn1);
    size_t m = pb_begin(w, 4);
    for (; loc->tag; loc++) {
        if (loc->tag != 0x22) {
            put_field_bytes(w, (const struct field_bytes[]){*loc, {0}});
            continue;
        }
        size_t l = pb_begin(w, 4);   /* tag 0x22 */
        put_field_bytes(w, line);
        pb_end(w, l);
    }
    pb_end(w, m);
    m = pb_begin(w, 2);
    pb_put_uint(w, 1, 1);
    for (unsigned i = 0; i < nvalues; i++)
        pb_put_uint(w, 2, 7);
    pb_end(w, m);
    pb_put_bytes_always(w, 6, "", 0);
}

/* Locations and lines read in place by the quick proof: it says yes
 * exactly when the decoder accepts. */
TEST(locations_and_lines_read_in_place)
{
    static const struct {
        struct field_bytes loc[6], line[5];
        unsigned nvalues;
        bool valid;
    } cases[] = {
        {{{0x08, 1}, {0x10, 1}, {0x18, 0x401234}, {0x22, 0}}, {{0x08, 2}, {0x10, 10}}, 1, true},
        {{{0x08, 1}, {0x10, 2}, {0x22, 0}}, {{0x08, 2}}, 1, false},           /* mapping 2 */
        {{{0x08, 1}, {0x22, 0}}, {{0x08, 3}}, 1, false},                      /* function 3 */
        {{{0x08, 1}, {0x20, 5}}, {{0}}, 1, false},                            /* line a varint */
        {{{0x10, 1}, {0x22, 0}}, {{0x08, 1}}, 1, false},                      /* no id */
        {{{0x08, 2}}, {{0}}, 1, false},                                       /* id 2 */
        {{{0x08, 1}, {0x22, 0}}, {{0x08, 1}, {0x18, 4}, {0x48, 9}}, 1, true}, /* column, field 9 */
        {{{0x08, 1}, {0x38, 7}, {0x28, 1}}, {{0}}, 1, true},                  /* field 7, folded */
        {{{0x08, 1}, {0x22, 0}}, {{0x0a, 0}}, 1, false},                      /* function a message */
        {{{0x08, 1}}, {{0}}, 2, false},                                       /* two values */
        {{{0x08, 1}, {0x08, 1}}, {{0}}, 1, true},                             /* the id twice */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        struct pb_writer w = {0};
        build_location_case(&w, cases[i].loc, cases[i].line, cases[i].nvalues, NULL);
        expect_case(i, &w, cases[i].valid);
    }
}

/* A profile of one sample type, one mapping, function 1 of the fields fn
 * and function 2 of its id alone, the strings "", "a" and "b", and one
 * sample of location 1, whose line names function 1. */
static void build_function_case(struct pb_writer *w, const struct field_bytes *fn)
{
    build_location_case(w, (const struct field_bytes[]){{0x08, 1}, {0x22, 0}, {0}},
                        (const struct field_bytes[]){{0x08, 1}, {0}}, 1, fn);
    pb_put_bytes_always(w, 6, "a", 1);
    pb_put_bytes_always(w, 6, "b", 1);
}

/* Functions read in place by the quick proof: it says yes exactly when
 * the decoder accepts. */
TEST(functions_read_in_place)
{
    static const struct {
        struct field_bytes fn[7];
        bool valid;
    } cases[] = {
        {{{0x08, 1}, {0x10, 1}, {0x18, 2}, {0x20, 1}, {0x28, 42}}, true},
        {{{0x08, 1}, {0x10, 2}, {0x18, 2}, {0x20, 2}}, true},    /* the last string */
        {{{0x08, 1}, {0x10, 3}}, false},                         /* name past the strings */
        {{{0x08, 1}, {0x18, 3}}, false},                         /* system name past them */
        {{{0x08, 1}, {0x20, 3}}, false},                         /* file name past them */
        {{{0x08, 2}, {0x10, 1}}, false},                         /* id 2 first */
        {{{0x10, 1}}, false},                                    /* no id */
        {{{0x08, 1}, {0x30, 5}, {0x10, 1}}, true},               /* field 6 */
        {{{0x08, 1}, {0x12, 0}}, false},                         /* name a message */
        {{{0x08, 1}, {0x08, 1}, {0x28, 0}}, true},               /* the id twice */
        {{{0x08, 1}, {0x28, 0x7fffffffffffffff}}, true},         /* start line of nine bytes */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        struct pb_writer w = {0};
        build_function_case(&w, cases[i].fn);
        expect_case(i, &w, cases[i].valid);
    }
}

/* A profile of ntypes sample types, a mapping, two functions, nlocations
 * locations (the first of the len bytes at loc when len is not 0, the
 * others their id alone) and one sample of the bytes at sample. */
static void build_raw_case(struct pb_writer *w, unsigned ntypes, unsigned nlocations,
                           const uint8_t *loc, size_t loc_len, const uint8_t *sample,
                           size_t sample_len)
{
    put_types_mapping_functions(w, ntypes, NULL);
    for (uint64_t id = 1; id <= nlocations; id++) {
        if (id == 1 && loc_len) {
            pb_put_bytes(w, 4, loc, loc_len);
            continue;
        }
        size_t m = pb_begin(w, 4);
        pb_put_uint(w, 1, id);
        pb_end(w, m);
    }
    pb_put_bytes(w, 2, sample, sample_len);
    pb_put_bytes_always(w, 6, "", 0);
}

/* Labels read in place by the quick proof (the profile has one string,
 * ""): it says yes exactly when the decoder accepts. */
TEST(labels_read_in_place)
{
    static const struct {
        uint8_t label[12];
        size_t len;
        bool valid;
    } cases[] = {
        {{0x08, 0x00, 0x18, 0x05}, 4, true},                 /* key "", number 5 */
        {{0x08, 0x00, 0x10, 0x00, 0x20, 0x00}, 6, true},     /* string value and unit "" */
        {{0x08, 0x01}, 2, false},                            /* key past the strings */
        {{0x10, 0x01}, 2, false},                            /* value past them */
        {{0x20, 0x01}, 2, false},                            /* unit past them */
        {{0x08, 0x00, 0x28, 0x09}, 4, true},                 /* field 5 */
        {{0x0a, 0x00}, 2, false},                            /* key a message */
        {{0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 11, true},
        {{0x18, 0xff, 0xff}, 3, false},                      /* number cut */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        uint8_t sample[32] = {0x0a, 0x01, 0x01, 0x10, 0x07, 0x1a, (uint8_t)cases[i].len};
        memcpy(sample + 7, cases[i].label, cases[i].len);
        struct pb_writer w = {0};
        build_raw_case(&w, 1, 1, NULL, 0, sample, 7 + cases[i].len);
        expect_case(i, &w, cases[i].valid);
    }
}

/* Fills sample with len bytes of packed location ids, each 1 but for the
 * n bytes at bytes put at byte at, and then the values at values: its
 * length. */
static size_t sample_of_ids(uint8_t *sample, unsigned len, unsigned at, const uint8_t *bytes,
                            size_t n, const uint8_t *values, size_t values_len)
{
    sample[0] = 0x0a;
    sample[1] = (uint8_t)len;
    memset(sample + 2, 1, len);
    memcpy(sample + 2 + at, bytes, n);
    memcpy(sample + 2 + len, values, values_len);
    return 2 + len + values_len;
}

/* Samples: packed ids at the edges of the wide reading's 64 bytes, and
 * values; locations at the edges of their reading in place. The quick
 * proof says yes exactly when the decoder accepts, read wide or not. */
TEST(samples_and_locations_at_the_edges_of_their_readings)
{
    static const uint8_t one_value[] = {0x10, 0x07}, cut_value[] = {0x10},
                         cut_after[] = {0x10, 0x80},
                         ten_bytes[] = {0x10, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                        0x80, 0x01},
                         eleven_bytes[] = {0x10, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                           0x80, 0x80, 0x01},
                         packed_ten[] = {0x12, 0x0b, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                         0x80, 0x80, 0x01, 0x05},
                         packed_eleven[] = {0x12, 0x0c, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                            0x80, 0x80, 0x80, 0x01, 0x05};
    static const struct {   /* 200 locations */
        unsigned ntypes, len, at;
        uint8_t bytes[3];
        size_t n;
        const uint8_t *values;
        size_t values_len;
        bool valid;
    } samples[] = {
        {1, 64, 63, {2}, 1, one_value, sizeof(one_value), true},      /* 64 bytes of ids */
        {1, 65, 64, {2}, 1, one_value, sizeof(one_value), true},      /* 1 past them */
        {1, 64, 63, {0}, 1, one_value, sizeof(one_value), false},     /* 0 the last of 64 */
        {1, 100, 90, {0}, 1, one_value, sizeof(one_value), false},    /* 0 in the next 64 */
        {1, 70, 63, {0x80, 0x01}, 2, one_value, sizeof(one_value), true},   /* 128 across */
        {1, 70, 63, {0xc9, 0x01}, 2, one_value, sizeof(one_value), false},  /* 201 across */
        {1, 70, 62, {0x80, 0x80, 0x01}, 3, one_value, sizeof(one_value), false},  /* 16384 */
        {1, 70, 63, {0x81, 0x80, 0x00}, 3, one_value, sizeof(one_value), true},   /* 1 */
        {1, 127, 125, {0xc8, 0x01}, 2, one_value, sizeof(one_value), true},  /* 200 the last */
        {1, 127, 126, {0x81}, 1, one_value, sizeof(one_value), false},       /* the last cut */
        {1, 40, 0, {1}, 1, cut_value, sizeof(cut_value), false},     /* a tag, no value */
        {1, 40, 0, {1}, 1, cut_after, sizeof(cut_after), false},     /* a value cut */
        {1, 40, 0, {1}, 1, ten_bytes, sizeof(ten_bytes), true},      /* a value of ten bytes */
        {1, 40, 0, {1}, 1, eleven_bytes, sizeof(eleven_bytes), false},   /* of eleven */
        {2, 40, 0, {1}, 1, packed_ten, sizeof(packed_ten), true},        /* packed, ten */
        {2, 40, 0, {1}, 1, packed_eleven, sizeof(packed_eleven), false}, /* packed, eleven */
        {1, 40, 0, {1}, 1, packed_ten, sizeof(packed_ten), false},   /* two values of one type */
    };
    size_t i = 0;
    for (; i < sizeof(samples) / sizeof(*samples); i++) {
        uint8_t sample[160];
        size_t len = sample_of_ids(sample, samples[i].len, samples[i].at, samples[i].bytes,
                                   samples[i].n, samples[i].values, samples[i].values_len);
        struct pb_writer w = {0};
        build_raw_case(&w, samples[i].ntypes, 200, NULL, 0, sample, len);
        expect_case(i, &w, samples[i].valid);
    }
    /* Locations: id 1 in nine bytes, a line cut, a line longer than the
     * location, mapping 2 of 1, an address cut; then 64 bytes of lines,
     * the last naming function 2, then 3, of 2. */
    static const uint8_t id_in_nine[] = {0x08, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                         0x00},
                         line_cut[] = {0x08, 0x01, 0x22, 0x03, 0x08, 0x01},
                         line_past[] = {0x08, 0x01, 0x22, 0x02, 0x08, 0x01, 0x10},
                         mapping_two[] = {0x08, 0x01, 0x10, 0x02},
                         address_cut[] = {0x08, 0x01, 0x18, 0x80};
    static const struct {
        const uint8_t *loc;
        size_t len;
        bool valid;
    } locations[] = {
        {id_in_nine, sizeof(id_in_nine), true},
        {line_cut, sizeof(line_cut), false},
        {line_past, sizeof(line_past), false},
        {mapping_two, sizeof(mapping_two), false},
        {address_cut, sizeof(address_cut), false},
    };
    uint8_t one_location[] = {0x0a, 0x01, 0x01, 0x10, 0x07};
    for (size_t j = 0; j < sizeof(locations) / sizeof(*locations); j++, i++) {
        struct pb_writer w = {0};
        build_raw_case(&w, 1, 1, locations[j].loc, locations[j].len, one_location,
                       sizeof(one_location));
        expect_case(i, &w, locations[j].valid);
    }
    for (uint8_t function = 2; function <= 3; function++, i++) {
        uint8_t loc[64] = {0x08, 0x01, 0x18, 0x01};
        for (size_t at = 4; at < sizeof(loc); at += 6)
            memcpy(loc + at, (uint8_t[]){0x22, 0x04, 0x08, 0x01, 0x10, 0x01}, 6);
        loc[sizeof(loc) - 3] = function;
        struct pb_writer w = {0};
        build_raw_case(&w, 1, 1, loc, sizeof(loc), one_location, sizeof(one_location));
        expect_case(i, &w, function == 2);
    }
}

TEST(malformed_inputs_are_refused_with_place)
{
    struct pb_writer w = {0};
    build_handmade(&w, true);
    expect_error(w.buf, w.len, "string_table[0] must be \"\"");
    free(w.buf);

    w = (struct pb_writer){0};
    build_handmade(&w, false);
    expect_error(w.buf, w.len - 3, "at byte");   /* truncated in the last field */
    for (size_t cut = 1; cut < w.len; cut++) {     /* no cut may crash or leak */
        char err[256];
        decode_and_check_agree(w.buf, cut, err, sizeof(err));
    }
    free(w.buf);

    /* A sample pointing at a location that does not exist. */
    w = (struct pb_writer){0};
    size_t m = pb_begin(&w, 2);
    pb_put_uint(&w, 1, 7);
    pb_end(&w, m);
    pb_put_bytes_always(&w, 6, "", 0);
    expect_error(w.buf, w.len, "unknown location id 7");
    free(w.buf);

    /* Value count differs from the sample types. */
    w = (struct pb_writer){0};
    m = pb_begin(&w, 2);
    pb_put_uint(&w, 2, 1);
    pb_end(&w, m);
    pb_put_bytes_always(&w, 6, "", 0);
    expect_error(w.buf, w.len, "sample has 1 values, profile has 0 sample types");
    free(w.buf);

    /* A location whose id field comes twice, with different values. */
    w = (struct pb_writer){0};
    m = pb_begin(&w, 4);
    pb_put_uint(&w, 1, 1);
    pb_put_uint(&w, 3, 0x1000);
    pb_put_uint(&w, 1, 2);
    pb_end(&w, m);
    pb_put_bytes_always(&w, 6, "", 0);
    expect_error(w.buf, w.len, "Location has two different ids");
    free(w.buf);

    /* Duplicate and zero ids. */
    w = (struct pb_writer){0};
    for (int i = 0; i < 2; i++) {
        m = pb_begin(&w, 5);
        pb_put_uint(&w, 1, 4);
        pb_end(&w, m);
    }
    pb_put_bytes_always(&w, 6, "", 0);
    expect_error(w.buf, w.len, "duplicate function id 4");
    free(w.buf);
    w = (struct pb_writer){0};
    m = pb_begin(&w, 3);
    pb_put_uint(&w, 2, 4096);
    pb_end(&w, m);
    pb_put_bytes_always(&w, 6, "", 0);
    expect_error(w.buf, w.len, "mapping #0 has id 0");
    free(w.buf);

    /* A string index past the table. */
    w = (struct pb_writer){0};
    m = pb_begin(&w, 1);
    pb_put_uint(&w, 1, 9);
    pb_end(&w, m);
    pb_put_bytes_always(&w, 6, "", 0);
    expect_error(w.buf, w.len, "ValueType string index 9 out of range");
    free(w.buf);

    expect_error((const uint8_t *)"", 0, "string_table is empty");
    expect_error((const uint8_t *)"\x0a\x05\x08", 3, "length runs past the end");
}

/* Past 16 MiB, gzip is igzip's level 1: what it writes gunzips to the
 * input, whether the input compresses (a profile) or not (noise). */
TEST(large_streams_gzip_and_gunzip_back_compressible_or_not)
{
    size_t n = 17 << 20;
    uint8_t *noise = malloc(n);
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        noise[i] = (uint8_t)x;
    }
    struct profd_profile *p = many_samples(1300000);
    uint8_t *raw;
    size_t raw_len;
    profd_pprof_encode_raw(p, &raw, &raw_len);
    CHECK(raw_len >= (16u << 20));
    const uint8_t *inputs[] = {noise, raw};
    size_t lens[] = {n, raw_len};
    for (int i = 0; i < 2; i++) {
        uint8_t *gz, *back;
        size_t gzlen, backlen;
        char err[128];
        profd_gzip(inputs[i], lens[i], &gz, &gzlen);
        CHECK(gzlen < (i == 0 ? lens[i] + lens[i] / 100 : lens[i] / 2));   /* stored; compressed */
        CHECK_INT(profd_gunzip(gz, gzlen, lens[i], &back, &backlen, err, sizeof(err)), 0);
        CHECK_INT(backlen, lens[i]);
        CHECK(backlen == lens[i] && !memcmp(back, inputs[i], lens[i]));
        free(gz);
        free(back);
    }
    free(raw);
    free(noise);
    profd_profile_free(p);
}

TEST(gzip_bomb_is_refused)
{
    size_t n = 8 << 20;
    uint8_t *zeros = calloc(1, n), *gz;
    size_t gzlen;
    profd_gzip(zeros, n, &gz, &gzlen);
    CHECK(gzlen < n / 100);
    expect_error(gz, gzlen, "exceeds the limit of 1048576 bytes");
    uint8_t *back;
    size_t backlen;
    char err[128];
    CHECK_INT(profd_gunzip(gz, gzlen, n, &back, &backlen, err, sizeof(err)), 0);
    CHECK_INT(backlen, n);
    free(back);
    gz[gzlen / 2] ^= 0xff;
    CHECK_INT(profd_gunzip(gz, gzlen, n, &back, &backlen, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, "gzip");
    free(gz);
    free(zeros);
}

/* A trailer claiming more than deflate could make of the input (over
 * 1032:1) is not taken as the first guess of the output's size: no buffer
 * of that size is made for it, whatever the limit allows. */
TEST(a_forged_gzip_trailer_makes_no_large_buffer)
{
    const char text[] = "a small profile's bytes";
    uint8_t *gz;
    size_t gzlen;
    profd_gzip((const uint8_t *)text, sizeof(text), &gz, &gzlen);
    uint32_t forged = 0xfffffff0u;
    memcpy(gz + gzlen - 4, &forged, 4);   /* ISIZE, little-endian */
    uint8_t *buf = NULL;
    size_t cap = 0, out_len;
    char err[128];
    CHECK(profd_gunzip_into(gz, gzlen, (size_t)1 << 32, &buf, &cap, &out_len, err,
                            sizeof(err)) < 0);   /* the trailer is wrong: refused */
    CHECK(cap < 4096);
    free(buf);
    free(gz);
}

TEST(clone_is_independent)
{
    struct profd_profile *p = decode_corpus("heap");
    CHECK(p != NULL);
    if (!p)
        return;
    struct profd_profile *c = profd_profile_clone(p);
    check_same(p, c);
    c->samples[0].values[0] += 1;
    CHECK(p->samples[0].values[0] != c->samples[0].values[0]);
    uint32_t idx = profd_profile_intern(c, "only-in-clone", 13);
    CHECK_INT(idx, p->nstrings);
    CHECK(p->nstrings + 1 == c->nstrings);
    profd_profile_free(p);
    profd_profile_free(c);
}

RUN_TESTS()
