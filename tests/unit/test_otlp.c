// SPDX-License-Identifier: Apache-2.0
/* The OTLP profiles codec: pprof -> OTLP -> pprof keeps every corpus profile
 * (compared through a dump that resolves every reference to its content),
 * several records share one deduplicated dictionary, and malformed or
 * old-version requests are refused with their reason. */
#include "check.h"

#include <stdarg.h>

#include "../../core/labels.h"
#include "../../core/otlp.h"
#include "../../core/gzip.h"
#include "../../core/proto_json.h"
#include "../../core/pb.h"
#include "../../core/pprof.h"
#include "../../core/profile.h"
#include "../../core/record.h"

static const char *const corpus_files[] = {
    "allocs", "bigheap", "block", "compile-nethttp.cpu", "cpu", "goroutine", "heap", "mutex",
    "threadcreate",
};

/* A growable text buffer. */
struct text {
    char *buf;
    size_t len, cap;
};

__attribute__((format(printf, 2, 3))) static void put(struct text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (t->len + (size_t)n + 1 > t->cap) {
        t->cap = (t->len + (size_t)n + 1) * 2;
        t->buf = realloc(t->buf, t->cap);
    }
    va_start(ap, fmt);
    vsnprintf(t->buf + t->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

static void put_str(struct text *t, const struct profd_profile *p, uint32_t i)
{
    put(t, "'%.*s'", (int)p->strings[i].len, p->strings[i].ptr);
}

static void dump_location(struct text *t, const struct profd_profile *p, uint32_t ref)
{
    const struct profd_location *loc = &p->locations[ref - 1];
    put(t, " [%#llx folded=%d", (unsigned long long)loc->address, loc->is_folded);
    if (loc->mapping) {
        const struct profd_mapping *m = &p->mappings[loc->mapping - 1];
        put(t, " map %#llx-%#llx@%#llx ", (unsigned long long)m->memory_start,
            (unsigned long long)m->memory_limit, (unsigned long long)m->file_offset);
        put_str(t, p, m->filename);
        put_str(t, p, m->build_id);
        put(t, " %d%d%d%d", m->has_functions, m->has_filenames, m->has_line_numbers,
            m->has_inline_frames);
    }
    for (uint32_t i = 0; i < loc->nlines; i++) {
        const struct profd_line *l = &loc->lines[i];
        put(t, " line %lld:%lld ", (long long)l->line, (long long)l->column);
        if (l->function) {
            const struct profd_function *fn = &p->functions[l->function - 1];
            put_str(t, p, fn->name);
            put_str(t, p, fn->system_name);
            put_str(t, p, fn->filename);
            put(t, "%lld", (long long)fn->start_line);
        }
    }
    put(t, "]");
}

/* Every fact of p, references resolved, samples in order. */
static char *dump(const struct profd_profile *p)
{
    struct text t = {0};
    put(&t, "time %lld duration %lld period %lld ", (long long)p->time_nanos,
        (long long)p->duration_nanos, (long long)p->period);
    put_str(&t, p, p->period_type.type);
    put_str(&t, p, p->period_type.unit);
    put(&t, " drop ");
    put_str(&t, p, p->drop_frames);
    put(&t, " keep ");
    put_str(&t, p, p->keep_frames);
    put(&t, " doc ");
    put_str(&t, p, p->doc_url);
    put(&t, " default ");
    put_str(&t, p, p->default_sample_type);
    for (uint32_t i = 0; i < p->ncomments; i++)
        put_str(&t, p, (uint32_t)p->comments[i]);
    put(&t, "\ntypes");
    for (uint32_t i = 0; i < p->nsample_types; i++) {
        put_str(&t, p, p->sample_types[i].type);
        put_str(&t, p, p->sample_types[i].unit);
    }
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct profd_sample *s = &p->samples[i];
        put(&t, "\nsample");
        for (uint32_t k = 0; k < p->nsample_types; k++)
            put(&t, " %lld", (long long)s->values[k]);
        for (uint32_t k = 0; k < s->nlabels; k++) {
            put(&t, " label ");
            put_str(&t, p, s->labels[k].key);
            put_str(&t, p, s->labels[k].str);
            put(&t, "%lld", (long long)s->labels[k].num);
            put_str(&t, p, s->labels[k].num_unit);
        }
        for (uint32_t k = 0; k < s->nlocations; k++)
            dump_location(&t, p, s->locations[k]);
    }
    return t.buf;
}

static uint8_t *encode(struct profd_batch *b, size_t *len)
{
    uint8_t *out;
    size_t skipped;
    char err[256];
    profd_otlp_encode(b->records, b->nrecords, &out, len, &skipped, err, sizeof(err));
    CHECK_INT(skipped, 0);
    return out;
}

static struct profd_batch *corpus_batch(const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/go/%s.pb.gz", check_corpus(), name);
    size_t len;
    unsigned char *data = check_read_file(path, &len);
    struct profd_batch *b = profd_batch_new();
    struct profd_record *r = profd_record_add(b, data, len, PROFD_ENC_PPROF_GZIP);
    profd_record_set_label(r, "service_name", "corpus");
    profd_record_set_label(r, "__name__", name);
    return b;
}

/* Every corpus profile through OTLP (and OTLP's JSON when via_json) and
 * back must keep every fact and its series labels. */
static void check_corpus_round_trip(bool via_json)
{
    for (size_t f = 0; f < sizeof(corpus_files) / sizeof(*corpus_files); f++) {
        struct profd_batch *in = corpus_batch(corpus_files[f]);
        char err[256];
        struct profd_profile *p = profd_record_profile(in->records[0], err, sizeof(err));
        CHECK(p != NULL);
        size_t len;
        uint8_t *otlp = encode(in, &len);
        if (via_json) {
            size_t json_len;
            char *json = profd_proto_to_json(PROFD_MSG_OTLP_REQUEST, otlp, len, &json_len);
            free(otlp);
            CHECK_INT(profd_json_to_proto(PROFD_MSG_OTLP_REQUEST, json, json_len, &otlp, &len, err,
                                           sizeof(err)), 0);
            free(json);
        }
        struct profd_batch *out = profd_batch_new();
        struct profd_otlp_result res;
        if (profd_otlp_decode(otlp, len, 0, out, &res, err, sizeof(err)) != 0)
            CHECK_FAIL_("%s: %s", corpus_files[f], err);
        CHECK_INT(res.rejected, 0);
        CHECK_INT(out->nrecords, 1);
        if (p && out->nrecords == 1) {
            struct profd_record *r = out->records[0];
            CHECK_STR(profd_record_label(r, "service_name"), "corpus");
            CHECK_STR(profd_record_label(r, "__name__"), corpus_files[f]);
            char *want = dump(p), *got = dump(r->profile);
            if (strcmp(want, got) != 0)
                CHECK_FAIL_("%s: round trip differs", corpus_files[f]);
            free(want);
            free(got);
        }
        free(otlp);
        profd_batch_unref(in);
        profd_batch_unref(out);
    }
}

TEST(corpus_round_trip_keeps_everything)
{
    check_corpus_round_trip(false);
}

TEST(json_round_trip_keeps_everything)
{
    check_corpus_round_trip(true);
}

TEST(json_follows_otlp_rules)
{
    static const char req[] =
        "{\"resourceProfiles\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
        "\"value\":{\"stringValue\":\"svc\"}}]},\"scopeProfiles\":[{\"profiles\":[{"
        "\"sampleType\":{\"typeStrindex\":1,\"unitStrindex\":2},\"timeUnixNano\":"
        "\"1700000000000000001\",\"samples\":[{\"stackIndex\":1,\"values\":[\"5\",7],"
        "\"linkIndex\":1,\"unknownKey\":true}]}]}]}],\"dictionary\":{\"stringTable\":[\"\","
        "\"cpu\",\"nanoseconds\",\"f\"],\"functionTable\":[{},{\"nameStrindex\":3}],"
        "\"locationTable\":[{},{\"address\":\"4096\",\"lines\":[{\"functionIndex\":1,"
        "\"line\":\"3\"}]}],\"stackTable\":[{},{\"locationIndices\":[1]}],\"linkTable\":[{},"
        "{\"traceId\":\"0102030405060708090a0b0c0d0e0f10\",\"spanId\":\"A1A2A3A4A5A6A7A8\"}]}}";
    uint8_t *pb;
    size_t len;
    char err[256];
    CHECK_INT(profd_json_to_proto(PROFD_MSG_OTLP_REQUEST, req, sizeof(req) - 1, &pb, &len, err,
                                   sizeof(err)), 0);
    struct profd_batch *out = profd_batch_new();
    struct profd_otlp_result res;
    CHECK_INT(profd_otlp_decode(pb, len, 0, out, &res, err, sizeof(err)), 0);
    CHECK_INT(out->nrecords, 1);
    if (out->nrecords == 1) {
        struct profd_profile *p = out->records[0]->profile;
        CHECK_STR(profd_record_label(out->records[0], "service_name"), "svc");
        CHECK_INT(out->records[0]->time_nanos, 1700000000000000001LL);
        CHECK_INT(p->samples[0].values[0], 12);
        CHECK_INT(p->locations[0].address, 4096);
        CHECK_INT(p->locations[0].lines[0].line, 3);
        char *d = dump(p);
        CHECK_CONTAINS(d, "'trace_id''0102030405060708090a0b0c0d0e0f10'");
        CHECK_CONTAINS(d, "'span_id''a1a2a3a4a5a6a7a8'");
        free(d);
    }
    free(pb);
    profd_batch_unref(out);
    CHECK_INT(profd_json_to_proto(PROFD_MSG_OTLP_REQUEST, "{\"dictionary\": {", 16, &pb, &len, err,
                                   sizeof(err)), -1);
    CHECK_STR(err, "JSON: unexpected end of the document at line 1, column 17");
    CHECK_INT(profd_json_to_proto(PROFD_MSG_OTLP_REQUEST, "{\"dictionary\":{\"stringTable\":3}}",
                                   32, &pb, &len, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, "stringTable: not an array");
}

TEST(records_share_one_dictionary)
{
    struct profd_batch *b = corpus_batch("heap");
    size_t one_len, both_len;
    uint8_t *one = encode(b, &one_len);
    struct profd_batch *second = corpus_batch("heap");
    struct profd_record *r = second->records[0];
    struct profd_record *copy = profd_record_add(b, r->payload, r->payload_len, r->encoding);
    r->payload = NULL;
    profd_record_set_label(copy, "service_name", "other");
    uint8_t *both = encode(b, &both_len);
    /* the second record adds its resource and profiles, not its tables */
    CHECK(both_len < one_len + one_len / 2);
    struct profd_batch *out = profd_batch_new();
    struct profd_otlp_result res;
    char err[256];
    CHECK_INT(profd_otlp_decode(both, both_len, 0, out, &res, err, sizeof(err)), 0);
    CHECK_INT(out->nrecords, 2);
    if (out->nrecords == 2) {
        CHECK_STR(profd_record_label(out->records[0], "service_name"), "corpus");
        CHECK_STR(profd_record_label(out->records[1], "service_name"), "other");
    }
    free(one);
    free(both);
    profd_batch_unref(b);
    profd_batch_unref(second);
    profd_batch_unref(out);
}

/* Decodes data expecting the request refused with a message holding want. */
static void expect_refused(const uint8_t *data, size_t len, const char *want)
{
    struct profd_batch *out = profd_batch_new();
    struct profd_otlp_result res;
    char err[512];
    CHECK_INT(profd_otlp_decode(data, len, 0, out, &res, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, want);
    CHECK_INT(out->nrecords, 0);
    profd_batch_unref(out);
}

/* Decodes data expecting its one profile refused with a message holding want. */
static void expect_profile_refused(const uint8_t *data, size_t len, const char *want)
{
    struct profd_batch *out = profd_batch_new();
    struct profd_otlp_result res;
    char err[512];
    CHECK_INT(profd_otlp_decode(data, len, 0, out, &res, err, sizeof(err)), 0);
    CHECK_INT(res.rejected, 1);
    CHECK_CONTAINS(res.message, want);
    CHECK_INT(out->nrecords, 0);
    profd_batch_unref(out);
}

/* A request with one profile whose one sample is `sample` (encoded fields),
 * and a dictionary of two strings and one stack. */
static void request_with_sample(struct pb_writer *w, const struct pb_writer *sample)
{
    size_t rp = pb_begin(w, 1), sp = pb_begin(w, 2), pr = pb_begin(w, 2);
    pb_put_bytes_always(w, 2, sample->buf, sample->len);
    pb_end(w, pr);
    pb_end(w, sp);
    pb_end(w, rp);
    size_t d = pb_begin(w, 2);
    pb_put_bytes_always(w, 5, "", 0);
    pb_put_bytes_always(w, 5, "cpu", 3);
    pb_put_bytes_always(w, 7, "", 0);
    pb_end(w, d);
}

TEST(malformed_requests_are_refused_with_a_reason)
{
    expect_refused((const uint8_t *)"\xff\xff\xff", 3, "truncated");
    /* dictionary whose location names function 5 of none */
    struct pb_writer w = {0};
    size_t d = pb_begin(&w, 2);
    pb_put_bytes_always(&w, 5, "", 0);
    size_t loc = pb_begin(&w, 2), line = pb_begin(&w, 3);
    pb_put_uint(&w, 1, 5);
    pb_end(&w, line);
    pb_end(&w, loc);
    pb_end(&w, d);
    expect_refused(w.buf, w.len, "function_index 5 out of range");
    /* string_table[0] not empty */
    w.len = 0;
    d = pb_begin(&w, 2);
    pb_put_bytes_always(&w, 5, "x", 1);
    pb_end(&w, d);
    expect_refused(w.buf, w.len, "string_table[0]");
    free(w.buf);
}

TEST(bad_profiles_are_refused_alone)
{
    struct pb_writer sample = {0}, w = {0};
    /* stack_index out of range */
    pb_put_uint(&sample, 1, 7);
    pb_put_packed_i64(&sample, 4, (int64_t[]){3}, 1);
    request_with_sample(&w, &sample);
    expect_profile_refused(w.buf, w.len, "stack_index 7 out of range");
    /* a v1.9 sample: values in field 2, no field 4 */
    sample.len = w.len = 0;
    pb_put_packed_u32(&sample, 2, (uint32_t[]){5}, 1);
    request_with_sample(&w, &sample);
    expect_profile_refused(w.buf, w.len, "v1.9.0");
    free(sample.buf);
    free(w.buf);
}

TEST(an_original_payload_may_not_inflate_past_the_limit)
{
    uint8_t *zeros = calloc(1, 1 << 20), *bomb;
    size_t bomb_len;
    profd_gzip(zeros, 1 << 20, &bomb, &bomb_len);   /* 1 MiB of zeros: a few KiB */
    struct pb_writer w = {0};
    size_t rp = pb_begin(&w, 1), sp = pb_begin(&w, 2), pr = pb_begin(&w, 2);
    pb_put_bytes_always(&w, 9, "pprof", 5);
    pb_put_bytes_always(&w, 10, bomb, bomb_len);
    pb_end(&w, pr);
    pb_end(&w, sp);
    pb_end(&w, rp);
    size_t d = pb_begin(&w, 2);
    pb_put_bytes_always(&w, 5, "", 0);
    pb_end(&w, d);
    struct profd_batch *out = profd_batch_new();
    struct profd_otlp_result res;
    char err[512];
    CHECK_INT(profd_otlp_decode(w.buf, w.len, 64 << 10, out, &res, err, sizeof(err)), 0);
    CHECK_INT(res.rejected, 1);   /* that profile alone */
    CHECK_CONTAINS(res.message, "original_payload: gzip: decompressed size exceeds the limit");
    CHECK_INT(out->nrecords, 0);
    profd_batch_unref(out);
    free(w.buf);
    free(bomb);
    free(zeros);
}

TEST(samples_without_values_count_their_timestamps)
{
    struct pb_writer sample = {0}, w = {0};
    uint64_t ts[3] = {1, 2, 3};
    pb_put_bytes_always(&sample, 5, ts, sizeof(ts));
    request_with_sample(&w, &sample);
    struct profd_batch *out = profd_batch_new();
    struct profd_otlp_result res;
    char err[256];
    CHECK_INT(profd_otlp_decode(w.buf, w.len, 0, out, &res, err, sizeof(err)), 0);
    CHECK_INT(out->nrecords, 1);
    if (out->nrecords == 1) {
        CHECK_INT(out->records[0]->profile->nsamples, 1);
        CHECK_INT(out->records[0]->profile->samples[0].values[0], 3);
        CHECK_STR(profd_record_label(out->records[0], "service_name"), "unknown_service");
    }
    profd_batch_unref(out);
    free(sample.buf);
    free(w.buf);
}

RUN_TESTS()
