// SPDX-License-Identifier: Apache-2.0
/* An exporter's queue: its options, its sender threads (bursts, retries
 * with backoff) and its drain. Pushes onto it are in queue_push.c. */
#include "exporter.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../lib/thread_name.h"
#include "alloc.h"
#include "graph.h"
#include "log.h"
#include "queue.h"
#include "queue_store.h"
#include "record.h"

static const char *const full_policies[] = {"block", "drop", NULL};

static const struct profd_option queue_options[] = {
    {"queue_size", PROFD_OPT_SIZE, offsetof(struct profd_exporter_settings, sending_queue.queue_size),
     "64MiB", "bytes the queue's records hold (as received, and their profiles decoded or "
              "built in memory) before the full policy applies"},
    {"full_policy", PROFD_OPT_ENUM, offsetof(struct profd_exporter_settings, sending_queue.full_policy),
     "block", "block: the pipeline waits; drop: the batch is dropped and counted",
     .choices = full_policies},
    {"block_timeout", PROFD_OPT_DURATION,
     offsetof(struct profd_exporter_settings, sending_queue.block_timeout), "30s",
     "how long a blocked pipeline waits before its receiver is told to retry"},
    {"flush_timeout", PROFD_OPT_DURATION,
     offsetof(struct profd_exporter_settings, sending_queue.flush_timeout), "100ms",
     "a record may wait this long for more to export with it, so a burst costs the sender "
     "one wake-up instead of one per record; 0 exports each record at once"},
    {"flush_size", PROFD_OPT_INT, offsetof(struct profd_exporter_settings, sending_queue.flush_size),
     "64", "queued records that end the flush_timeout wait early"},
    {"num_consumers", PROFD_OPT_INT,
     offsetof(struct profd_exporter_settings, sending_queue.num_consumers), "1",
     "sender threads"},
    {"storage", PROFD_OPT_STRING, offsetof(struct profd_exporter_settings, sending_queue.storage),
     "", "a directory where each queued record is also kept, in a directory of the exporter's "
     "own, until it is settled: what profd stopped or crashed with is sent when it starts "
     "again; empty keeps the queue in memory alone"},
    {"storage_fsync", PROFD_OPT_BOOL,
     offsetof(struct profd_exporter_settings, sending_queue.storage_fsync), "false",
     "sync each stored file, and then its directory, before the push it came with is answered, "
     "so that a crash of the machine loses none either: a disk flush a push"},
    {"memory_size", PROFD_OPT_SIZE, offsetof(struct profd_exporter_settings, sending_queue.memory_size),
     "0", "with storage: the bytes of queued records kept in memory too; records queued beyond "
     "them are kept in their files alone and read back when their turn comes, so queue_size can "
     "be larger than memory; 0 keeps every queued record in memory too"},
    {0},
};

static const struct profd_option retry_options[] = {
    {"enabled", PROFD_OPT_BOOL, offsetof(struct profd_exporter_settings, retry_on_failure.enabled),
     "true", "retry batches whose export failed with a retryable error"},
    {"initial_interval", PROFD_OPT_DURATION,
     offsetof(struct profd_exporter_settings, retry_on_failure.initial_interval), "1s",
     "wait before the first retry"},
    {"max_interval", PROFD_OPT_DURATION,
     offsetof(struct profd_exporter_settings, retry_on_failure.max_interval), "30s",
     "upper bound of the wait between retries"},
    {"max_elapsed_time", PROFD_OPT_DURATION,
     offsetof(struct profd_exporter_settings, retry_on_failure.max_elapsed_time), "5m",
     "give up on a batch after this long; 0 retries forever"},
    {0},
};

/* Offsets are relative to the settings struct: the sections bind into it. */
const struct profd_option profd_exporter_options[] = {
    {"sending_queue", PROFD_OPT_OBJECT, 0, NULL, "the exporter's queue", queue_options},
    {"retry_on_failure", PROFD_OPT_OBJECT, 0, NULL, "retries with exponential backoff",
     retry_options},
    {"shutdown_timeout", PROFD_OPT_DURATION, offsetof(struct profd_exporter_settings, shutdown_timeout),
     "30s", "how long shutdown waits for the queue to drain"},
    {0},
};

