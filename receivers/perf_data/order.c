// SPDX-License-Identifier: Apache-2.0
#include "order.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

struct queued {
    uint64_t time, seq, offset;
    size_t at;            /* body position in the arena */
    uint32_t type, len;
    uint16_t misc;
};

struct perf_order {
    const struct perf_file *f;
    size_t max_bytes;
    perf_deliver_fn deliver;
    void *arg;
    struct queued *items;
    size_t nitems, items_cap;
    uint8_t *arena;
    size_t used, arena_cap;
    uint8_t *spare;         /* the next arena, swapped in when the queue compacts */
    size_t spare_cap;
    uint64_t seq;
    uint64_t max_time;      /* newest time queued so far */
    uint64_t next_flush;    /* a round delivers up to this time */
};

struct perf_order *perf_order_new(const struct perf_file *f, size_t max_bytes,
                                  perf_deliver_fn deliver, void *arg)
{
    struct perf_order *q = calloc(1, sizeof(*q));
    if (!q)
        abort();
    *q = (struct perf_order){.f = f, .max_bytes = max_bytes, .deliver = deliver, .arg = arg};
    return q;
}

static int by_time(const void *a, const void *b)
{
    const struct queued *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sorts the queue, delivers the first n items and keeps the rest. */
static void deliver_first(struct perf_order *q, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct queued *it = &q->items[i];
        struct perf_record r = {it->type, it->misc, q->arena + it->at, it->len, it->offset};
        q->deliver(q->arg, &r);
    }
    /* What stays moves to the spare arena, which becomes the arena. */
    size_t used = 0;
    q->spare = grow_array(q->spare, &q->spare_cap, q->used + 1, 1);
    for (size_t i = n; i < q->nitems; i++) {
        struct queued *it = &q->items[i];
        memcpy(q->spare + used, q->arena + it->at, it->len);
        it->at = used;
        used += it->len;
        q->items[i - n] = *it;
    }
    uint8_t *old = q->arena;
    size_t old_cap = q->arena_cap;
    q->arena = q->spare;
    q->arena_cap = q->spare_cap;
    q->spare = old;
    q->spare_cap = old_cap;
    q->nitems -= n;
    q->used = used;
}

/* Delivers the queued items with time <= limit. */
static void deliver_until(struct perf_order *q, uint64_t limit)
{
    if (!q->nitems)
        return;
    qsort(q->items, q->nitems, sizeof(*q->items), by_time);
    size_t n = 0;
    while (n < q->nitems && q->items[n].time <= limit)
        n++;
    if (n)
        deliver_first(q, n);
}

void perf_order_add(struct perf_order *q, const struct perf_record *r)
{
    uint64_t time = perf_record_time(q->f, r);
    if (time == PERF_NO_TIME) {
        q->deliver(q->arg, r);
        return;
    }
    if (q->used + r->len > q->max_bytes && q->nitems) {
        qsort(q->items, q->nitems, sizeof(*q->items), by_time);
        deliver_first(q, (q->nitems + 1) / 2);
    }
    q->items = grow_array(q->items, &q->items_cap, q->nitems + 1, sizeof(*q->items));
    q->arena = grow_array(q->arena, &q->arena_cap, q->used + r->len + 1, 1);
    memcpy(q->arena + q->used, r->body, r->len);
    q->items[q->nitems++] = (struct queued){time, q->seq++, r->offset, q->used, r->type,
                                            (uint32_t)r->len, r->misc};
    q->used += r->len;
    if (time > q->max_time)
        q->max_time = time;
}

void perf_order_round(struct perf_order *q)
{
    deliver_until(q, q->next_flush);
    q->next_flush = q->max_time;
}

void perf_order_drain(struct perf_order *q)
{
    deliver_until(q, UINT64_MAX);
}

void perf_order_free(struct perf_order *q)
{
    if (!q)
        return;
    free(q->items);
    free(q->arena);
    free(q->spare);
    free(q);
}
