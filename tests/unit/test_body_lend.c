// SPDX-License-Identifier: Apache-2.0
/* A request's body lent to the records made from it: kept as slices when
 * large and filling at least half of their buffer, copied when small, a
 * small part of it or elsewhere, freed with the last record. */
#include "check.h"

#include <sys/stat.h>

#include "../../core/body_lend.h"
#include "../../core/record.h"

/* The path of the corpus' Go profile name, in path. */
static void corpus_profile_path(const char *name, char path[512])
{
    snprintf(path, 512, "%s/go/%s", check_corpus(), name);
}

/* The length of the corpus' Go profile name. */
static size_t corpus_profile_len(const char *name)
{
    char path[512];
    struct stat st;
    corpus_profile_path(name, path);
    if (stat(path, &st) < 0)
        abort();
    return (size_t)st.st_size;
}

/* A request body of len bytes (malloc'd, as a server keeps it) holding
 * the corpus' Go profile name at offset at, copies times in a row. */
static uint8_t *body_with_profiles(const char *name, size_t len, size_t at, size_t copies,
                                   size_t *profile_len)
{
    char path[512];
    corpus_profile_path(name, path);
    unsigned char *profile = check_read_file(path, profile_len);
    uint8_t *body = calloc(1, len);
    if (!body || at + copies * *profile_len > len)
        abort();
    for (size_t i = 0; i < copies; i++)
        memcpy(body + at + i * *profile_len, profile, *profile_len);
    free(profile);
    return body;
}

/* A body of len bytes holding the corpus' heap profile twice. */
static uint8_t *body_with_two_profiles(size_t len, size_t at, size_t *profile_len)
{
    return body_with_profiles("heap.pb.gz", len, at, 2, profile_len);
}

/* A profile larger than PROFD_BODY_LEND_FROM. */
#define LARGE "compile-nethttp.cpu.pb.gz"

/* The server's slots of a body's buffer, as http1_server keeps them. */
struct server_slots {
    uint8_t *buf;
    size_t cap;
};

/* Adds the pprof [at, at + len) to b while [lent, lent + lent_len) is lent
 * from lender; NULL when the profile is refused. */
static struct profd_record *add_while_lent(struct profd_batch *b,
                                           const struct profd_body_lender *lender,
                                           const uint8_t *lent, size_t lent_len,
                                           const uint8_t *at, size_t len)
{
    char err[256];
    profd_body_lend_begin(lent, lent_len, lender);
    struct profd_record *r = profd_record_add_pprof(b, at, len, 0, err, sizeof(err));
    profd_body_lend_end();
    return r;
}

TEST(a_profile_filling_a_large_body_keeps_a_slice_of_it)
{
    size_t plen = corpus_profile_len(LARGE);
    const size_t at = 100, len = at + plen + 64;   /* a push's framing around the profile */
    struct server_slots s = {body_with_profiles(LARGE, len, at, 1, &plen), len};
    uint8_t *body = s.buf;
    struct profd_batch *b = profd_batch_new();
    struct profd_record *r =
        add_while_lent(b, &(struct profd_body_lender){&s.buf, &s.cap}, body, len, body + at, plen);
    CHECK(r != NULL);
    CHECK(s.buf == NULL && s.cap == 0);   /* the server gave the buffer up */
    CHECK(r->payload == body + at && r->payload_shared != NULL);
    struct profd_batch *copy = profd_batch_copy(b);   /* another pipeline's */
    CHECK(copy->records[0]->payload == r->payload);   /* a copy shares it too */
    CHECK(copy->records[0]->payload_shared == r->payload_shared);
    profd_batch_unref(b);   /* the copy still reads the buffer */
    char err[256];
    CHECK(profd_record_profile(copy->records[0], err, sizeof(err)) != NULL);
    profd_batch_unref(copy);   /* the last one frees it (the sanitizers and valgrind check) */
}

