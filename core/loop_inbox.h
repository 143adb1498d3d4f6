// SPDX-License-Identifier: Apache-2.0
/*
 * What other threads hand one event loop: items posted from any thread,
 * taken on the loop's thread in the order they were posted. Posting into
 * an empty inbox wakes the loop (an eventfd it watches, a counter that
 * never fills); the items posted before it takes them ride on that one
 * wake-up.
 */
#ifndef PROFD_LOOP_INBOX_H
#define PROFD_LOOP_INBOX_H

struct event_base;

/* The link of an item, embedded in the poster's own struct. */
struct profd_inbox_link {
    struct profd_inbox_link *next;
};

/* Called on the loop's thread with the items posted so far (first, then
 * each one's next, NULL-ended), the inbox empty again. */
typedef void (*profd_inbox_take_fn)(void *arg, struct profd_inbox_link *first);

struct profd_loop_inbox;

/* An inbox of base's loop whose items go to take(arg, ...); NULL when the
 * eventfd or its event cannot be made. */
struct profd_loop_inbox *profd_loop_inbox_new(struct event_base *base, profd_inbox_take_fn take,
                                              void *arg);

/* Posts link's item (any thread); the inbox owns it until it is taken. */
void profd_loop_inbox_post(struct profd_loop_inbox *in, struct profd_inbox_link *link);

/* Hands the items posted so far, if any, to take, here and now (on the
 * loop's thread, or with the loop not running). */
void profd_loop_inbox_take(struct profd_loop_inbox *in);

/* Blocks until an item was posted since the inbox was last woken or
 * waited on (the loop not running). */
void profd_loop_inbox_wait(struct profd_loop_inbox *in);

/* Frees in; items still in it are not taken. Accepts NULL. */
void profd_loop_inbox_free(struct profd_loop_inbox *in);

#endif
