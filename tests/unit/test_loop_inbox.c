// SPDX-License-Identifier: Apache-2.0
/* A loop's inbox (core/loop_inbox.c): items posted from several threads
 * reach the loop's thread, each poster's in the order posted; a burst
 * posted before the loop runs is taken at one go; a loop that is not
 * running can wait for an item. */
#include <event2/event.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "../../core/loop_inbox.h"
#include "check.h"

#define POSTERS 4
#define EACH 500

struct item {
    int poster, seq;
    struct profd_inbox_link link;
};

/* What the loop's thread saw. */
struct seen {
    pthread_t loop_thread;
    int takes, items, last_seq[POSTERS];
    bool in_order, on_loop_thread;
};

static void take(void *arg, struct profd_inbox_link *first)
{
    struct seen *s = arg;
    s->takes++;
    for (; first; first = first->next) {
        struct item *it = (struct item *)((char *)first - offsetof(struct item, link));
        s->in_order &= it->seq == s->last_seq[it->poster] + 1;
        s->last_seq[it->poster] = it->seq;
        s->on_loop_thread &= pthread_equal(pthread_self(), s->loop_thread);
        s->items++;
    }
}

static struct seen fresh_seen(void)
{
    struct seen s = {.loop_thread = pthread_self(), .in_order = true, .on_loop_thread = true};
    for (int i = 0; i < POSTERS; i++)
        s.last_seq[i] = -1;
    return s;
}

struct poster {
    struct profd_loop_inbox *inbox;
    struct item items[EACH];
};

static void *post_all(void *arg)
{
    struct poster *p = arg;
    for (int i = 0; i < EACH; i++)
        profd_loop_inbox_post(p->inbox, &p->items[i].link);
    return NULL;
}

TEST(a_burst_posted_before_the_loop_runs_is_taken_at_one_go)
{
    struct event_base *base = event_base_new();
    struct seen s = fresh_seen();
    struct profd_loop_inbox *in = profd_loop_inbox_new(base, take, &s);
    CHECK(in != NULL);
    struct item items[3] = {{0, 0, {NULL}}, {0, 1, {NULL}}, {0, 2, {NULL}}};
    for (int i = 0; i < 3; i++)
        profd_loop_inbox_post(in, &items[i].link);
    event_base_loop(base, EVLOOP_ONCE);
    CHECK_INT(s.takes, 1);
    CHECK_INT(s.items, 3);
    CHECK(s.in_order);
    profd_loop_inbox_take(in);   /* nothing left */
    CHECK_INT(s.takes, 1);
    profd_loop_inbox_free(in);
    event_base_free(base);
}

TEST(items_from_many_threads_reach_the_loop_each_posters_in_order)
{
    struct event_base *base = event_base_new();
    struct seen s = fresh_seen();
    struct profd_loop_inbox *in = profd_loop_inbox_new(base, take, &s);
    static struct poster posters[POSTERS];
    pthread_t threads[POSTERS];
    for (int t = 0; t < POSTERS; t++) {
        posters[t].inbox = in;
        for (int i = 0; i < EACH; i++)
            posters[t].items[i] = (struct item){t, i, {NULL}};
        CHECK_INT(pthread_create(&threads[t], NULL, post_all, &posters[t]), 0);
    }
    while (s.items < POSTERS * EACH)
        event_base_loop(base, EVLOOP_ONCE);
    for (int t = 0; t < POSTERS; t++)
        pthread_join(threads[t], NULL);
    CHECK_INT(s.items, POSTERS * EACH);
    CHECK(s.in_order);
    CHECK(s.on_loop_thread);
    profd_loop_inbox_free(in);
    event_base_free(base);
}

TEST(a_loop_not_running_waits_for_an_item)
{
    struct event_base *base = event_base_new();
    struct seen s = fresh_seen();
    struct profd_loop_inbox *in = profd_loop_inbox_new(base, take, &s);
    static struct poster one;
    one.inbox = in;
    for (int i = 0; i < EACH; i++)
        one.items[i] = (struct item){0, i, {NULL}};
    pthread_t t;
    CHECK_INT(pthread_create(&t, NULL, post_all, &one), 0);
    while (s.items < EACH) {
        profd_loop_inbox_wait(in);
        profd_loop_inbox_take(in);
    }
    pthread_join(t, NULL);
    CHECK_INT(s.items, EACH);
    CHECK(s.in_order);
    profd_loop_inbox_free(in);
    event_base_free(base);
}

RUN_TESTS()
