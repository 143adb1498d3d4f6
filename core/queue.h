// SPDX-License-Identifier: Apache-2.0
/*
 * An exporter's queue inside the core: its items and state, shared by the
 * senders (exporter.c) and the pushes (queue_push.c). Not for modules.
 */
#ifndef PROFD_QUEUE_H
#define PROFD_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "../lib/clock.h"
#include "exporter.h"
#include "log.h"
#include "metrics.h"
#include "queue_store.h"
#include "record.h"

struct item {
    struct profd_batch *batch;    /* NULL: in its files alone (sending_queue.memory_size) */
    struct stored_file *files;    /* with a store: each record's file (id 0: none) */
    size_t nrecords, bytes;
    struct timespec flush_at;     /* when flush_timeout ends for this item */
    uint64_t seq;                 /* 1, 2, ... in push order */
    struct item *next;
};

struct profd_queue {
    struct profd_component *c;
    struct profd_exporter_settings s;
    pthread_mutex_t mu;
    pthread_cond_t work;          /* senders: an item, a drain or a stop */
    pthread_cond_t room;          /* pushers, retries, drain: a pop or a stop */
    size_t idle_senders;          /* waiting on work */
    size_t room_waiters;          /* waiting on room */
    size_t lingering;             /* senders in their flush_timeout wait */
    uint64_t pushed;              /* seq of the last item pushed */
    uint64_t flushed;             /* items up to this seq go without waiting */
    struct item *head, *tail;
    size_t bytes, records;
    size_t memory_bytes;          /* of the items whose batch is in memory */
    bool draining, stop_now;
    bool no_waits;                /* pushes refused at once when full: stopping */
    struct profd_log_limit refusals_log;   /* "asking the sender to retry" */
    struct timespec deadline;     /* of the drain */
    pthread_t *threads;
    size_t nthreads;
    struct queue_store *store;    /* sending_queue.storage's, else NULL */
};

/* Appends b, of sizes (profd_batch_sizes), to q (q->mu held), taking a
 * reference, with its records' files (taken; NULL: none), and counts it
 * in. With sending_queue.memory_size, an item that every file holds and
 * that memory has no room for takes no reference: it is read back from
 * its files when its turn comes, and weighs what they hold (its counted
 * size) meanwhile. */
void profd_queue_enqueue(struct profd_queue *q, struct profd_batch *b,
                         struct profd_batch_sizes sizes, struct stored_file *files);
/* Appends an item of nrecords records to q (q->mu held), with their files
 * (taken; NULL: none): b, of which it takes a reference, or NULL for
 * records in their files alone. The item weighs sizes.held in the queue;
 * the component's counters take in sizes.counted. */
void profd_queue_append(struct profd_queue *q, struct profd_batch *b, size_t nrecords,
                        struct profd_batch_sizes sizes, struct stored_file *files);
/* Whether q's memory has room for bytes more of records (always, without
 * sending_queue.memory_size); q->mu held. */
bool profd_queue_memory_room(struct profd_queue *q, size_t bytes);
/* Ends the export of b (the reference to it let go) that did not go:
 * counted under counter, logged with why, its acks failed, its records'
 * files (NULL: none) removed. */
void profd_queue_conclude_unsent(struct profd_queue *q, struct profd_batch *b,
                                 const struct stored_file *files, enum profd_counter counter,
                                 const char *why);
/* Publishes the queue's bytes and records (q->mu held). */
void profd_queue_gauges(struct profd_queue *q);
/* Waits (q->mu held) until a pop, a drain or a stop, or until *until;
 * pthread_cond_timedwait's result. */
int profd_queue_wait_room(struct profd_queue *q, const struct timespec *until);

#endif
