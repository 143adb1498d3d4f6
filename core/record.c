// SPDX-License-Identifier: Apache-2.0
#include "record.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "arena.h"
#include "body_lend.h"
#include "gzip.h"
#include "labels.h"
#include "pprof.h"
#include "profile.h"

struct profd_ack {
    atomic_int refs;
    atomic_bool failed;
    profd_ack_fn fn;
    void *arg;
};

static void ack_release(struct profd_ack *a)
{
    if (!a || atomic_fetch_sub(&a->refs, 1) != 1)
        return;
    a->fn(a->arg, !atomic_load(&a->failed));
    free(a);
}

struct profd_batch *profd_batch_new(void)
{
    struct profd_batch *b = profd_xcalloc(1, sizeof(*b));
    atomic_init(&b->refs, 1);
    return b;
}

void profd_batch_ref(struct profd_batch *b)
{
    atomic_fetch_add(&b->refs, 1);
}

/* Lets go of r's bytes as received. */
static void payload_release(struct profd_record *r)
{
    if (r->payload_shared)
        profd_shared_bytes_unref(r->payload_shared);
    else
        free(r->payload);
}

static void record_free(struct profd_record *r)
{
    profd_labels_clear(&r->labels);
    payload_release(r);
    profd_profile_free(r->profile);
    pthread_mutex_destroy(&r->decode_lock);
    ack_release(r->ack);
    free(r);
}

void profd_batch_unref(struct profd_batch *b)
{
    if (!b || atomic_fetch_sub(&b->refs, 1) != 1)
        return;
    for (size_t i = 0; i < b->nparts; i++)
        profd_batch_unref(b->parts[i]);
    free(b->parts);
    for (size_t i = 0; !b->parts && i < b->nrecords; i++)
        record_free(b->records[i]);
    free(b->records);
    free(b);
}

struct profd_batch *profd_batch_merge(struct profd_batch **parts, size_t n)
{
    struct profd_batch *b = profd_batch_new();
    b->parts = profd_xmalloc(n * sizeof(*parts));
    memcpy(b->parts, parts, n * sizeof(*parts));
    b->nparts = n;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < parts[i]->nrecords; k++) {
            profd_grow(&b->records, &b->cap, b->nrecords + 1, sizeof(*b->records));
            b->records[b->nrecords++] = parts[i]->records[k];
        }
    return b;
}

static struct profd_record *record_new(struct profd_batch *b)
{
    struct profd_record *r = profd_xcalloc(1, sizeof(*r));
    pthread_mutex_init(&r->decode_lock, NULL);
    profd_grow(&b->records, &b->cap, b->nrecords + 1, sizeof(*b->records));
    b->records[b->nrecords++] = r;
    return r;
}

struct profd_record *profd_record_add(struct profd_batch *b, void *payload, size_t len,
                                      enum profd_encoding enc)
{
    struct profd_record *r = record_new(b);
    r->payload = payload;
    r->payload_len = len;
    r->encoding = enc;
    return r;
}

struct profd_record *profd_record_add_pprof(struct profd_batch *b, const uint8_t *data,
                                            size_t len, size_t max_decoded, char *err,
                                            size_t errlen)
{
    return profd_record_add_pprof_typed(b, data, len, max_decoded, NULL, err, errlen);
}

struct profd_record *profd_record_add_pprof_typed(struct profd_batch *b, const uint8_t *data,
                                                  size_t len, size_t max_decoded,
                                                  struct profd_type_names *types, char *err,
                                                  size_t errlen)
{
    int64_t time_nanos, duration_nanos;
    if (profd_pprof_check(data, len, max_decoded ? max_decoded : PROFD_PPROF_MAX_DECODED,
                          &time_nanos, &duration_nanos, types, err, errlen) < 0)
        return NULL;
    struct profd_shared_bytes *shared = profd_body_borrow(data, len);
    uint8_t *payload = (uint8_t *)data;   /* shared: in a buffer the records now own */
    if (!shared) {
        payload = profd_xmalloc(len ? len : 1);
        memcpy(payload, data, len);
    }
    struct profd_record *r = profd_record_add(
        b, payload, len, profd_is_gzip(payload, len) ? PROFD_ENC_PPROF_GZIP : PROFD_ENC_PPROF_RAW);
    r->payload_shared = shared;
    r->max_decoded = max_decoded;
    r->time_nanos = time_nanos;
    r->duration_nanos = duration_nanos;
    return r;
}

