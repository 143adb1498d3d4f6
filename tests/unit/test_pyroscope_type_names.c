// SPDX-License-Identifier: Apache-2.0
/* The pyroscope exporter's pprof: sent as it is, or re-encoded with the
 * '-' Pyroscope refuses taken out of its type names, the record's own
 * model left as it was. Compiled in from the module's sources, through the
 * daemon's host functions. */
#include "check.h"

#include "../../core/graph.h"
#include "../../core/pprof.h"
#include "../../core/record.h"
#include "../../exporters/pyroscope/type_names.c"

static const struct profd_host *host = &profd_host_services;

/* A record of the Go corpus profile name, decoded. */
static struct profd_record *corpus_record(struct profd_batch *b, const char *name)
{
    char path[512], err[256];
    snprintf(path, sizeof(path), "%s/go/%s.pb.gz", check_corpus(), name);
    size_t len;
    unsigned char *data = check_read_file(path, &len);
    struct profd_record *r = profd_record_add(b, data, len, PROFD_ENC_PPROF_GZIP);
    CHECK(host->record_profile(r, err, sizeof(err)) != NULL);
    return r;
}

static struct profd_type_names types_of(struct profd_record *r)
{
    struct profd_type_names t;
    char err[256];
    CHECK_INT(host->record_type_names(r, &t, err, sizeof(err)), 0);
    return t;
}

TEST(a_profile_without_dashes_goes_as_it_came)
{
    struct profd_batch *b = host->batch_new();
    struct profd_record *r = corpus_record(b, "heap");
    struct profd_type_names t = types_of(r);
    struct pyroscope_pprof pp;
    bool fixed = true;
    char why[256];
    CHECK_INT(pyroscope_pprof_of(host, r, &t, &pp, &fixed, why, sizeof(why)), 0);
    CHECK(!fixed);
    CHECK(pp.data == r->payload && pp.len == r->payload_len && !pp.owned);
    pyroscope_pprof_free(&pp);
    host->batch_unref(b);
}

TEST(dashes_in_type_names_made_underscores_in_a_copy)
{
    struct profd_batch *b = host->batch_new();
    struct profd_record *r = corpus_record(b, "cpu");
    struct profd_profile *p = r->profile;
    uint32_t sample = p->sample_types[1].type, period = p->period_type.type;
    p->strings[sample] = (struct profd_str){"cpu-clock", 9};   /* as perf names it */
    if (period != sample)
        p->strings[period] = (struct profd_str){"cpu-clock", 9};
    host->record_touch(r);
    struct profd_type_names t = types_of(r);
    CHECK_STR(t.sample[1], "cpu-clock");
    struct pyroscope_pprof pp;
    bool fixed = false;
    char why[256];
    CHECK_INT(pyroscope_pprof_of(host, r, &t, &pp, &fixed, why, sizeof(why)), 0);
    CHECK(fixed && pp.owned);
    struct profd_profile *sent = host->pprof_decode(pp.data, pp.len, 0, why, sizeof(why));
    CHECK(sent != NULL);
    if (sent) {
        struct profd_type_names st;
        profd_profile_type_names(sent, &st);
        CHECK_STR(st.sample[1], "cpu_clock");
        CHECK_STR(st.period, "cpu_clock");
        CHECK_STR(st.sample[0], t.sample[0]);   /* the others as they were */
        CHECK_INT(sent->nsamples, p->nsamples);
        host->profile_free(sent);
    }
    CHECK(p->strings[sample].len == 9 && !memcmp(p->strings[sample].ptr, "cpu-clock", 9));
    pyroscope_pprof_free(&pp);
    host->batch_unref(b);
}

/* Sends r through pyroscope_pprof_of, checks no type name sent holds a
 * '-', and returns the names as sent. */
static struct profd_type_names sent_types(struct profd_record *r, bool want_fixed)
{
    struct profd_type_names t = types_of(r), st = {0};
    struct pyroscope_pprof pp;
    bool fixed = !want_fixed;
    char why[256];
    CHECK_INT(pyroscope_pprof_of(host, r, &t, &pp, &fixed, why, sizeof(why)), 0);
    CHECK(fixed == want_fixed);
    struct profd_profile *sent = host->pprof_decode(pp.data, pp.len, 0, why, sizeof(why));
    CHECK(sent != NULL);
    if (sent) {
        CHECK(!model_types_have_dash(sent));
        profd_profile_type_names(sent, &st);
        host->profile_free(sent);
    }
    pyroscope_pprof_free(&pp);
    return st;
}

/* A '-' past the 63 bytes of a name struct profd_type_names keeps. */
TEST(a_dash_late_in_a_long_name_is_found)
{
    static const char name[] = "a_type_name_longer_than_the_sixty_three_bytes_the_names_keep_"
                               "then-a_dash";
    struct profd_batch *b = host->batch_new();
    struct profd_record *r = corpus_record(b, "cpu");
    struct profd_profile *p = r->profile;
    p->strings[p->sample_types[1].type] = (struct profd_str){name, sizeof(name) - 1};
    host->record_touch(r);
    struct profd_type_names t = types_of(r);
    CHECK(t.cut && !strchr(t.sample[1], '-'));
    struct profd_type_names st = sent_types(r, true);
    CHECK(!strchr(st.sample[1], '-') && !strncmp(st.sample[1], name, 20));
    host->batch_unref(b);
}

/* A '-' in a sample type after the PROFD_TYPE_NAMES the names keep; and
 * such a profile without one goes as it came. */
TEST(a_dash_in_a_type_past_the_names_kept_is_found)
{
    for (int dash = 0; dash < 2; dash++) {
        struct profd_batch *b = host->batch_new();
        struct profd_record *r = corpus_record(b, "goroutine");
        struct profd_profile *p = r->profile;
        struct profd_value_type types[PROFD_TYPE_NAMES + 1];
        for (uint32_t i = 0; i < PROFD_TYPE_NAMES; i++)
            types[i] = p->sample_types[0];
        types[PROFD_TYPE_NAMES] = (struct profd_value_type){
            host->profile_intern(p, dash ? "page-faults" : "page_faults", 11),
            p->sample_types[0].unit};
        p->sample_types = types;
        p->nsample_types = PROFD_TYPE_NAMES + 1;
        p->nsamples = 0;   /* their values are one a type */
        host->record_touch(r);
        CHECK(types_of(r).cut);
        sent_types(r, dash);
        host->batch_unref(b);
    }
}

RUN_TESTS()
