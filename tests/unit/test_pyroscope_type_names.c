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

RUN_TESTS()
