// SPDX-License-Identifier: Apache-2.0
/* Records and batches: sorted labels, lazy decode, pprof bytes, copies, acks. */
#include "check.h"

#include "../../core/arena.h"
#include "../../core/gzip.h"
#include "../../core/pprof.h"
#include "../../core/profile.h"
#include "../../core/record.h"

TEST(labels_stay_sorted_and_unique)
{
    struct profd_batch *b = profd_batch_new();
    struct profd_record *r = profd_record_add(b, NULL, 0, PROFD_ENC_PPROF_RAW);
    profd_record_set_label(r, "job", "a");
    profd_record_set_label(r, "__name__", "cpu");
    profd_record_set_label(r, "instance", "x");
    profd_record_set_label(r, "job", "b");
    CHECK_INT(r->labels.n, 3);
    CHECK_STR(r->labels.items[0].name, "__name__");
    CHECK_STR(r->labels.items[1].name, "instance");
    CHECK_STR(profd_record_label(r, "job"), "b");
    profd_record_del_label(r, "instance");
    profd_record_del_label(r, "absent");
    CHECK_INT(r->labels.n, 2);
    CHECK(profd_record_label(r, "instance") == NULL);
    profd_batch_unref(b);
}

static struct profd_record *corpus_record(struct profd_batch *b, const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/go/%s", check_corpus(), name);
    size_t len;
    unsigned char *data = check_read_file(path, &len);
    return profd_record_add(b, data, len, PROFD_ENC_PPROF_GZIP);
}

TEST(original_bytes_unless_changed)
{
    struct profd_batch *b = profd_batch_new();
    struct profd_record *r = corpus_record(b, "heap.pb.gz");
    char err[256];
    uint8_t *out;
    size_t len;
    CHECK_INT(profd_record_pprof(r, true, false, &out, &len, err, sizeof(err)), 0);
    CHECK(len == r->payload_len && !memcmp(out, r->payload, len));
    free(out);
    CHECK(profd_record_profile(r, err, sizeof(err)) != NULL);   /* decoding changes nothing */
    CHECK_INT(profd_record_pprof(r, true, false, &out, &len, err, sizeof(err)), 0);
    CHECK(len == r->payload_len && !memcmp(out, r->payload, len));
    free(out);
    CHECK_INT(profd_record_pprof(r, false, false, &out, &len, err, sizeof(err)), 0);
    CHECK(!profd_is_gzip(out, len));   /* raw wanted: the original, decompressed */
    free(out);
    r->profile->period += 1;
    size_t received_len = r->payload_len;
    uint8_t *received = malloc(received_len);
    memcpy(received, r->payload, received_len);
    profd_record_touch(r);
    CHECK_INT(profd_record_pprof(r, true, false, &out, &len, err, sizeof(err)), 0);
    CHECK(len != received_len || memcmp(out, received, len));   /* re-encoded */
    free(out);
    free(received);
    profd_batch_unref(b);
}

/* The view hands out the record's own bytes, not a copy, only while they
 * are what is asked for. */
TEST(view_is_the_original_bytes_themselves_unless_changed)
{
    struct profd_batch *b = profd_batch_new();
    struct profd_record *r = corpus_record(b, "cpu.pb.gz");
    char err[256];
    const uint8_t *data;
    uint8_t *owned;
    size_t len;
    CHECK_INT(profd_record_pprof_view(r, true, false, &data, &len, &owned, err, sizeof(err)), 0);
    CHECK(data == r->payload && len == r->payload_len && owned == NULL);
    CHECK_INT(profd_record_pprof_view(r, false, false, &data, &len, &owned, err, sizeof(err)), 0);
    CHECK(owned != NULL && data == owned && !profd_is_gzip(data, len));
    free(owned);
    CHECK_INT(profd_record_pprof_view(r, true, true, &data, &len, &owned, err, sizeof(err)), 0);
    CHECK(owned != NULL && data == owned && profd_is_gzip(data, len));   /* re-encoded */
    free(owned);
    profd_batch_unref(b);
}

TEST(malformed_payload_reports_on_decode)
{
    struct profd_batch *b = profd_batch_new();
    uint8_t *junk = malloc(3);
    memcpy(junk, "\x0a\x05\x08", 3);
    struct profd_record *r = profd_record_add(b, junk, 3, PROFD_ENC_PPROF_RAW);
    char err[256];
    CHECK(profd_record_profile(r, err, sizeof(err)) == NULL);
    CHECK_CONTAINS(err, "at byte");
    uint8_t *out;
    size_t len;
    CHECK_INT(profd_record_pprof(r, true, true, &out, &len, err, sizeof(err)), -1);
    profd_batch_unref(b);
}

static int acks, last_ok;

static void on_ack(void *arg, bool ok)
{
    (void)arg;
    acks++;
    last_ok = ok;
}

