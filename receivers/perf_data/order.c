// SPDX-License-Identifier: Apache-2.0
#include "order.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

struct queued {
    uint64_t time, seq, offset;
    size_t at;            /* body position in its arena */
    const uint8_t *stable;   /* the body where it stays, not copied; NULL: in its arena */
    uint32_t type, len;
    uint16_t misc;
    uint8_t arena;        /* which of the two */
};

/* Bodies of queued records. */
struct arena {
    uint8_t *bytes;
    size_t used, cap;
};

/* Records of the current round go to arenas[current]; those of the round
 * before are in the other one. A round hands out everything the round
 * before queued (perf's rule), so that arena empties as a whole and is
 * reused without moving any body. */
struct perf_order {
    const struct perf_file *f;
    size_t max_bytes;
    perf_deliver_fn deliver;
    void *arg;
    struct queued *items;
    size_t nitems, items_cap;
    size_t nsorted;         /* items[0..nsorted) are in time order already */
    struct queued *merge_buf;
    size_t merge_cap;
    struct arena arenas[2];
    int current;
    size_t stable_bytes;    /* of the queued records not copied */
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

/* Puts the items in time order: those queued since the last sort are
 * sorted alone and merged with the ones that stayed, which are in order
 * already (most of a round's items are kept once, until the next). */
static void sort_items(struct perf_order *q)
{
    struct queued *it = q->items;
    size_t head = q->nsorted, n = q->nitems;
    qsort(it + head, n - head, sizeof(*it), by_time);
    q->nsorted = n;
    if (!head || head == n || by_time(&it[head - 1], &it[head]) <= 0)
        return;
    q->merge_buf = grow_array(q->merge_buf, &q->merge_cap, head, sizeof(*it));
    memcpy(q->merge_buf, it, head * sizeof(*it));
    size_t a = 0, b = head, out = 0;   /* out < b: the tail is read before it is written over */
    while (a < head && b < n)
        it[out++] = by_time(&q->merge_buf[a], &it[b]) <= 0 ? q->merge_buf[a++] : it[b++];
    memcpy(it + out, q->merge_buf + a, (head - a) * sizeof(*it));
}

static size_t queued_bytes(const struct perf_order *q)
{
    return q->arenas[0].used + q->arenas[1].used + q->stable_bytes;
}

static const uint8_t *body_of(const struct perf_order *q, const struct queued *it)
{
    return it->stable ? it->stable : q->arenas[it->arena].bytes + it->at;
}

/* Delivers the first n items (sorted) and keeps the rest. */
static void deliver_first(struct perf_order *q, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct queued *it = &q->items[i];
        struct perf_record r = {it->type, it->misc, body_of(q, it), it->len, it->offset};
        q->deliver(q->arg, &r);
        if (it->stable)
            q->stable_bytes -= it->len;
    }
    memmove(q->items, q->items + n, (q->nitems - n) * sizeof(*q->items));
    q->nitems -= n;
    q->nsorted -= n;
}

/* Moves the bodies of what stays into one arena, the current one. */
static void compact(struct perf_order *q)
{
    struct arena fresh = {0};
    fresh.bytes = grow_array(NULL, &fresh.cap, queued_bytes(q) - q->stable_bytes + 1, 1);
    for (size_t i = 0; i < q->nitems; i++) {
        struct queued *it = &q->items[i];
        if (it->stable)
            continue;
        memcpy(fresh.bytes + fresh.used, q->arenas[it->arena].bytes + it->at, it->len);
        it->at = fresh.used;
        it->arena = (uint8_t)q->current;
        fresh.used += it->len;
    }
    free(q->arenas[0].bytes);
    free(q->arenas[1].bytes);
    q->arenas[q->current] = fresh;
    q->arenas[!q->current] = (struct arena){0};
}

/* Delivers the queued items with time <= limit. */
static void deliver_until(struct perf_order *q, uint64_t limit)
{
    if (!q->nitems)
        return;
    sort_items(q);
    size_t n = 0;
    while (n < q->nitems && q->items[n].time <= limit)
        n++;
    if (n)
        deliver_first(q, n);
}

void perf_order_add(struct perf_order *q, const struct perf_record *r, bool stable)
{
    uint64_t time = perf_record_time(q->f, r);
    if (time == PERF_NO_TIME) {
        q->deliver(q->arg, r);
        return;
    }
    if (queued_bytes(q) + r->len > q->max_bytes && q->nitems) {
        sort_items(q);
        deliver_first(q, (q->nitems + 1) / 2);
        compact(q);
    }
    struct arena *a = &q->arenas[q->current];
    q->items = grow_array(q->items, &q->items_cap, q->nitems + 1, sizeof(*q->items));
    struct queued it = {time, q->seq++, r->offset, a->used, stable ? r->body : NULL, r->type,
                        (uint32_t)r->len, r->misc, (uint8_t)q->current};
    if (stable) {
        q->stable_bytes += r->len;
    } else {
        a->bytes = grow_array(a->bytes, &a->cap, a->used + r->len + 1, 1);
        memcpy(a->bytes + a->used, r->body, r->len);
        a->used += r->len;
    }
    q->items[q->nitems++] = it;
    if (time > q->max_time)
        q->max_time = time;
}

void perf_order_round(struct perf_order *q)
{
    deliver_until(q, q->next_flush);
    q->next_flush = q->max_time;
    bool only_current = true;   /* unless times ran backwards past a round */
    for (size_t i = 0; i < q->nitems && only_current; i++)
        only_current = q->items[i].stable || q->items[i].arena == q->current;
    if (!only_current)
        compact(q);
    q->current = !q->current;      /* the emptied arena takes the next round */
    q->arenas[q->current].used = 0;
}

uint64_t perf_order_oldest_stable(const struct perf_order *q)
{
    uint64_t oldest = UINT64_MAX;
    for (size_t i = 0; i < q->nitems; i++)
        if (q->items[i].stable && q->items[i].offset < oldest)
            oldest = q->items[i].offset;
    return oldest;
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
    free(q->merge_buf);
    free(q->arenas[0].bytes);
    free(q->arenas[1].bytes);
    free(q);
}