struct profd_record *profd_record_add_profile(struct profd_batch *b, struct profd_profile *p)
{
    struct profd_record *r = record_new(b);
    r->encoding = PROFD_ENC_PPROF_RAW;
    r->profile = p;
    r->profile_dirty = true;
    return r;
}

struct profd_batch *profd_batch_copy(const struct profd_batch *src)
{
    struct profd_batch *b = profd_batch_new();
    for (size_t i = 0; i < src->nrecords; i++) {
        struct profd_record *s = src->records[i];
        uint8_t *payload = s->payload;   /* bytes kept by slices are shared, never changed */
        if (s->payload_shared) {
            profd_shared_bytes_ref(s->payload_shared);
        } else {
            payload = profd_xmalloc(s->payload_len);
            if (s->payload_len)
                memcpy(payload, s->payload, s->payload_len);
        }
        struct profd_record *r = profd_record_add(b, payload, s->payload_len, s->encoding);
        r->payload_shared = s->payload_shared;
        profd_labels_copy(&r->labels, &s->labels);
        r->time_nanos = s->time_nanos;
        r->duration_nanos = s->duration_nanos;
        pthread_mutex_lock(&s->decode_lock);
        if (s->profile)
            r->profile = profd_profile_clone(s->profile);
        r->profile_dirty = s->profile_dirty;
        pthread_mutex_unlock(&s->decode_lock);
        if (s->ack) {
            atomic_fetch_add(&s->ack->refs, 1);
            r->ack = s->ack;
        }
    }
    return b;
}

void profd_batch_set_ack(struct profd_batch *b, profd_ack_fn fn, void *arg)
{
    struct profd_ack *a = profd_xcalloc(1, sizeof(*a));
    a->fn = fn;
    a->arg = arg;
    /* Hold one reference while attaching so the ack cannot fire early. */
    atomic_init(&a->refs, 1);
    for (size_t i = 0; i < b->nrecords; i++) {
        if (!b->records[i]->ack) {
            atomic_fetch_add(&a->refs, 1);
            b->records[i]->ack = a;
        }
    }
    ack_release(a);
}

struct profd_ack *profd_ack_hold(struct profd_record *r)
{
    if (r->ack)
        atomic_fetch_add(&r->ack->refs, 1);
    return r->ack;
}

void profd_ack_let_go(struct profd_ack *a, bool ok)
{
    if (a && !ok)
        atomic_store(&a->failed, true);
    ack_release(a);
}

void profd_record_fail_ack(struct profd_record *r)
{
    if (r->ack)
        atomic_store(&r->ack->failed, true);
}

void profd_batch_fail_acks(struct profd_batch *b)
{
    for (size_t i = 0; i < b->nrecords; i++)
        profd_record_fail_ack(b->records[i]);
}

void profd_batch_remove(struct profd_batch *b, size_t i)
{
    record_free(b->records[i]);
    memmove(&b->records[i], &b->records[i + 1], (b->nrecords - i - 1) * sizeof(*b->records));
    b->nrecords--;
}

/* The bytes of r's profile in memory, decoded or built (0: none). */
static size_t model_bytes(const struct profd_record *r)
{
    return r->profile ? profd_arena_used(r->profile->arena) : 0;
}

/* What r counts as, its profile holding model bytes: its bytes as
 * received, or its profile's when it has none (built, or changed). */
static size_t counted_bytes(const struct profd_record *r, size_t model)
{
    return r->payload_len ? r->payload_len : model;
}

size_t profd_record_bytes(const struct profd_record *r)
{
    return counted_bytes(r, model_bytes(r));
}

