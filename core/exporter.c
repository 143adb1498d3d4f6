// SPDX-License-Identifier: Apache-2.0
#include "exporter.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "graph.h"
#include "log.h"
#include "record.h"

static const char *const full_policies[] = {"block", "drop", NULL};

static const struct profd_option queue_options[] = {
    {"queue_size", PROFD_OPT_SIZE, offsetof(struct profd_exporter_settings, sending_queue.queue_size),
     "64MiB", "payload bytes the queue holds before the full policy applies"},
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

struct item {
    struct profd_batch *batch;
    size_t bytes;
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
    bool draining, stop_now;
    bool no_waits;                /* pushes refused at once when full: stopping */
    struct timespec deadline;     /* of the drain */
    pthread_t *threads;
    size_t nthreads;
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

static struct timespec deadline_after(int64_t ns)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += ns / 1000000000;
    t.tv_nsec += ns % 1000000000;
    if (t.tv_nsec >= 1000000000) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000;
    }
    return t;
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
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&q->work, &attr);
    pthread_cond_init(&q->room, &attr);
    pthread_condattr_destroy(&attr);
    return q;
}

static void update_gauges(struct profd_queue *q)
{
    atomic_store(&q->c->metrics->queue_bytes, (int64_t)q->bytes);
    atomic_store(&q->c->metrics->queue_records, (int64_t)q->records);
}

/* Counts, logs and fails the acks of a batch that will not be exported. */
static void give_up(struct profd_queue *q, struct profd_batch *b, enum profd_counter counter,
                    const char *why)
{
    atomic_fetch_add(&q->c->metrics->counters[counter], b->nrecords);
    profd_log(PROFD_LOG_WARN, q->c->id, "%s %zu record(s): %s",
              counter == PROFD_C_DROPPED_RECORDS ? "dropped" : "failed to export", b->nrecords,
              why);
    profd_batch_fail_acks(b);
    profd_batch_unref(b);
}

/* Waits (q->mu held) until a pop, a drain or a stop, or until *until. */
static int wait_room(struct profd_queue *q, const struct timespec *until)
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

static _Thread_local int64_t wait_until_ns;

int64_t profd_queue_wait_until(int64_t deadline_ns)
{
    int64_t was = wait_until_ns;
    wait_until_ns = deadline_ns;
    return was;
}

/* Whether bytes more fit (q->mu held). A batch larger than the whole queue
 * is let in alone, never refused forever. */
static bool room_for(const struct profd_queue *q, size_t bytes)
{
    return q->bytes == 0 || q->bytes + bytes <= q->s.sending_queue.queue_size;
}

bool profd_queue_would_wait(struct profd_queue *q, size_t bytes)
{
    if (q->s.sending_queue.full_policy != PROFD_QUEUE_BLOCK)
        return false;
    pthread_mutex_lock(&q->mu);
    bool full = !room_for(q, bytes) && !q->draining;
    pthread_mutex_unlock(&q->mu);
    return full;
}

/* When a push that began now must stop waiting for room in q: after
 * block_timeout, or at the thread's profd_queue_wait_until when sooner. */
static struct timespec room_deadline(const struct profd_queue *q)
{
    struct timespec until = deadline_after(q->s.sending_queue.block_timeout);
    if (wait_until_ns &&
        wait_until_ns < (int64_t)until.tv_sec * 1000000000 + until.tv_nsec)
        until = (struct timespec){wait_until_ns / 1000000000, wait_until_ns % 1000000000};
    return until;
}

/* Waits (q->mu held) until room for bytes, *until, a drain or
 * profd_queue_stop_waits; whether they fit now. */
static bool wait_for_room(struct profd_queue *q, size_t bytes, const struct timespec *until)
{
    bool fits = false;
    while (!fits && !q->draining && !q->no_waits) {
        if (q->lingering)   /* a full queue ends the wait for more */
            pthread_cond_signal(&q->work);
        if (wait_room(q, until) == ETIMEDOUT)
            break;
        fits = room_for(q, bytes);
    }
    return fits;
}

/* One queue's part in a push: the bytes of every batch it is given (one
 * exporter reached along two paths gets two), whether they fit, and the
 * end of this push's wait for its room once it had to wait. */
