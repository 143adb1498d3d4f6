// SPDX-License-Identifier: Apache-2.0
#include "accept_guard.h"

#include <errno.h>
#include <event2/event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/clock.h"
#include "alloc.h"
#include "log.h"
#include "metrics.h"

#define FIRST_PAUSE_MS 10
#define LONGEST_PAUSE_MS 1000
#define PAUSES_GAUGE "profd_server_accept_pauses"

struct profd_accept_guard {
    struct evconnlistener *listener;
    struct event *resume;
    char *component, *address, *labels;
    int pause_ms;             /* the last pause */
    int64_t resumed_ns;       /* when accepting last began again */
    atomic_size_t pauses;
    struct profd_log_limit log;
    struct profd_accept_guard *next;
};

/* Every guard, found by its listener: the listener's error callback is
 * given the listener and the argument of its accept callback, which is
 * not the guard's to choose (an evhttp's is its own). */
static pthread_mutex_t guards_lock = PTHREAD_MUTEX_INITIALIZER;
static struct profd_accept_guard *guards;

static struct profd_accept_guard *guard_of(const struct evconnlistener *l)
{
    pthread_mutex_lock(&guards_lock);
    struct profd_accept_guard *g = guards;
    while (g && g->listener != l)
        g = g->next;
    pthread_mutex_unlock(&guards_lock);
    return g;
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct profd_accept_guard *g = arg;
    g->resumed_ns = monotonic_ns();
    evconnlistener_enable(g->listener);
}

/* The next pause: the first again when accepting went on long enough
 * since the last one ended, else twice the last, at most the longest. */
static int next_pause_ms(const struct profd_accept_guard *g)
{
    if (!g->pause_ms || monotonic_ns() - g->resumed_ns > 2000000000LL)
        return FIRST_PAUSE_MS;
    return g->pause_ms * 2 > LONGEST_PAUSE_MS ? LONGEST_PAUSE_MS : g->pause_ms * 2;
}

static void on_error(struct evconnlistener *l, void *arg)
{
    (void)arg;
    int err = EVUTIL_SOCKET_ERROR();
    struct profd_accept_guard *g = guard_of(l);
    if (!g)
        return;
    bool exhausted = err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
    char pause[64] = "";
    if (exhausted) {
        g->pause_ms = next_pause_ms(g);
        evconnlistener_disable(l);
        struct timeval tv = {g->pause_ms / 1000, (g->pause_ms % 1000) * 1000};
        event_add(g->resume, &tv);
        atomic_fetch_add(&g->pauses, 1);
        snprintf(pause, sizeof(pause), "; not accepting for %d ms", g->pause_ms);
    }
    profd_log_limited(&g->log, PROFD_LOG_WARN, g->component, "failed",
                      "cannot accept connections on %s: %s%s", g->address, strerror(err), pause);
}

struct profd_accept_guard *profd_accept_guard_new(struct evconnlistener *l,
                                                  struct event_base *base,
                                                  const char *component, const char *address)
{
    struct profd_accept_guard *g = profd_xcalloc(1, sizeof(*g));
    g->listener = l;
    g->resume = evtimer_new(base, on_resume, g);
    g->component = profd_xstrdup(component);
    g->labels = profd_xasprintf("address=\"%s\"", address);
    g->address = profd_xstrdup(address);
    g->log.burst = 1;
    profd_metrics_gauge_watch(PAUSES_GAUGE, "times a server stopped accepting connections for a "
                              "while, out of descriptors or memory", component, g->labels,
                              &g->pauses);
    pthread_mutex_lock(&guards_lock);
    g->next = guards;
    guards = g;
    pthread_mutex_unlock(&guards_lock);
    evconnlistener_set_error_cb(l, on_error);
    return g;
}

void profd_accept_guard_free(struct profd_accept_guard *g)
{
    if (!g)
        return;
    pthread_mutex_lock(&guards_lock);
    for (struct profd_accept_guard **at = &guards; *at; at = &(*at)->next)
        if (*at == g) {
            *at = g->next;
            break;
        }
    pthread_mutex_unlock(&guards_lock);
    evconnlistener_set_error_cb(g->listener, NULL);
    profd_metrics_gauge_del(PAUSES_GAUGE, g->component, g->labels);
    event_free(g->resume);
    free(g->component);
    free(g->address);
    free(g->labels);
    free(g);
}