size_t profd_batch_bytes(const struct profd_batch *b)
{
    size_t n = 0;
    for (size_t i = 0; i < b->nrecords; i++)
        n += profd_record_bytes(b->records[i]);
    return n;
}

struct profd_batch_sizes profd_batch_sizes(const struct profd_batch *b)
{
    struct profd_batch_sizes s = {0, 0};
    for (size_t i = 0; i < b->nrecords; i++) {
        struct profd_record *r = b->records[i];
        /* locked: a batch a processor emits to two exporters may be
         * decoding in the first one's sender while the second counts it */
        pthread_mutex_lock(&r->decode_lock);
        size_t model = model_bytes(r);
        pthread_mutex_unlock(&r->decode_lock);
        s.counted += counted_bytes(r, model);
        s.held += r->payload_len + model;
    }
    return s;
}

void profd_record_set_label(struct profd_record *r, const char *name, const char *value)
{
    profd_labels_set(&r->labels, name, value);
}

const char *profd_record_label(const struct profd_record *r, const char *name)
{
    return profd_labels_get(&r->labels, name);
}

void profd_record_del_label(struct profd_record *r, const char *name)
{
    profd_labels_del(&r->labels, name);
}

struct profd_profile *profd_record_profile(struct profd_record *r, char *err, size_t errlen)
{
    pthread_mutex_lock(&r->decode_lock);
    if (!r->profile)
        r->profile = profd_pprof_decode(r->payload, r->payload_len,
                                        r->max_decoded ? r->max_decoded : PROFD_PPROF_MAX_DECODED,
                                        err, errlen);
    struct profd_profile *p = r->profile;
    pthread_mutex_unlock(&r->decode_lock);
    return p;
}

int profd_record_type_names(struct profd_record *r, struct profd_type_names *out, char *err,
                            size_t errlen)
{
    pthread_mutex_lock(&r->decode_lock);
    const struct profd_profile *p = r->profile;
    pthread_mutex_unlock(&r->decode_lock);
    if (p) {
        profd_profile_type_names(p, out);
        return 0;
    }
    return profd_pprof_read_type_names(r->payload, r->payload_len,
                                       r->max_decoded ? r->max_decoded : PROFD_PPROF_MAX_DECODED,
                                       out, err, errlen);
}

void profd_record_touch(struct profd_record *r)
{
    r->profile_dirty = true;
    if (!r->profile || !r->payload_len)
        return;
    payload_release(r);   /* no longer what the record is: it is encoded anew */
    r->payload = NULL;
    r->payload_shared = NULL;
    r->payload_len = 0;
}

int profd_record_pprof_view(struct profd_record *r, bool gzip, bool reencode,
                            const uint8_t **data, size_t *len, uint8_t **owned, char *err,
                            size_t errlen)
{
    *owned = NULL;
    bool is_gzip = r->encoding == PROFD_ENC_PPROF_GZIP;
    if (reencode || r->profile_dirty) {
        struct profd_profile *p = profd_record_profile(r, err, errlen);
        if (!p)
            return -1;
        profd_pprof_encode(p, gzip, owned, len);
    } else if (is_gzip && !gzip) {
        if (profd_gunzip(r->payload, r->payload_len, PROFD_PPROF_MAX_DECODED, owned, len, err,
                         errlen) < 0)
            return -1;
    } else if (!is_gzip && gzip) {
        profd_gzip(r->payload, r->payload_len, owned, len);
    } else {   /* the bytes as they came */
        *data = r->payload;
        *len = r->payload_len;
        return 0;
    }
    *data = *owned;
    return 0;
}

int profd_record_pprof(struct profd_record *r, bool gzip, bool reencode, uint8_t **out,
                       size_t *len, char *err, size_t errlen)
{
    const uint8_t *data;
    if (profd_record_pprof_view(r, gzip, reencode, &data, len, out, err, errlen) < 0)
        return -1;
    if (!*out) {
        *out = profd_xmalloc(*len ? *len : 1);
        if (*len)
            memcpy(*out, data, *len);
    }
    return 0;
}
