// SPDX-License-Identifier: Apache-2.0
/* The perf_data module's inner parts: time ordering of records, and a
 * stream fed in pieces reading the same records as the whole input.
 * Compiled in from the module sources. */
#include "check.h"

#include "../../lib/grow.c"
#include "../../receivers/perf_data/index.c"
#include "../../receivers/perf_data/order.c"
#include "../../receivers/perf_data/perf_file.c"
#include "../../receivers/perf_data/util.c"

/* A file of one attr whose samples hold TID and TIME. */
static void one_attr_file(struct perf_file *f)
{
    memset(f, 0, sizeof(*f));
    f->attrs = calloc(1, sizeof(*f->attrs));
    f->nattrs = 1;
    f->attrs[0].sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
    f->attrs[0].flags = PERF_ATTR_FLAG_SAMPLE_ID_ALL;
}

struct delivered {
    uint64_t times[16];
    int n;
};

static void collect(void *arg, const struct perf_record *r)
{
    struct delivered *d = arg;
    uint64_t t;
    memcpy(&t, r->body + 8, 8);
    d->times[d->n++] = t;
}

/* Queues a SAMPLE with this time. */
static void add_sample(struct perf_order *q, uint64_t time)
{
    uint8_t body[16] = {0};
    memcpy(body + 8, &time, 8);
    struct perf_record r = {PERF_RECORD_SAMPLE, 0, body, sizeof(body), 0};
    perf_order_add(q, &r, false);
}

TEST(order_waits_a_round_and_hands_out_in_time_order)
{
    struct perf_file f;
    one_attr_file(&f);
    struct delivered d = {0};
    struct perf_order *q = perf_order_new(&f, 1 << 20, collect, &d);
    add_sample(q, 50);
    add_sample(q, 30);
    perf_order_round(q);      /* nothing is final before a second round */
    CHECK_INT(d.n, 0);
    add_sample(q, 40);        /* older than what came before, still in time */
    add_sample(q, 70);
    perf_order_round(q);      /* up to 50, the newest before the last round */
    CHECK_INT(d.n, 3);
    CHECK_INT(d.times[0], 30);
    CHECK_INT(d.times[1], 40);
    CHECK_INT(d.times[2], 50);
    add_sample(q, 60);
    perf_order_drain(q);
    CHECK_INT(d.n, 5);
    CHECK_INT(d.times[3], 60);
    CHECK_INT(d.times[4], 70);
    perf_order_free(q);
    perf_close(&f);
}

TEST(order_hands_out_the_oldest_half_when_full)
{
    struct perf_file f;
    one_attr_file(&f);
    struct delivered d = {0};
    struct perf_order *q = perf_order_new(&f, 64, collect, &d);   /* four 16-byte samples */
    static const uint64_t times[] = {20, 10, 40, 30, 60, 50, 80, 70};   /* no rounds */
    for (int i = 0; i < 8; i++)
        add_sample(q, times[i]);
    CHECK_INT(d.n, 4);   /* 10, 20 when 60 came; 30, 40 when 80 came */
    perf_order_drain(q);
    CHECK_INT(d.n, 8);
    for (int i = 0; i < 8; i++)
        CHECK_INT(d.times[i], 10 * (i + 1));
    perf_order_free(q);
    perf_close(&f);
}

/* Records handed out, by the id each carries before its time. */
struct handed_out {
    uint64_t ids[4096];
    size_t n;
};

static void collect_ids(void *arg, const struct perf_record *r)
{
    struct handed_out *h = arg;
    memcpy(&h->ids[h->n++], r->body, 8);
}

/* What perf_order must hand out, worked out the slow way: at every round,
 * all that waits in (time, arrival) order, those up to the limit out. */
struct slow_order {
    uint64_t time[4096], id[4096];
    size_t n;
};

static void slow_deliver(struct slow_order *w, uint64_t limit, struct handed_out *out)
{
    for (size_t i = 1; i < w->n; i++)   /* insertion sort: stable, so arrival breaks ties */
        for (size_t j = i; j > 0 && w->time[j - 1] > w->time[j]; j--) {
            uint64_t t = w->time[j], id = w->id[j];
            w->time[j] = w->time[j - 1], w->id[j] = w->id[j - 1];
            w->time[j - 1] = t, w->id[j - 1] = id;
        }
    size_t k = 0;
    while (k < w->n && w->time[k] <= limit)
        out->ids[out->n++] = w->id[k++];
    memmove(w->time, w->time + k, (w->n - k) * sizeof(*w->time));
    memmove(w->id, w->id + k, (w->n - k) * sizeof(*w->id));
    w->n -= k;
}

