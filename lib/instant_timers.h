// SPDX-License-Identifier: Apache-2.0
/* Many timers that fall due at few distinct instants (thousands of scrape
 * pairs on a grid of start times): one libevent timer per instant, its
 * timers in a list, so the event loop's heap holds the instants and a timer
 * costs a list link rather than a heap entry of its own. Loop thread only. */
#ifndef PROFD_LIB_INSTANT_TIMERS_H
#define PROFD_LIB_INSTANT_TIMERS_H

#include <event2/event.h>
#include <stdbool.h>
#include <stdint.h>

struct instant;

/* A timer, kept inside what it times (zeroed is disarmed). */
struct instant_timer {
    struct instant *at;                 /* NULL when disarmed */
    struct instant_timer *prev, *next;  /* among the timers of its instant */
};

/* Called for each timer of an instant that fell due, disarmed before the
 * call (so it may arm itself again, disarm or arm any other timer). */
typedef void instant_timer_fn(struct instant_timer *t, void *arg);

struct instant_timers;

/* An empty set of timers on base, each calling fire(timer, arg) when due.
 * Aborts when memory runs out. */
struct instant_timers *instant_timers_new(struct event_base *base, instant_timer_fn *fire,
                                          void *arg);

/* Arms t (disarmed first if it was armed) to fall due at due_ns
 * (CLOCK_REALTIME nanoseconds; one in the past falls due at once). Timers
 * armed at the same due_ns share an instant, and fall due in one wake-up of
 * the loop, most recently armed first. */
void instant_timer_arm(struct instant_timers *ts, struct instant_timer *t, int64_t due_ns);

/* Disarms t; nothing when it is not armed. */
void instant_timer_disarm(struct instant_timer *t);


/* Instants with armed timers, waiting to fall due (not one firing now),
 * for tests. */
size_t instant_timers_instants(const struct instant_timers *ts);

/* Frees the set (accepts NULL). Its timers must all be disarmed. */
void instant_timers_free(struct instant_timers *ts);

#endif
