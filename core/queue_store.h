// SPDX-License-Identifier: Apache-2.0
/*
 * An exporter queue's records kept on disk (sending_queue.storage), so that
 * what was queued when profd stopped, or crashed, is sent once it runs
 * again: a file per record in a directory of the exporter's own, written
 * before the record is queued and removed once the exporter settled it
 * (sent it, or it failed or was refused for good). Files are written under
 * a temporary name and renamed: a crash of the process loses none. Unless
 * they are synced (storage_fsync), one of the machine may lose what the
 * page cache held. The exporter's stored gauges count the files and their
 * bytes.
 *
 * A file: "PROFDQR1", then little-endian: time and duration (int64 ns), the
 * decode limit (uint64; read back as at most the default's, 1 GiB), the
 * label count (uint32) and each label's name and value (uint32 length,
 * bytes), the pprof's length (uint64) and bytes.
 */
#ifndef PROFD_QUEUE_STORE_H
#define PROFD_QUEUE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics.h"
#include "profd/model.h"

struct queue_store;

/* The store of the exporter whose counters are m, in a directory named
 * after its id (made a file name) under dir, made when missing; NULL with
 * why set when it cannot be. With fsync, each file and then the directory
 * are synced before queue_store_write returns. Logs as m's component. */
struct queue_store *queue_store_open(const char *dir, struct profd_metrics *m, bool fsync,
                                     char *why, size_t whylen);

/* The store's directory (the exporter's own). */
const char *queue_store_path(const struct queue_store *s);

/* A record's file: its id (0: none, the record is not stored) and size. */
struct stored_file {
    uint64_t id;
    size_t bytes;
};

/* Writes each record of b to a file of its own: files[i] (b->nrecords of
 * them) its file, or id 0 when it could not be written (logged). Safe
 * from several threads at once. */
void queue_store_write(struct queue_store *s, struct profd_batch *b, struct stored_file *files);

/* Removes file f (id 0: none). */
void queue_store_remove(struct queue_store *s, struct stored_file f);

/* Adds to b the records of files (n of them, none of id 0), read back, in
 * order, and puts in loaded (which may be files) those that were: a file
 * that does not read back (cut short, not a record) is moved into
 * rejected/ with a .error text beside it, logged, and no longer counted
 * as stored. Returns how many were loaded. Safe from several threads at
 * once. */
size_t queue_store_load(struct queue_store *s, const struct stored_file *files, size_t n,
                        struct profd_batch *b, struct stored_file *loaded);

/* The files an earlier run left, in the order they were written, into
 * *files (malloc'd, *n of them), counted as stored (nothing is read:
 * queue_store_load reads them back); what a write cut short left is
 * removed. 0, or -1 (logged) when the directory cannot be read. */
int queue_store_list(struct queue_store *s, struct stored_file **files, size_t *n);

void queue_store_close(struct queue_store *s);

/* The file form of record r, malloc'd into *out: 0, or -1 with err set
 * (the record cannot be encoded as pprof). */
int queue_store_encode(struct profd_record *r, uint8_t **out, size_t *len, char *err,
                       size_t errlen);

/* Adds to b the record of a file's bytes, checked as a pprof received is:
 * the record, or NULL with err saying what is wrong and at which byte. */
struct profd_record *queue_store_decode(struct profd_batch *b, const uint8_t *data, size_t len,
                                        char *err, size_t errlen);

#endif
