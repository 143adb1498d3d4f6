// SPDX-License-Identifier: Apache-2.0
/* Pushes onto exporters' queues: one queue, or several all or none. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "graph.h"
#include "log.h"
#include "queue.h"
#include "queue_store.h"
#include "record.h"

static _Thread_local int64_t wait_until_ns;

int64_t profd_queue_wait_until(int64_t deadline_ns)
{
    int64_t was = wait_until_ns;
    wait_until_ns = deadline_ns;
    return was;
}

/* Whether bytes more fit in q beside held bytes. A batch larger than the
 * whole queue is let in alone, never refused forever. */
static bool fits_beside(const struct profd_queue *q, size_t held, size_t bytes)
{
    return held == 0 || held + bytes <= q->s.sending_queue.queue_size;
}

/* Whether bytes more fit (q->mu held). */
static bool room_for(const struct profd_queue *q, size_t bytes)
{
    return fits_beside(q, q->bytes, bytes);
}

bool profd_queue_would_wait(struct profd_queue *q, size_t bytes)
{
    if (q->s.sending_queue.full_policy != PROFD_QUEUE_BLOCK)
        return false;
    /* the bytes the queue's gauge last showed (profd_queue_gauges, at every
     * push and take), read without taking q->mu from its pushers and senders */
    int64_t held = atomic_load_explicit(&q->c->metrics->gauges[PROFD_G_QUEUE_BYTES],
                                        memory_order_relaxed);
    return !fits_beside(q, held > 0 ? (size_t)held : 0, bytes);
}

/* When a push that began now must stop waiting for room in q: after
 * block_timeout, or at the thread's profd_queue_wait_until when sooner. */
static struct timespec room_deadline(const struct profd_queue *q)
{
    struct timespec until = monotonic_after(q->s.sending_queue.block_timeout);
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
        if (profd_queue_wait_room(q, until) == ETIMEDOUT)
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
 * order they are locked in) and their bytes, and sizes[i] with push i's;
 * returns how many queues. */
static size_t shares_of(const struct profd_push *pushes, size_t n, struct share *sh,
                        struct profd_batch_sizes *sizes)
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
        sizes[i] = profd_batch_sizes(pushes[i].batch);
        sh[k].bytes += sizes[i].held;
    }
    return m;
}

static struct share *share_of(struct share *sh, size_t m, const struct profd_queue *q)
{
    while (sh->q != q && --m)
        sh++;
    return sh;
}

bool profd_queue_memory_room(struct profd_queue *q, size_t bytes)
{
    uint64_t memory = q->s.sending_queue.memory_size;
    return !memory || q->memory_bytes + bytes <= memory;
}

void profd_queue_append(struct profd_queue *q, struct profd_batch *b, size_t nrecords,
                        struct profd_batch_sizes sizes, struct stored_file *files)
{
    struct item *it = profd_xmalloc(sizeof(*it));
    profd_metrics_count_in(q->c->metrics, nrecords, sizes.counted);
    if (b) {
        profd_batch_ref(b);
        q->memory_bytes += sizes.held;
    }
    *it = (struct item){b, files, nrecords, sizes.held,
                        monotonic_after(q->s.sending_queue.flush_timeout), ++q->pushed, NULL};
    if (q->tail)
        q->tail->next = it;
    else
        q->head = it;
    q->tail = it;
    q->bytes += sizes.held;
    q->records += nrecords;
}

void profd_queue_enqueue(struct profd_queue *q, struct profd_batch *b,
                         struct profd_batch_sizes sizes, struct stored_file *files)
{
    bool in_files = files && !profd_queue_memory_room(q, sizes.held);
    for (size_t i = 0; in_files && i < b->nrecords; i++)
        in_files = files[i].id != 0;
    if (in_files)   /* what its files hold */
        sizes.held = sizes.counted;
    profd_queue_append(q, in_files ? NULL : b, b->nrecords, sizes, files);
}

/* Wakes a sender for what was just queued (q->mu held): a busy one finds
 * it on its own; a lingering one is woken only when enough has piled up. */
