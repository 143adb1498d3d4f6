// SPDX-License-Identifier: Apache-2.0
/*
 * A request's body lent to the records made from it. While a server's
 * handler runs, a pprof a receiver adds from inside the request's body
 * (record_add_pprof and its kin, which take the profile's bytes) is kept
 * as a slice of the body's buffer, which the server gives up for it,
 * rather than copied: one copy less of every large push. Only bodies of
 * PROFD_BODY_LEND_FROM bytes and more are lent: a server frees those after
 * their request anyway, while it keeps a small body's buffer for the next
 * request, and a small copy costs less than a new buffer. Only a profile
 * that fills at least half of the buffer is kept as a slice, so that what
 * a record keeps alive is at most twice what it is counted as (queues
 * count a record by its own bytes): the profiles of a push of many series,
 * each a small part of its body, are copied, or the one a relabeling kept
 * would hold on to all the others' bytes.
 */
#ifndef PROFD_BODY_LEND_H
#define PROFD_BODY_LEND_H

#include <stddef.h>
#include <stdint.h>

#define PROFD_BODY_LEND_FROM ((size_t)64 << 10)

/* Where the malloc'd buffer a request's body lies in is kept by the
 * server: emptied (*buf NULL, *cap 0) when a record takes the buffer. */
struct profd_body_lender {
    uint8_t **buf;
    size_t *cap;   /* NULL when the server keeps no capacity */
};

/* A buffer that records keep slices of, freed with the last hold. */
struct profd_shared_bytes;

/* Lends the body [body, body + len), which lies in lender's buffer (NULL:
 * in none the server can give up), to the records made on this thread
 * until profd_body_lend_end. */
void profd_body_lend_begin(const uint8_t *body, size_t len, const struct profd_body_lender *lender);

/* Ends this thread's lending; the buffer, if a record took it, now lives
 * as long as the records that keep slices of it. */
void profd_body_lend_end(void);

/* A hold on the buffer of the body lent on this thread when
 * [data, data + len) lies inside it and fills at least half of the buffer
 * (taken from the server at the first such call), else NULL: the caller
 * copies the bytes then. */
struct profd_shared_bytes *profd_body_borrow(const uint8_t *data, size_t len);

/* Another hold on s. */
void profd_shared_bytes_ref(struct profd_shared_bytes *s);

/* Drops a hold; the last one frees the buffer. Accepts NULL. */
void profd_shared_bytes_unref(struct profd_shared_bytes *s);

#endif
