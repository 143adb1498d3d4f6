// SPDX-License-Identifier: Apache-2.0
/*
 * Batches, records and completion tracking.
 *
 * A record may carry an ack: a shared tracker that fires its callback once
 * the last copy of every record pointing at it is freed. Exporter queues keep
 * batches alive until the export finished, so "every record freed" means
 * "every exporter is done with it".
 */
#ifndef PROFD_RECORD_H
#define PROFD_RECORD_H

#include "profd/model.h"
#include "profd/plugin.h"

/* A new empty batch holding one reference. */
struct profd_batch *profd_batch_new(void);
/* Adds a reference to b (each dropped by profd_batch_unref). */
void profd_batch_ref(struct profd_batch *b);
/* Drops one reference; the last one frees every record. Accepts NULL. */
void profd_batch_unref(struct profd_batch *b);
/* One batch listing the records of parts[0..n), taking over one reference
 * of each part (released when the merged batch is freed). Read-only: for
 * exporters that send several batches at once. */
struct profd_batch *profd_batch_merge(struct profd_batch **parts, size_t n);
/* A deep copy of b whose records share nothing with b's but their acks
 * and the bytes they keep as slices of a request's body (which no one
 * changes). */
struct profd_batch *profd_batch_copy(const struct profd_batch *b);
/* Attaches one ack to every record of b (replacing none: records without an
 * ack only). fn runs once all of them are freed. */
void profd_batch_set_ack(struct profd_batch *b, profd_ack_fn fn, void *arg);
/* Marks the acks of every record in b as failed (ok=false on completion). */
void profd_batch_fail_acks(struct profd_batch *b);
/* A hold on r's ack, or NULL: host->ack_hold. */
struct profd_ack *profd_ack_hold(struct profd_record *r);
/* Lets go of a hold (accepts NULL), failing the ack unless ok. */
void profd_ack_let_go(struct profd_ack *a, bool ok);
/* Marks r's ack (if any) failed. */
void profd_record_fail_ack(struct profd_record *r);
/* Removes record i from b and frees it. */
void profd_batch_remove(struct profd_batch *b, size_t i);
/* The bytes of b's records: each as received, or, built in memory or
 * changed since (profd_record_touch), what its profile's allocations take
 * (profd_arena_used). */
size_t profd_batch_bytes(const struct profd_batch *b);
/* The bytes of one record, as profd_batch_bytes counts them. */
size_t profd_record_bytes(const struct profd_record *r);
/* A batch's size twice over: what it is counted as (profd_batch_bytes),
 * and what its records hold in memory, their bytes as received and their
 * profiles, decoded or built (profd_arena_used), both. */
struct profd_batch_sizes {
    size_t counted, held;
};
/* b's sizes, in one pass over its records. */
struct profd_batch_sizes profd_batch_sizes(const struct profd_batch *b);

/* Adds a record owning payload (malloc'd, len bytes, encoding enc). */
struct profd_record *profd_record_add(struct profd_batch *b, void *payload, size_t len,
                                      enum profd_encoding enc);
/* A copy of a pprof as received (gzip'd or not) added to b, checked as a
 * decode would check it, inflating to at most max_decoded bytes (0: 1 GiB);
 * its time and duration are the profile's. Bytes inside the large body of
 * the request handled on this thread are kept as a slice of it instead of
 * copied (body_lend.h). The model is not kept: the first component that
 * needs it decodes it. On malformed input NULL with err filled, and no
 * record added. */
struct profd_record *profd_record_add_pprof(struct profd_batch *b, const uint8_t *data,
                                            size_t len, size_t max_decoded, char *err,
                                            size_t errlen);
/* profd_record_add_pprof that also gives the profile's type names in
 * *types (NULL: not wanted), read while the check has it inflated. */
struct profd_record *profd_record_add_pprof_typed(struct profd_batch *b, const uint8_t *data,
                                                  size_t len, size_t max_decoded,
                                                  struct profd_type_names *types, char *err,
                                                  size_t errlen);
/* The type names of r's profile (model.h), from its model when it has one,
 * else read from its bytes (inflated for it). 0, or -1 with err filled. */
int profd_record_type_names(struct profd_record *r, struct profd_type_names *out, char *err,
                            size_t errlen);
/* Creates a record owned by b that holds the built profile p (taken over);
 * it has no payload and is encoded on output. */
struct profd_record *profd_record_add_profile(struct profd_batch *b, struct profd_profile *p);
/* Series labels: kept sorted by name. set copies name and value. */
void profd_record_set_label(struct profd_record *r, const char *name, const char *value);
/* The value of the label name, or NULL when r has none. */
const char *profd_record_label(const struct profd_record *r, const char *name);
/* Removes the label name, if r has it. */
void profd_record_del_label(struct profd_record *r, const char *name);
/* Decodes the payload once (thread-safe); NULL and err filled when malformed. */
struct profd_profile *profd_record_profile(struct profd_record *r, char *err, size_t errlen);
/* Marks the decoded model changed. The bytes r came in as are let go of
 * then, as they are no longer what it is: from here on the record is its
 * profile, counted by what that holds (profd_record_bytes), and encoded
 * anew when it is sent. */
void profd_record_touch(struct profd_record *r);
/* The record as pprof (gzip'd or not) in *data: its original bytes
 * themselves when they are that, the model is unchanged and reencode is
 * false (*owned NULL; valid as long as the record), else a new encoding,
 * malloc'd in *owned. Returns 0 or -1 with err filled. */
int profd_record_pprof_view(struct profd_record *r, bool gzip, bool reencode,
                            const uint8_t **data, size_t *len, uint8_t **owned, char *err,
                            size_t errlen);
/* Serializes as pprof, reusing the original bytes when the model is unchanged
 * and reencode is false. *out is malloc'd. Returns 0 or -1 with err filled. */
int profd_record_pprof(struct profd_record *r, bool gzip, bool reencode, uint8_t **out,
                       size_t *len, char *err, size_t errlen);

#endif