static void wake_sender(struct profd_queue *q)
{
    profd_queue_gauges(q);
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

/* A blocked push's wait for room in s->q (s->q->mu held, and only it; let
 * go here). True when the push should look at every queue again: room
 * came, or a drain began (which refuses it). False, with *why, when it
 * must not wait or waited in vain. */
static bool wait_blocked(struct share *s, char *why, size_t whylen)
{
    struct profd_queue *q = s->q;
    if (wait_until_ns == PROFD_QUEUE_NO_WAIT || q->no_waits) {
        pthread_mutex_unlock(&q->mu);
        snprintf(why, whylen, "queue full");
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
    snprintf(why, whylen, "queue full for up to %lld ms",
             (long long)(q->s.sending_queue.block_timeout / 1000000));
    return again;
}

/* What one look at every queue found. */
enum look { TAKEN, BLOCKED, DRAINING };

/* One look at every queue with all of them locked. TAKEN: every batch
 * queued (or, where the drop policy finds no room, dropped and counted).
 * BLOCKED: *s is the first full queue under the block policy, whose lock
 * alone is still held. DRAINING: *s is a queue whose drain began. Nothing
 * was queued unless TAKEN. */
static enum look look_at_all(struct share *sh, size_t m, const struct profd_push *pushes,
                             const struct profd_batch_sizes *sizes, struct stored_file **files,
                             size_t n, struct share **s)
{
    lock_shares(sh, m, true, NULL);
    *s = NULL;
    for (size_t k = 0; k < m; k++) {
        struct profd_queue *q = sh[k].q;
        if (q->draining) {
            lock_shares(sh, m, false, NULL);
            *s = &sh[k];
            return DRAINING;
        }
        sh[k].fits = room_for(q, sh[k].bytes);
        if (!sh[k].fits && q->s.sending_queue.full_policy == PROFD_QUEUE_BLOCK && !*s)
            *s = &sh[k];
    }
    if (*s) {
        lock_shares(sh, m, false, *s);
        return BLOCKED;
    }
    for (size_t i = 0; i < n; i++)
        if (share_of(sh, m, pushes[i].queue)->fits) {
            profd_queue_enqueue(pushes[i].queue, pushes[i].batch, sizes[i], files[i]);
            files[i] = NULL;   /* the item's */
        }
    for (size_t k = 0; k < m; k++)
        wake_sender(sh[k].q);
    lock_shares(sh, m, false, NULL);
    for (size_t i = 0; i < n; i++)
        if (!share_of(sh, m, pushes[i].queue)->fits) {   /* taken in, then dropped */
            struct profd_metrics *counters = pushes[i].queue->c->metrics;
            profd_metrics_count_in(counters, pushes[i].batch->nrecords, sizes[i].counted);
            profd_batch_ref(pushes[i].batch);
            profd_queue_conclude_unsent(pushes[i].queue, pushes[i].batch, files[i],
                                        PROFD_C_DROPPED_RECORDS, "queue full");
            free(files[i]);
            files[i] = NULL;
        }
    return TAKEN;
}

/* A push refused because of queue q (full, or draining): q counts the
 * records it would have taken as told to retry later, and says so at most
 * once a second (a client retrying against a full queue would otherwise
 * fill the log). Nothing was taken: a file stays, a client retries. */
static void refuse(struct profd_queue *q, const struct profd_push *pushes, size_t n,
                   const char *why)
{
    size_t records = 0;
    for (size_t i = 0; i < n; i++)
        if (pushes[i].queue == q)
            records += pushes[i].batch->nrecords;
    atomic_fetch_add(&q->c->metrics->counters[PROFD_C_RETRY_LATER_RECORDS], records);
    profd_log_limited(&q->refusals_log, PROFD_LOG_WARN, q->c->id, "asked to retry",
                      "%s: asking the sender to retry", why);
}

/* The files of each push's records in its queue's store, written before
 * any queue is locked (files[i] NULL: its queue keeps none). */
static void store_all(const struct profd_push *pushes, size_t n, struct stored_file **files)
{
    for (size_t i = 0; i < n; i++) {
        struct profd_queue *q = pushes[i].queue;
        files[i] = NULL;
        if (q->store && pushes[i].batch->nrecords) {
            files[i] = profd_xcalloc(pushes[i].batch->nrecords, sizeof(**files));
            queue_store_write(q->store, pushes[i].batch, files[i]);
        }
    }
}

/* Removes the files no queue took (files[i] left to the push). */
static void unstore_all(const struct profd_push *pushes, size_t n, struct stored_file **files)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; files[i] && k < pushes[i].batch->nrecords; k++)
            queue_store_remove(pushes[i].queue->store, files[i][k]);
        free(files[i]);
    }
}

int profd_queue_push_all(const struct profd_push *pushes, size_t n)
{
    struct share few[4];
    struct profd_batch_sizes few_sizes[4];
    struct stored_file *few_files[4];
    struct share *sh = n <= 4 ? few : profd_xcalloc(n, sizeof(*sh));
    struct profd_batch_sizes *sizes = n <= 4 ? few_sizes : profd_xcalloc(n, sizeof(*sizes));
    struct stored_file **files = n <= 4 ? few_files : profd_xcalloc(n, sizeof(*files));
    size_t m = shares_of(pushes, n, sh, sizes);
    struct share *s;
    enum look look;
    char why[64] = "";
    store_all(pushes, n, files);
    while ((look = look_at_all(sh, m, pushes, sizes, files, n, &s)) == BLOCKED &&
           wait_blocked(s, why, sizeof(why)))
        ;
    if (look != TAKEN)
        refuse(s->q, pushes, n, look == DRAINING ? "shutting down" : why);
    unstore_all(pushes, n, files);
    if (sh != few) {
        free(sh);
        free(sizes);
        free(files);
    }
    return look == TAKEN ? PROFD_OK : PROFD_ERETRY;
}

int profd_queue_push(struct profd_queue *q, struct profd_batch *b)
{
    return profd_queue_push_all(&(struct profd_push){q, b}, 1);
}

