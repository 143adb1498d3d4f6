// SPDX-License-Identifier: Apache-2.0
#include "instant_timers.h"

#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "grow.h"
#include "key_map.h"

/* An instant some timers fall due at, with the libevent timer that wakes
 * the loop then. Instants are kept for reuse once their timers fired. */
struct instant {
    struct instant_timers *ts;
    struct event *wake;
    int64_t due_ns;
    uint32_t index;                 /* in ts->all */
    struct instant_timer *first;    /* its armed timers */
    bool firing;                    /* its timers are being called */
    struct instant *next_spare;
};

struct instant_timers {
    struct event_base *base;
    instant_timer_fn *fire;
    void *arg;
    struct key_map by_due;          /* due_ns -> index in all, of instants with timers */
    struct instant **all;           /* every instant made, by index */
    size_t nall, cap;
    struct instant *spare;          /* instants with no timer, for reuse */
};

static void on_wake(evutil_socket_t fd, short what, void *arg);

/* An instant for due_ns with no timer yet, its wake-up set, in by_due. */
static struct instant *instant_open(struct instant_timers *ts, int64_t due_ns)
{
    struct instant *in = ts->spare;
    if (in) {
        ts->spare = in->next_spare;
    } else {
        in = calloc(1, sizeof(*in));
        if (!in)
            abort();
        in->ts = ts;
        in->wake = evtimer_new(ts->base, on_wake, in);
        if (!in->wake)
            abort();
        ts->all = grow_array(ts->all, &ts->cap, ts->nall + 1, sizeof(*ts->all));
        in->index = (uint32_t)ts->nall;
        ts->all[ts->nall++] = in;
    }
    in->due_ns = due_ns;
    in->first = NULL;
    key_map_put(&ts->by_due, (uint64_t)due_ns, in->index);
    int64_t delay = due_ns - realtime_ns();
    if (delay < 0)
        delay = 0;
    struct timeval tv = {delay / 1000000000, (delay % 1000000000) / 1000};
    evtimer_add(in->wake, &tv);
    return in;
}

/* Puts an instant that has no timer left (and is not firing) aside. */
static void instant_close(struct instant *in)
{
    struct instant_timers *ts = in->ts;
    evtimer_del(in->wake);
    if (!in->firing)   /* a firing instant left by_due before its timers were called */
        key_map_remove(&ts->by_due, (uint64_t)in->due_ns);
    in->firing = false;
    in->next_spare = ts->spare;
    ts->spare = in;
}

static void unlink_timer(struct instant_timer *t)
{
    struct instant *in = t->at;
    if (t->prev)
        t->prev->next = t->next;
    else
        in->first = t->next;
    if (t->next)
        t->next->prev = t->prev;
    t->at = NULL;
    t->prev = t->next = NULL;
}

/* Calls each timer of the instant, taking them one at a time from its
 * list, so one disarmed by another's call is not called. */
static void on_wake(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct instant *in = arg;
    struct instant_timers *ts = in->ts;
    key_map_remove(&ts->by_due, (uint64_t)in->due_ns);   /* timers armed now get a new one */
    in->firing = true;
    struct instant_timer *t;
    while ((t = in->first)) {
        unlink_timer(t);
        ts->fire(t, ts->arg);
    }
    instant_close(in);
}

struct instant_timers *instant_timers_new(struct event_base *base, instant_timer_fn *fire,
                                          void *arg)
{
    struct instant_timers *ts = calloc(1, sizeof(*ts));
    if (!ts)
        abort();
    ts->base = base;
    ts->fire = fire;
    ts->arg = arg;
    return ts;
}

void instant_timer_arm(struct instant_timers *ts, struct instant_timer *t, int64_t due_ns)
{
    instant_timer_disarm(t);
    uint32_t index;
    struct instant *in = key_map_get(&ts->by_due, (uint64_t)due_ns, &index)
                             ? ts->all[index]
                             : instant_open(ts, due_ns);
    t->at = in;
    t->prev = NULL;
    t->next = in->first;
    if (in->first)
        in->first->prev = t;
    in->first = t;
}

void instant_timer_disarm(struct instant_timer *t)
{
    struct instant *in = t->at;
    if (!in)
        return;
    unlink_timer(t);
    if (!in->first && !in->firing)
        instant_close(in);
}

size_t instant_timers_instants(const struct instant_timers *ts)
{
    return ts->by_due.n;
}

void instant_timers_free(struct instant_timers *ts)
{
    if (!ts)
        return;
    for (size_t i = 0; i < ts->nall; i++) {
        event_free(ts->all[i]->wake);
        free(ts->all[i]);
    }
    free(ts->all);
    key_map_free(&ts->by_due);
    free(ts);
}
