// SPDX-License-Identifier: Apache-2.0
/* A request's body lent to the records made from it: kept as slices when
 * large, copied when small or elsewhere, freed with the last record. */
#include "check.h"

#include "../../core/body_lend.h"
#include "../../core/record.h"

/* A request body of len bytes (malloc'd, as a server keeps it) holding
 * the corpus' heap profile at offset at, and again right after it. */
static uint8_t *body_with_two_profiles(size_t len, size_t at, size_t *profile_len)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/go/heap.pb.gz", check_corpus());
    unsigned char *profile = check_read_file(path, profile_len);
    uint8_t *body = calloc(1, len);
    if (!body || at + 2 * *profile_len > len)
        abort();
    memcpy(body + at, profile, *profile_len);
    memcpy(body + at + *profile_len, profile, *profile_len);
    free(profile);
    return body;
}

/* The server's slots of a body's buffer, as http1_server keeps them. */
struct server_slots {
    uint8_t *buf;
    size_t cap;
};

TEST(profiles_inside_a_large_body_keep_slices_of_it)
{
    const size_t len = PROFD_BODY_LEND_FROM + 4096, at = 100;
    size_t plen;
    struct server_slots s = {body_with_two_profiles(len, at, &plen), len};
    uint8_t *body = s.buf;
    struct profd_body_lender lender = {&s.buf, &s.cap};
    struct profd_batch *b = profd_batch_new();
    char err[256];
    profd_body_lend_begin(body, len, &lender);
    struct profd_record *r1 = profd_record_add_pprof(b, body + at, plen, 0, err, sizeof(err));
    struct profd_record *r2 =
        profd_record_add_pprof(b, body + at + plen, plen, 0, err, sizeof(err));
    profd_body_lend_end();
    CHECK(r1 && r2);
    CHECK(s.buf == NULL && s.cap == 0);   /* the server gave the buffer up */
    CHECK(r1->payload == body + at && r2->payload == body + at + plen);
    CHECK(r1->payload_shared != NULL && r1->payload_shared == r2->payload_shared);
    struct profd_batch *copy = profd_batch_copy(b);
    CHECK(copy->records[0]->payload == r1->payload);   /* a copy shares them too */
    profd_batch_remove(b, 0);   /* the others still read the buffer */
    CHECK(profd_record_profile(r2, err, sizeof(err)) != NULL);
    profd_batch_unref(b);
    CHECK(profd_record_profile(copy->records[1], err, sizeof(err)) != NULL);
    profd_batch_unref(copy);   /* the last one frees it (the sanitizers and valgrind check) */
}

TEST(small_bodies_and_bytes_elsewhere_are_copied)
{
    size_t plen;
    const size_t small = 8192, at = 10;
    struct server_slots s = {body_with_two_profiles(small, at, &plen), small};
    uint8_t *body = s.buf;
    struct profd_body_lender lender = {&s.buf, &s.cap};
    struct profd_batch *b = profd_batch_new();
    char err[256];
    profd_body_lend_begin(body, small, &lender);
    struct profd_record *r = profd_record_add_pprof(b, body + at, plen, 0, err, sizeof(err));
    profd_body_lend_end();
    CHECK(r && r->payload != body + at && !r->payload_shared);
    CHECK(s.buf == body && s.cap == small);   /* still the server's */

    const size_t large = PROFD_BODY_LEND_FROM * 2;
    struct server_slots l = {body_with_two_profiles(large, at, &plen), large};
    uint8_t *lbody = l.buf;
    struct profd_body_lender llender = {&l.buf, &l.cap};
    profd_body_lend_begin(lbody, large / 2, &llender);   /* the profiles lie in its first half */
    r = profd_record_add_pprof(b, body + at, plen, 0, err, sizeof(err));   /* another buffer */
    CHECK(r && r->payload != body + at && !r->payload_shared);
    profd_body_lend_end();
    profd_body_lend_begin(lbody + at + plen, large / 2, &llender);   /* starts inside the first */
    r = profd_record_add_pprof(b, lbody + at, plen, 0, err, sizeof(err));
    CHECK(r && !r->payload_shared);
    profd_body_lend_end();
    CHECK(l.buf == lbody);
    r = profd_record_add_pprof(b, lbody + at, plen, 0, err, sizeof(err));   /* none lent */
    CHECK(r && !r->payload_shared);
    profd_batch_unref(b);
    free(body);
    free(lbody);
}

TEST(a_refused_profile_takes_nothing)
{
    const size_t len = PROFD_BODY_LEND_FROM;
    struct server_slots s = {calloc(1, len), len};
    uint8_t *body = s.buf;
    memset(body, 0xff, len);   /* no profile */
    struct profd_body_lender lender = {&s.buf, &s.cap};
    struct profd_batch *b = profd_batch_new();
    char err[256];
    profd_body_lend_begin(body, len, &lender);
    CHECK(profd_record_add_pprof(b, body, len, 0, err, sizeof(err)) == NULL);
    profd_body_lend_end();
    CHECK(s.buf == body && b->nrecords == 0);
    profd_batch_unref(b);
    free(body);
}

RUN_TESTS()
