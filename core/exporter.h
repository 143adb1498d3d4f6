// SPDX-License-Identifier: Apache-2.0
/*
 * Exporter helper: every exporter sits behind a bounded queue (by bytes) with
 * its own sender threads, retries with exponential backoff and jitter, a
 * policy for a full queue (block or drop), and a drain on shutdown with a
 * deadline. Its options are accepted in every exporter's config section.
 */
#ifndef PROFD_EXPORTER_H
#define PROFD_EXPORTER_H

#include <stdbool.h>
#include <stdint.h>

#include "profd/plugin.h"

enum { PROFD_QUEUE_BLOCK = 0, PROFD_QUEUE_DROP = 1 };

struct profd_exporter_settings {
    struct {
        uint64_t queue_size;        /* bytes */
        int full_policy;            /* PROFD_QUEUE_* */
        int64_t flush_timeout;      /* ns a sender waits for more records; 0 = none */
        int64_t flush_size;         /* records that end that wait early */
        int64_t block_timeout;      /* ns a blocked emit waits before PROFD_ERETRY */
        int64_t num_consumers;
        char *storage;              /* directory records are kept in too; NULL or "": none */
        bool storage_fsync;         /* each stored file synced before the push returns */
        uint64_t memory_size;       /* with storage: bytes also kept in memory; 0 = all */
    } sending_queue;
    struct {
        bool enabled;
        int64_t initial_interval, max_interval, max_elapsed_time;   /* ns */
    } retry_on_failure;
    int64_t shutdown_timeout;       /* ns the drain may take */
};

/* The option table of struct profd_exporter_settings. */
extern const struct profd_option profd_exporter_options[];

struct profd_component;
struct profd_queue;

/* Creates the queue of exporter c; senders start with profd_queue_start. */
struct profd_queue *profd_queue_create(struct profd_component *c,
                                       const struct profd_exporter_settings *s);
/* Starts the sender threads. Returns 0 or -1. */
int profd_queue_start(struct profd_queue *q);
/*
 * Enqueues b (taking a reference). When the queue is full: with policy drop,
 * counts and logs the drop and returns PROFD_OK; with policy block, waits up
 * to block_timeout (or profd_queue_wait_until's deadline), then returns
 * PROFD_ERETRY. Once a drain began (shutdown), takes nothing more and
 * returns PROFD_ERETRY, so its sender keeps it. Any thread.
 */
int profd_queue_push(struct profd_queue *q, struct profd_batch *b);
/* A batch for a queue: one of the pushes of profd_queue_push_all. */
struct profd_push {
    struct profd_queue *queue;
    struct profd_batch *batch;
};
/*
 * Makes the n pushes (a queue may be named more than once), all or none, as one push: when a queue under the block policy is full,
 * nothing is queued anywhere until there is room in every one, and when
 * that wait ends in vain (or a queue is draining) none was taken and the
 * result is PROFD_ERETRY. A queue under the drop policy that has no room
 * drops its batches (counted) while the others take theirs. So the
 * sender's retry of a refused push duplicates nothing. Any thread.
 */
int profd_queue_push_all(const struct profd_push *pushes, size_t n);
/*
 * The latest a push on the calling thread may wait for room, in
 * CLOCK_MONOTONIC nanoseconds, when that comes before block_timeout: the
 * deadline of the request being served, or PROFD_QUEUE_NO_WAIT on a thread
 * serving many clients at once (an event loop), where a full queue under
 * the block policy then returns PROFD_ERETRY at once instead of stalling
 * everyone the thread serves. 0 (every thread's start): block_timeout
 * alone. Returns the setting it replaces.
 */
#define PROFD_QUEUE_NO_WAIT ((int64_t)1)   /* a deadline long past */
int64_t profd_queue_wait_until(int64_t deadline_ns);
/* True when a push of bytes now would wait for room: the block policy, a
 * queue not empty and without room for them. A hint (the queue changes
 * meanwhile). Any thread. */
bool profd_queue_would_wait(struct profd_queue *q, size_t bytes);
/* From now on a push finding the queue full returns PROFD_ERETRY at once,
 * and those waiting for room return it now: shutdown begins, and a request
 * not yet accepted is better answered "retry" than held until
 * block_timeout. Pushes that fit are taken as before. */
void profd_queue_stop_waits(struct profd_queue *q);
/* Sends what is queued until empty or the shutdown deadline, drops the rest
 * (counted), and joins the senders. Idempotent. */
void profd_queue_drain(struct profd_queue *q);
/* Frees the queue (after drain). Accepts NULL. */
void profd_queue_destroy(struct profd_queue *q);

/* Called from an exporter's consume on a sender thread: the retry its
 * PROFD_ERETRY asks for waits at least ns. */
void profd_exporter_retry_after(int64_t ns);
/* In consume: which try of its batch this is (0 the first). */
unsigned profd_exporter_attempt(void);
/* In consume: record i of the batch is delivered, or refused for good
 * (host->export_settle). Out of range or already settled: no effect. */
void profd_exporter_settle(size_t i, bool delivered);
/* In consume: whether record i of the batch was settled. */
bool profd_exporter_settled(size_t i);

/* Backoff before retry number attempt (0-based): initial * 1.5^attempt,
 * capped at max, randomized by +-50%. */
int64_t profd_backoff_ns(int64_t initial, int64_t max, unsigned attempt, uint32_t random);

#endif