struct share {
    struct profd_queue *q;
    size_t bytes;
    bool fits, waited;
    struct timespec until;
};

/* Fills sh with the distinct queues of the n pushes in address order (the
 * order they are locked in) and their bytes; returns how many. */
static size_t shares_of(const struct profd_push *pushes, size_t n, struct share *sh)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        struct profd_queue *q = pushes[i].queue;
        size_t k = 0;
        while (k < m && sh[k].q < q)
            k++;
        if (k == m || sh[k].q != q) {
            memmove(&sh[k + 1], &sh[k], (m - k) * sizeof(*sh));
            sh[k] = (struct share){.q = q};
            m++;
        }
        sh[k].bytes += profd_batch_bytes(pushes[i].batch);
    }
    return m;
}

static struct share *share_of(struct share *sh, size_t m, const struct profd_queue *q)
{
    while (sh->q != q && --m)
        sh++;
    return sh;
}

/* Appends b to q (q->mu held), taking a reference, and counts it in. */
static void enqueue(struct profd_queue *q, struct profd_batch *b)
{
    struct item *it = profd_xmalloc(sizeof(*it));
    size_t bytes = profd_batch_bytes(b);
    profd_metrics_count_in(q->c->metrics, b->nrecords, bytes);
    profd_batch_ref(b);
    *it = (struct item){b, bytes, deadline_after(q->s.sending_queue.flush_timeout), ++q->pushed,
                        NULL};
    if (q->tail)
        q->tail->next = it;
    else
        q->head = it;
    q->tail = it;
    q->bytes += bytes;
    q->records += b->nrecords;
}

/* Wakes a sender for what was just queued (q->mu held): a busy one finds
 * it on its own; a lingering one is woken only when enough has piled up. */
static void wake_sender(struct profd_queue *q)
{
    update_gauges(q);
    if (q->lingering ? (int64_t)q->records >= q->s.sending_queue.flush_size
                     : q->idle_senders > 0)
        pthread_cond_signal(&q->work);
}

/* The queues of sh[0..m) locked (in address order) or unlocked, but for
 * the one skipped (NULL: none). */
static void lock_shares(struct share *sh, size_t m, bool lock, const struct share *skip)
{
    for (size_t k = 0; k < m; k++)
        if (&sh[k] != skip)
            (lock ? pthread_mutex_lock : pthread_mutex_unlock)(&sh[k].q->mu);
}

/* A blocked push's wait for room in s->q (s->q->mu held, and only it).
 * True when the push should look at every queue again: room came, or a
 * drain began (which refuses it). False, logged, when it must not wait or
 * waited in vain. */
static bool wait_blocked(struct share *s)
{
    struct profd_queue *q = s->q;
    if (wait_until_ns == PROFD_QUEUE_NO_WAIT || q->no_waits) {
        pthread_mutex_unlock(&q->mu);
        profd_log(PROFD_LOG_WARN, q->c->id, "queue full: asking the sender to retry");
        return false;
    }
    if (!s->waited) {
        s->waited = true;
        s->until = room_deadline(q);
        profd_log(PROFD_LOG_DEBUG, q->c->id, "queue full: a batch of %zu bytes waits for room",
                  s->bytes);
    }
    bool again = wait_for_room(q, s->bytes, &s->until) || q->draining;
    pthread_mutex_unlock(&q->mu);
    if (!again)
        profd_log(PROFD_LOG_WARN, q->c->id,
                  "queue full for up to %lld ms: asking the sender to retry",
                  (long long)(q->s.sending_queue.block_timeout / 1000000));
    return again;
}

/* One look at every queue with all of them locked. *blocked NULL: the
 * result, PROFD_OK with every batch queued (or, where the drop policy finds
 * no room, dropped and counted) or PROFD_ERETRY when a queue is draining.
 * Else *blocked is the first full queue under the block policy, whose lock
 * alone is still held, and nothing was queued. */