int64_t profd_backoff_ns(int64_t initial, int64_t max, unsigned attempt, uint32_t random)
{
    double d = (double)initial;
    for (unsigned i = 0; i < attempt && d < (double)max; i++)
        d *= 1.5;
    if (d > (double)max)
        d = (double)max;
    double jitter = 0.5 + (double)(random % 1000) / 1000.0;   /* [0.5, 1.5) */
    return (int64_t)(d * jitter);
}

static bool past(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

struct profd_queue *profd_queue_create(struct profd_component *c,
                                       const struct profd_exporter_settings *s)
{
    struct profd_queue *q = profd_xcalloc(1, sizeof(*q));
    q->c = c;
    q->s = *s;
    pthread_mutex_init(&q->mu, NULL);
    monotonic_cond_init(&q->work);
    monotonic_cond_init(&q->room);
    return q;
}

void profd_queue_gauges(struct profd_queue *q)
{
    atomic_int_fast64_t *g = q->c->metrics->gauges;   /* read alone, each: no order needed */
    atomic_store_explicit(&g[PROFD_G_QUEUE_BYTES], (int64_t)q->bytes, memory_order_relaxed);
    atomic_store_explicit(&g[PROFD_G_QUEUE_RECORDS], (int64_t)q->records, memory_order_relaxed);
    atomic_store_explicit(&g[PROFD_G_QUEUE_MEMORY_BYTES], (int64_t)q->memory_bytes,
                          memory_order_relaxed);
}

/* How an exporter settled a record of the batch it exports. */
enum settlement { SETTLE_OPEN = 0, SETTLE_DELIVERED, SETTLE_REFUSED };

/* Counts n records sent, with their bytes, in q's exporter. */
static void count_sent(struct profd_queue *q, size_t n, size_t bytes)
{
    atomic_fetch_add(&q->c->metrics->counters[PROFD_C_SENT_RECORDS], n);
    atomic_fetch_add(&q->c->metrics->counters[PROFD_C_SENT_BYTES], bytes);
}

/* Records an export did not send: given up (counted under the
 * conclusion's counter) and kept in the store for the next start. */
struct unsent {
    size_t given_up, kept;
};

/*
 * Ends the export of b and lets go of the reference to it. Records the
 * exporter settled (settled[i]; NULL: none) were counted then; of them the
 * refused fail their acks. The others count as delivered when open is
 * PROFD_C_SENT_RECORDS, else they are given up and fail their acks; but
 * with keep, those of them that are stored stay for the next start,
 * neither given up nor failed (what profd can send then counts as taken).
 * Every other record's file goes (files[i], files NULL: none). Returns the
 * records not sent, for report().
 */
static struct unsent conclude(struct profd_queue *q, struct profd_batch *b,
                              const uint8_t *settled, const struct stored_file *files, bool keep,
                              enum profd_counter open)
{
    size_t sent = 0, sent_bytes = 0;
    struct unsent u = {0};
    for (size_t i = 0; i < b->nrecords; i++) {
        enum settlement how = settled ? (enum settlement)settled[i] : SETTLE_OPEN;
        bool unsent_here = how == SETTLE_OPEN && open != PROFD_C_SENT_RECORDS;
        bool stays = unsent_here && keep && files && files[i].id;
        if (how == SETTLE_REFUSED || (unsent_here && !stays))
            profd_record_fail_ack(b->records[i]);
        if (how == SETTLE_OPEN && !unsent_here) {
            sent++;
            sent_bytes += profd_record_bytes(b->records[i]);
        }
        u.given_up += unsent_here && !stays;
        u.kept += stays;
        if (files && !stays)
            queue_store_remove(q->store, files[i]);
    }
    count_sent(q, sent, sent_bytes);
    profd_batch_unref(b);
    return u;
}

/* Counts the records given up under counter (failed or dropped) and logs
 * them and those kept for the next start, with why. */
static void report(struct profd_queue *q, struct unsent u, enum profd_counter counter,
                   const char *why)
{
    if (u.given_up) {
        atomic_fetch_add(&q->c->metrics->counters[counter], u.given_up);
        profd_log(PROFD_LOG_WARN, q->c->id, "%s %zu record(s): %s",
                  counter == PROFD_C_DROPPED_RECORDS ? "dropped" : "failed to export",
                  u.given_up, why);
    }
    if (u.kept)
        profd_log(PROFD_LOG_INFO, q->c->id, "%zu record(s) kept in %s for the next start: %s",
                  u.kept, queue_store_path(q->store), why);
}

void profd_queue_conclude_unsent(struct profd_queue *q, struct profd_batch *b,
                                 const struct stored_file *files, enum profd_counter counter,
                                 const char *why)
{
    report(q, conclude(q, b, NULL, files, false, counter), counter, why);
}

int profd_queue_wait_room(struct profd_queue *q, const struct timespec *until)
{
    q->room_waiters++;
    int rc = pthread_cond_timedwait(&q->room, &q->mu, until);
    q->room_waiters--;
    return rc;
}

/* Wakes every waiter (q->mu held): the queue's state changed for all. */
static void wake_everyone(struct profd_queue *q)
{
    pthread_cond_broadcast(&q->work);
    pthread_cond_broadcast(&q->room);
}

/* Waits for a retry delay; false when the drain deadline passed meanwhile. */
static bool wait_retry(struct profd_queue *q, int64_t delay_ns)
{
    struct timespec until = monotonic_after(delay_ns);
    pthread_mutex_lock(&q->mu);
    while (!q->stop_now && !past(&until)) {
        if (q->draining && past(&q->deadline))
            break;
        struct timespec wake = until;
        if (q->draining && (q->deadline.tv_sec < wake.tv_sec ||
                            (q->deadline.tv_sec == wake.tv_sec && q->deadline.tv_nsec < wake.tv_nsec)))
            wake = q->deadline;
        profd_queue_wait_room(q, &wake);
    }
    bool ok = !q->stop_now && !(q->draining && past(&q->deadline));
    pthread_mutex_unlock(&q->mu);
    return ok;
}

/* The wait the exporter asked for during this thread's last consume. */
static _Thread_local int64_t retry_hint_ns;
/* Which try of its batch this thread's consume is. */
static _Thread_local unsigned current_attempt;
/* The batch this sender thread exports (its queue's; NULL between
 * batches), and how the exporter settled each of its records (enum
 * settlement), kept through its retries. */
static _Thread_local struct {
    struct profd_queue *q;
    struct profd_batch *b;
    uint8_t *how;
} exporting;

void profd_exporter_retry_after(int64_t ns)
{
    retry_hint_ns = ns;
}

unsigned profd_exporter_attempt(void)
{
    return current_attempt;
}

void profd_exporter_settle(size_t i, bool delivered)
{
    if (!exporting.b || i >= exporting.b->nrecords || exporting.how[i] != SETTLE_OPEN)
        return;
    exporting.how[i] = delivered ? SETTLE_DELIVERED : SETTLE_REFUSED;
    if (delivered)   /* counted now, so the counters follow a long batch as it goes */
        count_sent(exporting.q, 1, profd_record_bytes(exporting.b->records[i]));
    else   /* the exporter said why */
        atomic_fetch_add(&exporting.q->c->metrics->counters[PROFD_C_FAILED_RECORDS], 1);
}

bool profd_exporter_settled(size_t i)
{
    return exporting.b && i < exporting.b->nrecords && exporting.how[i] != SETTLE_OPEN;
}

/* Has the exporter consume b until it went, failed for good, ran out of
 * retries or of the drain's time; then concludes it (its records' files
 * files, NULL: none: kept when the drain's time ran out). */
static void export_one(struct profd_queue *q, struct profd_batch *b,
                       const struct stored_file *files)
{
    struct profd_component *c = q->c;
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    uint32_t seed = (uint32_t)(uintptr_t)b ^ (uint32_t)started.tv_nsec;
    exporting.q = q;
    exporting.b = b;
    exporting.how = profd_xcalloc(b->nrecords + 1, 1);
    enum profd_counter open = PROFD_C_FAILED_RECORDS;   /* unless it went */
    const char *why = NULL;
    bool stopped = false;
    for (unsigned attempt = 0;; attempt++) {
        retry_hint_ns = 0;
        current_attempt = attempt;
        int rc = c->plugin->consume(c->state, b);
        if (rc == PROFD_OK) {
            open = PROFD_C_SENT_RECORDS;
            break;
        }
        if (rc != PROFD_ERETRY || !q->s.retry_on_failure.enabled) {
            why = "permanent error";
            break;
        }
        int64_t max_elapsed = q->s.retry_on_failure.max_elapsed_time;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        int64_t elapsed = (now.tv_sec - started.tv_sec) * 1000000000LL + (now.tv_nsec - started.tv_nsec);
        if (max_elapsed > 0 && elapsed >= max_elapsed) {
            why = "retries exhausted";
            break;
        }
        seed = seed * 1664525u + 1013904223u;
        int64_t delay = profd_backoff_ns(q->s.retry_on_failure.initial_interval,
                                         q->s.retry_on_failure.max_interval, attempt, seed >> 8);
        if (retry_hint_ns > delay) {   /* the server said when (Retry-After, RetryInfo) */
            delay = retry_hint_ns;
            if (max_elapsed > 0 && delay > max_elapsed - elapsed) {
                why = "the server asked to wait past max_elapsed_time";
                break;
            }
        }
        profd_log(PROFD_LOG_INFO, c->id, "export failed (retryable); retry %u in %lld ms",
                  attempt + 1, (long long)(delay / 1000000));
        if (!wait_retry(q, delay)) {
            open = PROFD_C_DROPPED_RECORDS;
            why = "shutdown deadline passed while retrying";
            stopped = true;
            break;
        }
    }
    uint8_t *how = exporting.how;
    exporting.q = NULL;
    exporting.b = NULL;
    exporting.how = NULL;
    report(q, conclude(q, b, how, files, stopped, open), open, why);
    free(how);
}

/* Called by a sender (q->mu held) when the head record is the first of a
 * burst: waits until its flush_timeout ends, flush_size records are queued,
 * a pusher needs room, or a drain or stop. Everything queued by then is the
 * burst and goes without further waits. */
static void linger(struct profd_queue *q)
{
    const struct timespec until = q->head->flush_at;
    q->lingering++;
    while (q->s.sending_queue.flush_timeout > 0 &&
           (int64_t)q->records < q->s.sending_queue.flush_size && !q->room_waiters &&
           !q->draining && !q->stop_now) {
        q->idle_senders++;
        int rc = pthread_cond_timedwait(&q->work, &q->mu, &until);
        q->idle_senders--;
        if (rc == ETIMEDOUT)
            break;
    }
    q->lingering--;
    q->flushed = q->pushed;
    if (q->records > 1 && q->idle_senders)   /* share the burst with idle senders */
        pthread_cond_broadcast(&q->work);
}

/* The items of one burst, taken off the queue. */
struct burst {
    struct item *items[256];
    size_t n;
};

/* Pops the head item (q->mu held) into t, and for an exporter that merges
 * batches every further item of the same burst, up to flush_size records. */
static void take_burst(struct profd_queue *q, struct burst *t)
{
    bool merge = q->c->plugin->flags & PROFD_PLUGIN_MERGES_BATCHES;
    size_t records = 0;
    t->n = 0;
    do {
        struct item *it = q->head;
        q->head = it->next;
        if (!q->head)
            q->tail = NULL;
        q->bytes -= it->bytes;
        q->records -= it->nrecords;
        if (it->batch)
            q->memory_bytes -= it->bytes;
        records += it->nrecords;
        t->items[t->n++] = it;
    } while (merge && q->head && q->head->seq <= q->flushed && t->n < 256 &&
             (int64_t)(records + q->head->nrecords) <= q->s.sending_queue.flush_size);
}

/* The batch of t's items (freed), merged when several, with their records'
 * files in the same order into *files (with a store; else NULL). Items in
 * their files alone are read back first; a file that does not read back
 * is moved aside and its record counted as dropped. NULL when no record
 * is left. Outside q->mu. */
static struct profd_batch *burst_batch(struct profd_queue *q, struct burst *t,
                                       struct stored_file **files)
{
    struct profd_batch *parts[256];
    size_t n = 0, records = 0, rejected = 0;
    *files = NULL;
    for (size_t i = 0; i < t->n; i++) {
        struct item *it = t->items[i];
        struct profd_batch *b = it->batch;
        size_t k = it->nrecords;
        if (!b) {
            b = profd_batch_new();
            k = queue_store_load(q->store, it->files, it->nrecords, b, it->files);
            rejected += it->nrecords - k;
        }
        if (it->files) {
            *files = profd_xrealloc(*files, (records + k + 1) * sizeof(**files));
            memcpy(*files + records, it->files, k * sizeof(**files));
        }
        records += k;
        if (k)
            parts[n++] = b;
        else
            profd_batch_unref(b);
        free(it->files);
        free(it);
    }
    atomic_fetch_add(&q->c->metrics->counters[PROFD_C_DROPPED_RECORDS], rejected);
    return !n ? NULL : n == 1 ? parts[0] : profd_batch_merge(parts, n);
}

static void *sender_main(void *arg)
{
    struct profd_queue *q = arg;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (!q->head && !q->draining && !q->stop_now) {
            q->idle_senders++;
            pthread_cond_wait(&q->work, &q->mu);
            q->idle_senders--;
        }
        if (q->head && q->head->seq > q->flushed && !q->stop_now)
            linger(q);
        if (!q->head || q->stop_now)
            break;
        struct burst t;
        take_burst(q, &t);
        profd_queue_gauges(q);
        if (q->room_waiters)
            pthread_cond_broadcast(&q->room);
        pthread_mutex_unlock(&q->mu);
        struct stored_file *files;
        struct profd_batch *b = burst_batch(q, &t, &files);
        if (b)
            export_one(q, b, files);
        free(files);
        pthread_mutex_lock(&q->mu);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

/* The record an earlier run stored in file f, queued again (at start,
 * before anything else is queued): read back while memory has room for
 * it, else queued in its file alone, read back when its turn comes.
 * Returns how many records were dropped: 1 when the file does not read
 * back (moved aside), else 0. */
static size_t queue_again(struct profd_queue *q, struct stored_file f)
{
    struct stored_file *files = profd_xmalloc(sizeof(*files));
    files[0] = f;
    pthread_mutex_lock(&q->mu);
    bool room = profd_queue_memory_room(q, f.bytes);
    if (!room)
        profd_queue_append(q, NULL, 1, (struct profd_batch_sizes){f.bytes, f.bytes}, files);
    pthread_mutex_unlock(&q->mu);
    if (!room)
        return 0;
    struct profd_batch *b = profd_batch_new();
    bool loaded = queue_store_load(q->store, &f, 1, b, files) == 1;
    if (loaded) {
        pthread_mutex_lock(&q->mu);
        profd_queue_enqueue(q, b, profd_batch_sizes(b), files);
        pthread_mutex_unlock(&q->mu);
    } else {
        free(files);
    }
    profd_batch_unref(b);
    return !loaded;
}

/* Opens sending_queue.storage, when set, and queues what an earlier run
 * left in it: 0, or -1 (logged) when it cannot be opened. */
static int open_store(struct profd_queue *q)
{
    const char *dir = q->s.sending_queue.storage;
    char why[512];
    if (!dir || !*dir) {
        if (q->s.sending_queue.memory_size)
            profd_log(PROFD_LOG_WARN, q->c->id, "sending_queue.memory_size has no effect "
                      "without sending_queue.storage: the queue is in memory alone");
        return 0;
    }
    if (!(q->store = queue_store_open(dir, q->c->metrics, q->s.sending_queue.storage_fsync, why,
                                      sizeof(why)))) {
        profd_log(PROFD_LOG_ERROR, q->c->id, "sending_queue.storage: %s", why);
        return -1;
    }
    struct stored_file *files;
    size_t n, rejected = 0;
    if (queue_store_list(q->store, &files, &n) == 0)
        for (size_t i = 0; i < n; i++)
            rejected += queue_again(q, files[i]);
    free(files);
    atomic_fetch_add(&q->c->metrics->counters[PROFD_C_DROPPED_RECORDS], rejected);
    pthread_mutex_lock(&q->mu);
    profd_queue_gauges(q);   /* what is queued again, before a sender's first take */
    pthread_mutex_unlock(&q->mu);
    if (q->records)
        profd_log(PROFD_LOG_INFO, q->c->id, "%zu record(s) queued again from %s", q->records,
                  queue_store_path(q->store));
    return 0;
}

int profd_queue_start(struct profd_queue *q)
{
    if (open_store(q) < 0)
        return -1;
    size_t n = q->s.sending_queue.num_consumers > 0 ? (size_t)q->s.sending_queue.num_consumers : 1;
    q->threads = profd_xcalloc(n, sizeof(*q->threads));
    for (; q->nthreads < n; q->nthreads++) {
        if (pthread_create(&q->threads[q->nthreads], NULL, sender_main, q) != 0) {
            profd_log(PROFD_LOG_ERROR, q->c->id, "cannot start sender thread");
            return -1;
        }
        thread_name(q->threads[q->nthreads], "%s", q->c->id);
    }
    return 0;
}

/* Waits until the queue is empty or the drain deadline passed; then stops senders. */
static void deadline_watch(struct profd_queue *q)
{
    pthread_mutex_lock(&q->mu);
    while (q->head && !past(&q->deadline))
        profd_queue_wait_room(q, &q->deadline);
    if (q->head)
        q->stop_now = true;
    wake_everyone(q);
    pthread_mutex_unlock(&q->mu);
}

void profd_queue_stop_waits(struct profd_queue *q)
{
    pthread_mutex_lock(&q->mu);
    q->no_waits = true;
    pthread_cond_broadcast(&q->room);
    pthread_mutex_unlock(&q->mu);
}

void profd_queue_drain(struct profd_queue *q)
{
    if (!q)
        return;
    pthread_mutex_lock(&q->mu);
    if (!q->draining) {
        q->draining = true;
        q->deadline = monotonic_after(q->s.shutdown_timeout);
    }
    wake_everyone(q);
    pthread_mutex_unlock(&q->mu);
    if (q->nthreads)
        deadline_watch(q);
    for (size_t i = 0; i < q->nthreads; i++)
        pthread_join(q->threads[i], NULL);
    q->nthreads = 0;
    /* Whatever is left (deadline passed, or never started) is dropped,
     * counted; or, stored, kept for the next start: told once for all. */
    struct unsent left = {0};
    while (q->head) {
        struct item *it = q->head;
        q->head = it->next;
        q->bytes -= it->bytes;
        q->records -= it->nrecords;
        q->memory_bytes -= it->batch ? it->bytes : 0;
        struct unsent u = {0, it->nrecords};   /* in its files alone: they stay */
        if (it->batch)
            u = conclude(q, it->batch, NULL, it->files, true, PROFD_C_DROPPED_RECORDS);
        left.given_up += u.given_up;
        left.kept += u.kept;
        free(it->files);
        free(it);
    }
    report(q, left, PROFD_C_DROPPED_RECORDS, "shutdown deadline passed");
    q->tail = NULL;
    profd_queue_gauges(q);
}

void profd_queue_destroy(struct profd_queue *q)
{
    if (!q)
        return;
    profd_queue_drain(q);
    queue_store_close(q->store);
    free(q->threads);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->work);
    pthread_cond_destroy(&q->room);
    free(q);
}