TEST(order_across_many_rounds_equals_sorting_all_that_waits)
{
    struct perf_file f;
    one_attr_file(&f);
    static struct handed_out got, want;
    static struct slow_order slow;
    struct perf_order *q = perf_order_new(&f, 1 << 20, collect_ids, &got);
    uint64_t seed = 7, id = 0, base = 1000, newest = 0, limit = 0;
    for (int round = 0; round < 60; round++) {
        for (int i = 0; i < 40; i++, id++) {   /* times jitter around a clock that moves on */
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t time = base + (seed >> 33) % 64;   /* repeats: ties go by arrival */
            uint8_t body[16];
            memcpy(body, &id, 8);
            memcpy(body + 8, &time, 8);
            struct perf_record r = {PERF_RECORD_SAMPLE, 0, body, sizeof(body), 0};
            perf_order_add(q, &r, false);
            slow.time[slow.n] = time, slow.id[slow.n++] = id;
            newest = time > newest ? time : newest;
        }
        perf_order_round(q);
        slow_deliver(&slow, limit, &want);
        limit = newest;
        base += 48;
    }
    perf_order_drain(q);
    slow_deliver(&slow, UINT64_MAX, &want);
    CHECK_INT(got.n, 2400);
    CHECK_INT(want.n, 2400);
    CHECK(!memcmp(got.ids, want.ids, got.n * sizeof(*got.ids)));
    perf_order_free(q);
    perf_close(&f);
}

TEST(record_time_comes_from_the_sample_id_trailer)
{
    struct perf_file f;
    one_attr_file(&f);
    f.attrs[0].sample_type |= PERF_SAMPLE_CPU;
    uint8_t body[8 + 8 + 8 + 8 + 8] = {0};   /* pid, tid, name, then trailer: tid, time, cpu */
    uint64_t t = 12345;
    memcpy(body + sizeof(body) - 16, &t, 8);
    struct perf_record r = {PERF_RECORD_COMM, 0, body, sizeof(body), 0};
    CHECK_INT(perf_record_time(&f, &r), 12345);
    f.attrs[0].flags = 0;                     /* without sample_id_all: no time */
    CHECK(perf_record_time(&f, &r) == PERF_NO_TIME);
    perf_close(&f);
}

/* The (type, offset, size) of every record of a reader, as a list. */
static size_t list_records(struct perf_file *f, uint64_t *out, size_t cap)
{
    struct perf_record r;
    char err[256];
    size_t n = 0;
    while (perf_next(f, &r, err, sizeof(err)) == 1 && n + 3 <= cap) {
        out[n++] = r.type;
        out[n++] = r.offset;
        out[n++] = r.len;
    }
    return n;
}

TEST(stream_fed_byte_by_byte_reads_what_the_whole_input_reads)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/perf/burn.pipe.data", check_corpus());
    size_t len;
    uint8_t *data = check_read_file(path, &len);
    static uint64_t whole[60000], pieces[60000];
    struct perf_file f;
    char err[256];
    CHECK_INT(perf_open(&f, data, len, err, sizeof(err)), 0);
    size_t nwhole = list_records(&f, whole, 60000);
    perf_close(&f);
    CHECK(nwhole > 300);

    perf_open_stream(&f);
    size_t npieces = 0;
    for (size_t at = 0; at < len; at++) {
        perf_feed(&f, data + at, 1);
        npieces += list_records(&f, pieces + npieces, 60000 - npieces);
    }
    perf_end_stream(&f);
    npieces += list_records(&f, pieces + npieces, 60000 - npieces);
    CHECK_INT(npieces, nwhole);
    CHECK(!memcmp(whole, pieces, nwhole * sizeof(*whole)));
    CHECK_INT(f.nattrs, 1);
    perf_close(&f);

    perf_open_stream(&f);   /* a stream cut short ends in an error with its offset */
    perf_feed(&f, data, 5000);
    perf_end_stream(&f);
    struct perf_record r;
    int rc;
    while ((rc = perf_next(&f, &r, err, sizeof(err))) == 1) {
    }
    CHECK_INT(rc, -1);
    CHECK_CONTAINS(err, "runs past its section");
    perf_close(&f);
    free(data);
}

TEST(event_names_drop_modifiers_unless_two_events_share_a_base)
{
    struct perf_file f;
    memset(&f, 0, sizeof(f));
    f.attrs = calloc(2, sizeof(*f.attrs));
    f.nattrs = 2;
    f.attrs[0].name = strdup("cycles:u");
    f.attrs[1].type = 1;   /* cpu-clock, named by type */
    char buf[64];
    CHECK_STR(perf_event_name(&f, 0, buf, sizeof(buf)), "cycles");
    CHECK_STR(perf_event_name(&f, 1, buf, sizeof(buf)), "cpu-clock");
    f.attrs[1].name = strdup("cycles:k");
    CHECK_STR(perf_event_name(&f, 0, buf, sizeof(buf)), "cycles:u");
    CHECK_STR(perf_event_name(&f, 1, buf, sizeof(buf)), "cycles:k");
    perf_close(&f);
}

RUN_TESTS()