static int try_push_all(struct share *sh, size_t m, const struct profd_push *pushes, size_t n,
                        struct share **blocked)
{
    lock_shares(sh, m, true, NULL);
    *blocked = NULL;
    for (size_t k = 0; k < m; k++) {
        struct profd_queue *q = sh[k].q;
        if (q->draining) {   /* not taken: its sender keeps it (a file stays, a client retries) */
            lock_shares(sh, m, false, NULL);
            profd_log(PROFD_LOG_WARN, q->c->id, "shutting down: asking the sender to retry");
            return PROFD_ERETRY;
        }
        sh[k].fits = room_for(q, sh[k].bytes);
        if (!sh[k].fits && q->s.sending_queue.full_policy == PROFD_QUEUE_BLOCK && !*blocked)
            *blocked = &sh[k];
    }
    if (*blocked) {
        lock_shares(sh, m, false, *blocked);
        return PROFD_ERETRY;
    }
    for (size_t i = 0; i < n; i++)
        if (share_of(sh, m, pushes[i].queue)->fits)
            enqueue(pushes[i].queue, pushes[i].batch);
    for (size_t k = 0; k < m; k++)
        wake_sender(sh[k].q);
    lock_shares(sh, m, false, NULL);
    for (size_t i = 0; i < n; i++)
        if (!share_of(sh, m, pushes[i].queue)->fits) {   /* taken in, then dropped */
            profd_metrics_count_in(pushes[i].queue->c->metrics, pushes[i].batch->nrecords,
                                   profd_batch_bytes(pushes[i].batch));
            profd_batch_ref(pushes[i].batch);
            give_up(pushes[i].queue, pushes[i].batch, PROFD_C_DROPPED_RECORDS, "queue full");
        }
    return PROFD_OK;
}

int profd_queue_push_all(const struct profd_push *pushes, size_t n)
{
    struct share few[4];
    struct share *sh = n <= 4 ? few : profd_xcalloc(n, sizeof(*sh));
    size_t m = shares_of(pushes, n, sh);
    struct share *blocked;
    int rc;
    do
        rc = try_push_all(sh, m, pushes, n, &blocked);
    while (blocked && wait_blocked(blocked));
    if (sh != few)
        free(sh);
    return rc;
}

int profd_queue_push(struct profd_queue *q, struct profd_batch *b)
{
    return profd_queue_push_all(&(struct profd_push){q, b}, 1);
}

/* Waits for a retry delay; false when the drain deadline passed meanwhile. */
static bool wait_retry(struct profd_queue *q, int64_t delay_ns)
{
    struct timespec until = deadline_after(delay_ns);
    pthread_mutex_lock(&q->mu);
    while (!q->stop_now && !past(&until)) {
        if (q->draining && past(&q->deadline))
            break;
        struct timespec wake = until;
        if (q->draining && (q->deadline.tv_sec < wake.tv_sec ||
                            (q->deadline.tv_sec == wake.tv_sec && q->deadline.tv_nsec < wake.tv_nsec)))
            wake = q->deadline;
        wait_room(q, &wake);
    }
    bool ok = !q->stop_now && !(q->draining && past(&q->deadline));
    pthread_mutex_unlock(&q->mu);
    return ok;
}

/* The wait the exporter asked for during this thread's last consume. */
static _Thread_local int64_t retry_hint_ns;
/* Which try of its batch this thread's consume is. */
static _Thread_local unsigned current_attempt;

void profd_exporter_retry_after(int64_t ns)
{
    retry_hint_ns = ns;
}

unsigned profd_exporter_attempt(void)
{
    return current_attempt;
}

