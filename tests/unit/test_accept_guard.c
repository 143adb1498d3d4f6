// SPDX-License-Identifier: Apache-2.0
/* A listener out of descriptors pauses, counts the pause, and accepts
 * again once it has them. */
#include "check.h"

#include <arpa/inet.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../core/accept_guard.h"
#include "../../core/metrics.h"

static int accepted;

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *a, int len,
                      void *arg)
{
    (void)l, (void)a, (void)len, (void)arg;
    accepted++;
    close(fd);
}

/* The lowest descriptor free: every one below it is open. */
static int lowest_free_fd(void)
{
    int fd = dup(0);
    close(fd);
    return fd;
}

/* The pauses counted, as /metrics says them. */
static int pauses(void)
{
    char *text = profd_metrics_render();
    const char *at =
        strstr(text, "profd_server_accept_pauses{component=\"test\",address=\"here\"} ");
    int n = at ? atoi(strchr(at, '}') + 2) : -1;
    free(text);
    return n;
}

TEST(a_listener_out_of_descriptors_pauses_and_accepts_again)
{
    struct event_base *base = event_base_new();
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct evconnlistener *l = evconnlistener_new_bind(
        base, on_accept, NULL, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, -1,
        (struct sockaddr *)&sin, sizeof(sin));
    CHECK(l != NULL);
    struct profd_accept_guard *g = profd_accept_guard_new(l, base, "test", "here");
    socklen_t len = sizeof(sin);
    getsockname(evconnlistener_get_fd(l), (struct sockaddr *)&sin, &len);
    int clients[3];
    for (int i = 0; i < 3; i++) {
        clients[i] = socket(AF_INET, SOCK_STREAM, 0);
        CHECK_INT(connect(clients[i], (struct sockaddr *)&sin, sizeof(sin)), 0);
    }
    struct rlimit was, none;
    getrlimit(RLIMIT_NOFILE, &was);
    none = was;
    none.rlim_cur = (rlim_t)lowest_free_fd();   /* no descriptor left to accept into */
    CHECK_INT(setrlimit(RLIMIT_NOFILE, &none), 0);
    event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
    CHECK_INT(accepted, 0);
    CHECK_INT(pauses(), 1);
    event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);   /* paused: not woken again */
    CHECK_INT(pauses(), 1);
    CHECK_INT(setrlimit(RLIMIT_NOFILE, &was), 0);
    for (int i = 0; i < 50 && accepted < 3; i++)   /* resumed after 10 ms */
        event_base_loop(base, EVLOOP_ONCE);
    CHECK_INT(accepted, 3);
    CHECK_INT(pauses(), 1);
    for (int i = 0; i < 3; i++)
        close(clients[i]);
    profd_accept_guard_free(g);
    CHECK_INT(pauses(), -1);   /* its gauge gone with it */
    evconnlistener_free(l);
    event_base_free(base);
}

RUN_TESTS()