TEST(copies_share_the_ack_and_nothing_else)
{
    acks = 0;
    struct profd_batch *b = profd_batch_new();
    struct profd_record *r = corpus_record(b, "cpu.pb.gz");
    profd_record_set_label(r, "k", "v");
    char err[256];
    CHECK(profd_record_profile(r, err, sizeof(err)) != NULL);
    profd_batch_set_ack(b, on_ack, NULL);
    struct profd_batch *c = profd_batch_copy(b);
    profd_record_set_label(c->records[0], "k", "changed");
    c->records[0]->profile->period = 1;
    CHECK_STR(profd_record_label(r, "k"), "v");
    CHECK(r->profile->period != 1);
    CHECK_INT(profd_batch_bytes(c), profd_batch_bytes(b));
    profd_batch_unref(b);
    CHECK_INT(acks, 0);                 /* the copy still holds it */
    profd_batch_fail_acks(c);
    profd_batch_unref(c);
    CHECK_INT(acks, 1);
    CHECK(!last_ok);
}

/* A hold keeps an ack from firing after its records are gone; letting go
 * fires it, failed when the holder says so. */
TEST(a_hold_outlives_the_records_of_its_ack)
{
    for (int ok = 0; ok < 2; ok++) {
        acks = 0;
        struct profd_batch *b = profd_batch_new();
        struct profd_record *r = corpus_record(b, "cpu.pb.gz");
        CHECK(profd_ack_hold(r) == NULL);   /* no ack yet: nothing to hold */
        profd_batch_set_ack(b, on_ack, NULL);
        struct profd_ack *a = profd_ack_hold(r), *again = profd_ack_hold(r);
        CHECK(a != NULL && a == again);
        profd_batch_unref(b);
        profd_ack_let_go(again, true);
        CHECK_INT(acks, 0);
        profd_ack_let_go(a, ok);
        CHECK_INT(acks, 1);
        CHECK_INT(last_ok, ok);
    }
    profd_ack_let_go(NULL, false);
}

/* The corpus' Go profile name added to b as received, then decoded; its
 * record in *r. */
static struct profd_profile *decoded_corpus_record(struct profd_batch *b, const char *name,
                                                   struct profd_record **r)
{
    char err[256];
    *r = corpus_record(b, name);
    struct profd_profile *p = profd_record_profile(*r, err, sizeof(err));
    if (!p)
        abort();
    return p;
}

TEST(a_changed_record_lets_go_of_its_bytes_and_counts_its_profile)
{
    /* Counted by its gzipped bytes, a decoded and changed profile would
     * hold many times what a queue's memory_size allows. */
    struct profd_batch *b = profd_batch_new();
    struct profd_record *r;
    struct profd_profile *p = decoded_corpus_record(b, "heap.pb.gz", &r);
    size_t received = r->payload_len;
    char err[256];
    p->period += 1;
    profd_record_touch(r);
    CHECK(r->payload == NULL && r->payload_len == 0);
    size_t held = profd_arena_used(p->arena);
    CHECK(held > received);   /* the model is larger than its gzipped bytes */
    CHECK_INT(profd_batch_bytes(b), held);
    struct profd_batch *copy = profd_batch_copy(b);   /* a copy is the profile too */
    CHECK(copy->records[0]->payload_len == 0 && copy->records[0]->profile_dirty);
    uint8_t *out;
    size_t len;
    CHECK_INT(profd_record_pprof(copy->records[0], true, false, &out, &len, err, sizeof(err)), 0);
    struct profd_profile *again = profd_pprof_decode(out, len, PROFD_PPROF_MAX_DECODED, err,
                                                     sizeof(err));
    CHECK(again && again->period == p->period);
    profd_profile_free(again);
    free(out);
    profd_record_touch(r);   /* again: nothing left to let go of */
    CHECK_INT(profd_batch_bytes(b), held);
    profd_batch_unref(copy);
    profd_batch_unref(b);
}

TEST(a_batch_counts_received_bytes_or_what_a_built_profile_holds_and_what_all_hold)
{
    struct profd_batch *b = profd_batch_new();
    struct profd_record *r;
    struct profd_profile *decoded = decoded_corpus_record(b, "cpu.pb.gz", &r);
    size_t received = r->payload_len;
    CHECK_INT(profd_batch_bytes(b), received);   /* decoded: still its bytes as received */
    size_t model = profd_arena_used(decoded->arena);
    struct profd_batch_sizes sizes = profd_batch_sizes(b);
    CHECK_INT(sizes.counted, received);
    CHECK_INT(sizes.held, received + model);   /* what it holds: both */
    struct profd_profile *p = profd_profile_new(64 * 1024);
    profd_profile_intern(p, "a function's name", 17);
    profd_record_add_profile(b, p);   /* built in memory: no bytes received */
    size_t held = profd_arena_used(p->arena);
    CHECK(held > 0 && held < 64 * 1024);   /* what it took, not its 64 KiB block */
    CHECK_INT(profd_batch_bytes(b), received + held);
    sizes = profd_batch_sizes(b);
    CHECK_INT(sizes.counted, profd_batch_bytes(b));
    CHECK_INT(sizes.held, received + model + held);
    profd_batch_unref(b);
}

RUN_TESTS()