static void export_one(struct profd_queue *q, struct profd_batch *b, size_t bytes)
{
    struct profd_component *c = q->c;
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    uint32_t seed = (uint32_t)(uintptr_t)b ^ (uint32_t)started.tv_nsec;
    for (unsigned attempt = 0;; attempt++) {
        retry_hint_ns = 0;
        current_attempt = attempt;
        int rc = c->plugin->consume(c->state, b);
        if (rc == PROFD_OK) {
            atomic_fetch_add(&c->metrics->counters[PROFD_C_SENT_RECORDS], b->nrecords);
            atomic_fetch_add(&c->metrics->counters[PROFD_C_SENT_BYTES], bytes);
            profd_batch_unref(b);
            return;
        }
        if (rc != PROFD_ERETRY || !q->s.retry_on_failure.enabled) {
            give_up(q, b, PROFD_C_FAILED_RECORDS, "permanent error");
            return;
        }
        int64_t max_elapsed = q->s.retry_on_failure.max_elapsed_time;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        int64_t elapsed = (now.tv_sec - started.tv_sec) * 1000000000LL + (now.tv_nsec - started.tv_nsec);
        if (max_elapsed > 0 && elapsed >= max_elapsed) {
            give_up(q, b, PROFD_C_FAILED_RECORDS, "retries exhausted");
            return;
        }
        seed = seed * 1664525u + 1013904223u;
        int64_t delay = profd_backoff_ns(q->s.retry_on_failure.initial_interval,
                                         q->s.retry_on_failure.max_interval, attempt, seed >> 8);
        if (retry_hint_ns > delay)   /* the server said when (Retry-After, RetryInfo) */
            delay = retry_hint_ns;
        profd_log(PROFD_LOG_INFO, c->id, "export failed (retryable); retry %u in %lld ms",
                  attempt + 1, (long long)(delay / 1000000));
        if (!wait_retry(q, delay)) {
            give_up(q, b, PROFD_C_DROPPED_RECORDS, "shutdown deadline passed while retrying");
            return;
        }
    }
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

/* Pops the head item (q->mu held) into *b, and for an exporter that merges
 * batches every further item of the same burst, up to flush_size records,
 * into one merged batch. Returns the bytes taken. */
static size_t take_burst(struct profd_queue *q, struct profd_batch **b)
{
    bool merge = q->c->plugin->flags & PROFD_PLUGIN_MERGES_BATCHES;
    struct profd_batch *parts[256];
    size_t n = 0, bytes = 0, records = 0;
    do {
        struct item *it = q->head;
        q->head = it->next;
        if (!q->head)
            q->tail = NULL;
        q->bytes -= it->bytes;
        q->records -= it->batch->nrecords;
        bytes += it->bytes;
        records += it->batch->nrecords;
        parts[n++] = it->batch;
        free(it);
    } while (merge && q->head && q->head->seq <= q->flushed && n < 256 &&
             (int64_t)(records + q->head->batch->nrecords) <= q->s.sending_queue.flush_size);
    *b = n == 1 ? parts[0] : profd_batch_merge(parts, n);
    return bytes;
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
        struct profd_batch *b;
        size_t bytes = take_burst(q, &b);
        update_gauges(q);
        if (q->room_waiters)
            pthread_cond_broadcast(&q->room);
        pthread_mutex_unlock(&q->mu);
        export_one(q, b, bytes);
        pthread_mutex_lock(&q->mu);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

int profd_queue_start(struct profd_queue *q)
{
    size_t n = q->s.sending_queue.num_consumers > 0 ? (size_t)q->s.sending_queue.num_consumers : 1;
    q->threads = profd_xcalloc(n, sizeof(*q->threads));
    for (; q->nthreads < n; q->nthreads++)
        if (pthread_create(&q->threads[q->nthreads], NULL, sender_main, q) != 0) {
            profd_log(PROFD_LOG_ERROR, q->c->id, "cannot start sender thread");
            return -1;
        }
    return 0;
}

/* Waits until the queue is empty or the drain deadline passed; then stops senders. */
static void deadline_watch(struct profd_queue *q)
{
    pthread_mutex_lock(&q->mu);
    while (q->head && !past(&q->deadline))
        wait_room(q, &q->deadline);
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
        q->deadline = deadline_after(q->s.shutdown_timeout);
    }
    wake_everyone(q);
    pthread_mutex_unlock(&q->mu);
    if (q->nthreads)
        deadline_watch(q);
    for (size_t i = 0; i < q->nthreads; i++)
        pthread_join(q->threads[i], NULL);
    q->nthreads = 0;
    /* Whatever is left (deadline passed, or never started) is dropped, counted. */
    while (q->head) {
        struct item *it = q->head;
        q->head = it->next;
        q->bytes -= it->bytes;
        q->records -= it->batch->nrecords;
        give_up(q, it->batch, PROFD_C_DROPPED_RECORDS, "shutdown deadline passed");
        free(it);
    }
    q->tail = NULL;
    update_gauges(q);
}

void profd_queue_destroy(struct profd_queue *q)
{
    if (!q)
        return;
    profd_queue_drain(q);
    free(q->threads);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->work);
    pthread_cond_destroy(&q->room);
    free(q);
}
