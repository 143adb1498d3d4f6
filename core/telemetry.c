// SPDX-License-Identifier: Apache-2.0
#include "telemetry.h"

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "accept_guard.h"
#include "alloc.h"
#include "log.h"
#include "metrics.h"

struct profd_telemetry {
    struct evhttp *http;
    struct profd_accept_guard *accept_guard;
    const struct profd_telemetry_pages *pages;
};

static void reply(struct evhttp_request *req, int code, const char *type, const char *body)
{
    struct evbuffer *buf = evbuffer_new();
    evbuffer_add(buf, body, strlen(body));
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", type);
    evhttp_send_reply(req, code, code == 200 ? "OK" : "Not Found", buf);
    evbuffer_free(buf);
}

static void on_metrics(struct evhttp_request *req, void *arg)
{
    struct profd_telemetry *t = arg;
    char *body = profd_metrics_render();
    char *extra = t->pages->extra_metrics(t->pages->arg);
    char *all = profd_xasprintf("%s%s", body, extra ? extra : "");
    reply(req, 200, "text/plain; version=0.0.4; charset=utf-8", all);
    free(all);
    free(extra);
    free(body);
}

static void on_healthz(struct evhttp_request *req, void *arg)
{
    (void)arg;
    reply(req, 200, "text/plain", "ok\n");
}

static void on_status(struct evhttp_request *req, void *arg)
{
    struct profd_telemetry *t = arg;
    char *page = t->pages->status(t->pages->arg, true);
    reply(req, 200, "text/html; charset=utf-8", page);
    free(page);
}

static void on_status_json(struct evhttp_request *req, void *arg)
{
    struct profd_telemetry *t = arg;
    char *page = t->pages->status(t->pages->arg, false);
    reply(req, 200, "application/json", page);
    free(page);
}

static void on_other(struct evhttp_request *req, void *arg)
{
    (void)arg;
    reply(req, 404, "text/plain", "not found: try /metrics, /healthz, /status or /status.json\n");
}

struct profd_telemetry *profd_telemetry_start(struct event_base *base, const char *address,
                                              const struct profd_telemetry_pages *pages)
{
    const char *colon = strrchr(address, ':');
    char *end = NULL;
    long port = colon ? strtol(colon + 1, &end, 10) : -1;
    if (!colon || !end || *end || port < 0 || port > 65535) {
        profd_log(PROFD_LOG_ERROR, "telemetry", "address '%s' is not host:port", address);
        return NULL;
    }
    char *host = profd_xstrndup(address, (size_t)(colon - address));
    if (host[0] == '[') {   /* [::1]:8888 */
        memmove(host, host + 1, strlen(host));
        host[strcspn(host, "]")] = '\0';
    }
    struct profd_telemetry *t = profd_xcalloc(1, sizeof(*t));
    t->pages = pages;
    t->http = evhttp_new(base);
    evhttp_set_cb(t->http, "/metrics", on_metrics, t);
    evhttp_set_cb(t->http, "/healthz", on_healthz, t);
    evhttp_set_cb(t->http, "/status", on_status, t);
    evhttp_set_cb(t->http, "/status.json", on_status_json, t);
    evhttp_set_gencb(t->http, on_other, t);
    struct evhttp_bound_socket *sock =
        evhttp_bind_socket_with_handle(t->http, host[0] ? host : "0.0.0.0", (uint16_t)port);
    free(host);
    if (!sock) {
        profd_log(PROFD_LOG_ERROR, "telemetry", "cannot listen on %s", address);
        profd_telemetry_stop(t);
        return NULL;
    }
    /* Log the port actually bound, so "host:0" is usable by tests and scripts. */
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    char name[INET6_ADDRSTRLEN] = "?";
    int bound = -1;
    if (getsockname(evhttp_bound_socket_get_fd(sock), (struct sockaddr *)&ss, &len) == 0) {
        if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
            inet_ntop(AF_INET6, &a6->sin6_addr, name, sizeof(name));
            bound = ntohs(a6->sin6_port);
        } else {
            struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
            inet_ntop(AF_INET, &a4->sin_addr, name, sizeof(name));
            bound = ntohs(a4->sin_port);
        }
    }
    profd_log(PROFD_LOG_INFO, "telemetry", "serving /metrics, /healthz and /status on %s:%d", name,
              bound);
    char at[INET6_ADDRSTRLEN + 16];
    snprintf(at, sizeof(at), "%s:%d", name, bound);
    t->accept_guard = profd_accept_guard_new(evhttp_bound_socket_get_listener(sock), base,
                                             "telemetry", at);
    return t;
}

void profd_telemetry_stop(struct profd_telemetry *t)
{
    if (!t)
        return;
    profd_accept_guard_free(t->accept_guard);
    evhttp_free(t->http);
    free(t);
}