TEST(profiles_that_are_small_parts_of_a_large_body_are_copied)
{
    /* A push of many series: a slice kept of one would keep every
     * other's bytes alive, uncounted. */
    size_t plen;
    const size_t at = 10, len = PROFD_BODY_LEND_FROM + 4096;
    struct server_slots s = {body_with_two_profiles(len, at, &plen), len};
    uint8_t *body = s.buf;
    struct profd_batch *b = profd_batch_new();
    char err[256];
    profd_body_lend_begin(body, len, &(struct profd_body_lender){&s.buf, &s.cap});
    struct profd_record *r1 = profd_record_add_pprof(b, body + at, plen, 0, err, sizeof(err));
    struct profd_record *r2 =
        profd_record_add_pprof(b, body + at + plen, plen, 0, err, sizeof(err));
    profd_body_lend_end();
    CHECK(r1 && r2 && !r1->payload_shared && !r2->payload_shared);
    CHECK(r1->payload != body + at && !memcmp(r1->payload, body + at, plen));
    CHECK(s.buf == body && s.cap == len);   /* still the server's */
    profd_batch_unref(b);
    free(body);
}

TEST(a_buffer_much_larger_than_its_body_is_not_kept_for_it)
{
    /* The buffer's size is what a slice keeps alive, not the body's. */
    size_t plen = corpus_profile_len(LARGE);
    const size_t cap = 4 * plen;
    struct server_slots s = {body_with_profiles(LARGE, cap, 0, 1, &plen), cap};
    uint8_t *body = s.buf;
    struct profd_batch *b = profd_batch_new();
    struct profd_record *r =
        add_while_lent(b, &(struct profd_body_lender){&s.buf, &s.cap}, body, plen, body, plen);
    CHECK(r && !r->payload_shared && s.buf == body);
    profd_batch_unref(b);
    free(body);
}

TEST(small_bodies_and_bytes_elsewhere_are_copied)
{
    size_t plen;
    const size_t small = 8192, at = 10;
    struct server_slots s = {body_with_two_profiles(small, at, &plen), small};
    uint8_t *body = s.buf;
    struct profd_batch *b = profd_batch_new();
    struct profd_record *r = add_while_lent(b, &(struct profd_body_lender){&s.buf, &s.cap}, body,
                                            small, body + at, plen);
    CHECK(r && r->payload != body + at && !r->payload_shared);
    CHECK(s.buf == body && s.cap == small);   /* still the server's */

    /* A large body of two large profiles, lent a window at a time. */
    plen = corpus_profile_len(LARGE);
    const size_t large = at + 2 * plen, window = at + plen;
    struct server_slots l = {body_with_profiles(LARGE, large, at, 2, &plen), large};
    uint8_t *lbody = l.buf;
    const struct profd_body_lender lender = {&l.buf, NULL};
    r = add_while_lent(b, &lender, lbody, window, lbody + at + plen, plen);   /* past it */
    CHECK(r && r->payload != lbody + at + plen && !r->payload_shared);
    r = add_while_lent(b, &lender, lbody + at + 1, window, lbody + at, plen);   /* starts inside */
    CHECK(r && !r->payload_shared);
    char err[256];
    r = profd_record_add_pprof(b, lbody + at, plen, 0, err, sizeof(err));   /* none lent */
    CHECK(r && !r->payload_shared);
    CHECK(l.buf == lbody);
    r = add_while_lent(b, &lender, lbody, window, lbody + at, plen);   /* inside the window: lent */
    CHECK(r && r->payload == lbody + at && r->payload_shared && !l.buf);
    profd_batch_unref(b);   /* frees lbody with its last record */
    free(body);
}

TEST(a_refused_profile_takes_nothing)
{
    const size_t len = PROFD_BODY_LEND_FROM;
    struct server_slots s = {calloc(1, len), len};
    uint8_t *body = s.buf;
    memset(body, 0xff, len);   /* no profile */
    struct profd_batch *b = profd_batch_new();
    CHECK(add_while_lent(b, &(struct profd_body_lender){&s.buf, &s.cap}, body, len, body, len) ==
          NULL);
    CHECK(s.buf == body && b->nrecords == 0);
    profd_batch_unref(b);
    free(body);
}

RUN_TESTS()
