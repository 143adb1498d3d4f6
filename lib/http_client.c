// SPDX-License-Identifier: Apache-2.0
#include "http_client.h"

#include <event2/event.h>
#include <stdlib.h>

struct http_client {
    CURLM *multi;
    struct event_base *base;
    struct event *timer;
    http_done_fn done;
};

struct sock {
    struct event *ev;
};

static void finish_done(struct http_client *c)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(c->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        CURL *easy = msg->easy_handle;
        CURLcode rc = msg->data.result;
        void *arg = NULL;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&arg);
        curl_multi_remove_handle(c->multi, easy);
        c->done(arg, easy, rc);
    }
}

static void on_socket_event(evutil_socket_t fd, short kind, void *arg)
{
    struct http_client *c = arg;
    int action = (kind & EV_READ ? CURL_CSELECT_IN : 0) | (kind & EV_WRITE ? CURL_CSELECT_OUT : 0);
    int running;
    curl_multi_socket_action(c->multi, fd, action, &running);
    finish_done(c);
}

static void on_timeout(evutil_socket_t fd, short kind, void *arg)
{
    (void)fd;
    (void)kind;
    struct http_client *c = arg;
    int running;
    curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    finish_done(c);
}

static int socket_cb(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
    (void)easy;
    struct http_client *c = userp;
    struct sock *sk = socketp;
    if (what == CURL_POLL_REMOVE) {
        if (sk) {
            event_free(sk->ev);
            free(sk);
            curl_multi_assign(c->multi, s, NULL);
        }
        return 0;
    }
    short kind = (short)((what & CURL_POLL_IN ? EV_READ : 0) |
                         (what & CURL_POLL_OUT ? EV_WRITE : 0) | EV_PERSIST);
    if (!sk) {
        sk = calloc(1, sizeof(*sk));
        if (!sk)
            return -1;
        sk->ev = event_new(c->base, s, kind, on_socket_event, c);
        curl_multi_assign(c->multi, s, sk);
    } else if (event_get_events(sk->ev) != kind) {   /* reuse the event, new interest */
        event_del(sk->ev);
        event_assign(sk->ev, c->base, s, kind, on_socket_event, c);
    } else {
        return 0;   /* already watching for exactly this */
    }
    event_add(sk->ev, NULL);
    return 0;
}

static int timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
    (void)multi;
    struct http_client *c = userp;
    if (timeout_ms < 0) {
        evtimer_del(c->timer);
        return 0;
    }
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    evtimer_add(c->timer, &tv);
    return 0;
}

struct http_client *http_client_create(struct event_base *base, http_done_fn done)
{
    struct http_client *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->base = base;
    c->done = done;
    c->multi = curl_multi_init();
    c->timer = evtimer_new(base, on_timeout, c);
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
    curl_multi_setopt(c->multi, CURLMOPT_MAX_HOST_CONNECTIONS, 4L);
    /* Idle keep-alive connections kept for reuse: bounded, so a thousand
     * targets do not hold a thousand sockets between scrapes. */
    curl_multi_setopt(c->multi, CURLMOPT_MAXCONNECTS, 4096L);
    return c;
}

int http_client_add(struct http_client *c, CURL *easy)
{
    if (curl_multi_add_handle(c->multi, easy) != CURLM_OK)
        return -1;
    /* Start the transfer now rather than on the zero timeout curl just
     * asked for: one trip through the event loop less per scrape. */
    on_timeout(-1, 0, c);
    return 0;
}

void http_client_cancel(struct http_client *c, CURL *easy)
{
    curl_multi_remove_handle(c->multi, easy);
}

void http_client_destroy(struct http_client *c)
{
    if (!c)
        return;
    curl_multi_cleanup(c->multi);   /* closes connections: socket_cb frees their events */
    event_free(c->timer);
    free(c);
}
