// SPDX-License-Identifier: Apache-2.0
/* Timers sharing instants: one wake-up per instant, timers disarmed before
 * they fire, re-armed or disarmed from a callback, instants given back once
 * their last timer leaves. Compiled in from the library sources. */
#include "check.h"

#include <time.h>

#include "../../lib/grow.c"
#include "../../lib/instant_timers.c"
#include "../../lib/key_map.c"

/* A timer and what a test asks its callback to do. */
struct probe {
    struct instant_timer t;   /* first: the callback casts back */
    int fired;
    int order;                /* when it fired, among all probes */
    int64_t rearm_ns;         /* armed again at this due time, when not 0 */
    struct probe *disarm;     /* disarmed by this one's call, when not NULL */
};

struct world {
    struct event_base *base;
    struct instant_timers *ts;
    int calls;
};

static void on_fire(struct instant_timer *t, void *arg)
{
    struct world *w = arg;
    struct probe *p = (struct probe *)t;
    CHECK(!t->at);   /* disarmed before the call */
    p->fired++;
    p->order = ++w->calls;
    if (p->disarm)
        instant_timer_disarm(&p->disarm->t);
    if (p->rearm_ns) {
        int64_t at = p->rearm_ns;
        p->rearm_ns = 0;
        instant_timer_arm(w->ts, t, at);
    }
}

static int64_t in_ms(int ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + (int64_t)ms * 1000000;
}

static void world_open(struct world *w)
{
    *w = (struct world){.base = event_base_new()};
    w->ts = instant_timers_new(w->base, on_fire, w);
}

/* Opens w with a and b armed at one due time. */
static void open_with_pair(struct world *w, struct probe *a, struct probe *b, int64_t due_ns)
{
    world_open(w);
    instant_timer_arm(w->ts, &a->t, due_ns);
    instant_timer_arm(w->ts, &b->t, due_ns);
}

static void world_close(struct world *w)
{
    instant_timers_free(w->ts);
    event_base_free(w->base);
}

TEST(timers_due_together_share_one_instant_and_fire_in_one_wake_up)
{
    struct world w;
    world_open(&w);
    struct probe p[5] = {0};
    int64_t due = in_ms(5);
    for (int i = 0; i < 5; i++)
        instant_timer_arm(w.ts, &p[i].t, due);
    CHECK_INT(instant_timers_instants(w.ts), 1);
    event_base_loop(w.base, EVLOOP_ONCE);   /* the one wake-up */
    for (int i = 0; i < 5; i++)
        CHECK_INT(p[i].fired, 1);
    CHECK_INT(p[4].order, 1);   /* the last armed first */
    CHECK_INT(instant_timers_instants(w.ts), 0);
    world_close(&w);
}

TEST(instants_fire_in_time_order_and_a_past_one_at_once)
{
    struct world w;
    world_open(&w);
    struct probe late = {0}, early = {0}, past = {0};
    instant_timer_arm(w.ts, &late.t, in_ms(20));
    instant_timer_arm(w.ts, &early.t, in_ms(5));
    instant_timer_arm(w.ts, &past.t, in_ms(-1000));
    CHECK_INT(instant_timers_instants(w.ts), 3);
    event_base_dispatch(w.base);   /* returns once no timer is left */
    CHECK_INT(past.order, 1);
    CHECK_INT(early.order, 2);
    CHECK_INT(late.order, 3);
    world_close(&w);
}

TEST(a_disarmed_timer_never_fires_and_an_emptied_instant_goes)
{
    struct world w;
    struct probe a = {0}, b = {0};
    open_with_pair(&w, &a, &b, in_ms(5));
    instant_timer_disarm(&a.t);
    instant_timer_disarm(&a.t);   /* twice: nothing */
    CHECK_INT(instant_timers_instants(w.ts), 1);
    instant_timer_disarm(&b.t);
    CHECK_INT(instant_timers_instants(w.ts), 0);
    event_base_dispatch(w.base);   /* nothing armed: returns at once */
    CHECK_INT(a.fired + b.fired, 0);
    /* the instant is reused for the next due time, and fires then */
    instant_timer_arm(w.ts, &a.t, in_ms(2));
    event_base_dispatch(w.base);
    CHECK_INT(a.fired, 1);
    world_close(&w);
}

TEST(a_callback_may_rearm_itself_even_at_its_own_instant_and_disarm_a_sibling)
{
    struct world w;
    world_open(&w);
    struct probe a = {0}, b = {0}, c = {0};
    int64_t due = in_ms(3);
    instant_timer_arm(w.ts, &c.t, due);
    instant_timer_arm(w.ts, &b.t, due);
    instant_timer_arm(w.ts, &a.t, due);   /* fires first */
    a.disarm = &c;                         /* c, of the same instant, is not called */
    a.rearm_ns = due;                      /* the instant firing now: a new one, later */
    b.rearm_ns = in_ms(8);
    event_base_loop(w.base, EVLOOP_ONCE);
    CHECK_INT(a.fired, 1);
    CHECK_INT(b.fired, 1);
    CHECK_INT(c.fired, 0);
    CHECK_INT(instant_timers_instants(w.ts), 2);   /* a's and b's next */
    event_base_dispatch(w.base);
    CHECK_INT(a.fired, 2);
    CHECK_INT(b.fired, 2);
    CHECK_INT(c.fired, 0);
    CHECK_INT(instant_timers_instants(w.ts), 0);
    world_close(&w);
}

TEST(arming_again_moves_a_timer_to_its_new_instant)
{
    struct world w;
    struct probe a = {0}, b = {0};
    open_with_pair(&w, &a, &b, in_ms(3));
    instant_timer_arm(w.ts, &a.t, in_ms(10));   /* a leaves b's instant */
    CHECK_INT(instant_timers_instants(w.ts), 2);
    event_base_dispatch(w.base);
    CHECK_INT(b.fired, 1);
    CHECK_INT(a.fired, 1);
    CHECK_INT(b.order, 1);   /* at its old instant a would have fired first */
    CHECK_INT(a.order, 2);
    world_close(&w);
}

RUN_TESTS()
