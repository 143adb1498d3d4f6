// SPDX-License-Identifier: Apache-2.0
/* Series of raw pprof samples (lib/raw_series.c): each series' labels
 * checked as Pyroscope's distributor and Parca's server check them. */
#include "check.h"

#include <stdarg.h>
#include <string.h>

#include "../../core/graph.h"
#include "../../core/record.h"
#include "../../lib/grow.c"
#include "../../lib/label_valid.c"
#include "../../lib/raw_series.c"
#include "../../lib/utf8_valid.c"

static const struct profd_host *host = &profd_host_services;

/* A pprof of one sample type and nothing else: string_table "", "samples",
 * "count" and sample_type { type = 1, unit = 2 }. */
static const uint8_t empty_pprof[] = {0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, 0x32, 0x00, 0x32, 0x07,
                                      's', 'a', 'm', 'p', 'l', 'e', 's', 0x32, 0x05, 'c', 'o',
                                      'u', 'n', 't'};

/* One encoded series of the labels given (name, value, ...; NULL ends them)
 * in shape, with one sample of empty_pprof. */
static struct pb_buf series(enum raw_labels shape, ...)
{
    struct pb_buf out = {0}, set = {0};
    va_list ap;
    va_start(ap, shape);
    for (const char *name; (name = va_arg(ap, const char *));) {
        const char *value = va_arg(ap, const char *);
        struct pb_buf pair = {0};
        pb_buf_bytes(&pair, 1, name, strlen(name));
        pb_buf_bytes(&pair, 2, value, strlen(value));
        pb_buf_bytes(shape == RAW_LABEL_PAIRS ? &out : &set, 1, pair.p, pair.len);
        free(pair.p);
    }
    va_end(ap);
    if (shape == RAW_LABEL_SET)
        pb_buf_bytes(&out, 1, set.p, set.len);
    free(set.p);
    struct pb_buf sample = {0};
    pb_buf_bytes(&sample, 1, empty_pprof, sizeof(empty_pprof));
    pb_buf_bytes(&out, 2, sample.p, sample.len);
    free(sample.p);
    return out;
}

/* raw_series_read of s into a new batch: its one record's label name
 * (NULL when absent) in *value, or false with why set. */
static bool read_one(struct pb_buf s, enum raw_labels shape, const char *name,
                     const char **value, char *why, size_t whylen)
{
    static char kept[64];
    struct profd_batch *b = profd_batch_new();
    bool ok = raw_series_read(host, s.p, s.len, shape, false, 0, 0, b, why, whylen);
    if (ok) {
        CHECK_INT(b->nrecords, 1);
        const char *v = host->record_label(b->records[0], name);
        snprintf(kept, sizeof(kept), "%s", v ? v : "");
        *value = v ? kept : NULL;
    }
    host->batch_unref(b);
    free(s.p);
    return ok;
}

TEST(pyroscopes_dotted_names_are_stored_with_underscores)
{
    char why[256];
    const char *v;
    CHECK(read_one(series(RAW_LABEL_PAIRS, "service.name", "checkout", "env", "prod", NULL),
                   RAW_LABEL_PAIRS, "service_name", &v, why, sizeof(why)));
    CHECK_STR(v, "checkout");
    /* the same label twice, once dotted, in either order: one */
    CHECK(read_one(series(RAW_LABEL_PAIRS, "a.b", "1", "a_b", "1", NULL), RAW_LABEL_PAIRS,
                   "a_b", &v, why, sizeof(why)));
    CHECK_STR(v, "1");
    CHECK(read_one(series(RAW_LABEL_PAIRS, "a_b", "1", "a.b", "1", NULL), RAW_LABEL_PAIRS,
                   "a.b", &v, why, sizeof(why)));
    CHECK(v == NULL);
}

TEST(a_dotted_name_that_clashes_is_refused_in_either_order)
{
    char why[256];
    const char *v;
    CHECK(!read_one(series(RAW_LABEL_PAIRS, "a.b", "1", "a_b", "2", NULL), RAW_LABEL_PAIRS,
                    "a_b", &v, why, sizeof(why)));
    CHECK_STR(why, "series 0: duplicate label name \"a_b\"");
    CHECK(!read_one(series(RAW_LABEL_PAIRS, "a_b", "2", "a.b", "1", NULL), RAW_LABEL_PAIRS,
                    "a_b", &v, why, sizeof(why)));
    CHECK_STR(why, "series 0: duplicate label name \"a_b\"");
    CHECK(!read_one(series(RAW_LABEL_PAIRS, "k", "1", "k", "1", NULL), RAW_LABEL_PAIRS, "k", &v,
                    why, sizeof(why)));
    CHECK_STR(why, "series 0: duplicate label name \"k\"");
}

TEST(parca_refuses_dotted_names_and_both_refuse_other_bad_labels)
{
    char why[256];
    const char *v;
    CHECK(!read_one(series(RAW_LABEL_SET, "a.b", "1", NULL), RAW_LABEL_SET, "a_b", &v, why,
                    sizeof(why)));
    CHECK_STR(why, "series 0: invalid label name \"a.b\"");
    CHECK(read_one(series(RAW_LABEL_SET, "a_b", "1", NULL), RAW_LABEL_SET, "a_b", &v, why,
                   sizeof(why)));
    CHECK_STR(v, "1");
    CHECK(!read_one(series(RAW_LABEL_PAIRS, "bad-name", "1", NULL), RAW_LABEL_PAIRS, "x", &v,
                    why, sizeof(why)));
    CHECK_STR(why, "series 0: invalid label name \"bad-name\"");
    CHECK(!read_one(series(RAW_LABEL_SET, "k", "caf\xe9", NULL), RAW_LABEL_SET, "k", &v, why,
                    sizeof(why)));
    CHECK_STR(why, "series 0: label \"k\": value not valid UTF-8");
}

RUN_TESTS()
