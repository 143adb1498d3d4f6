// SPDX-License-Identifier: Apache-2.0
#include "rpc_server.h"

#include <event2/buffer.h>
#include <event2/listener.h>
#include <arpa/inet.h>
#include <limits.h>
#include <stdint.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/cpus.h"
#include "accept_guard.h"
#include "alloc.h"
#include "compression.h"
#include "graph.h"
#include "log.h"
#include "metrics.h"
#include "serve_loops.h"

/* Splits host:port, [v6]:port or :port; host "" means every address. */
static int split_endpoint(const char *endpoint, char *host, size_t hostlen, int *port)
{
    const char *colon = strrchr(endpoint, ':');
    if (!colon || !colon[1])
        return -1;
    const char *h = endpoint;
    size_t n = (size_t)(colon - endpoint);
    if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
        h++;
        n -= 2;
    }
    if (n >= hostlen)
        return -1;
    memcpy(host, h, n);
    host[n] = '\0';
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (*end || p < 0 || p > 65535)
        return -1;
    *port = (int)p;
    return 0;
}

static int tls_setup(struct profd_server *s, char *err, size_t errlen)
{
    const struct profd_server_options *o = &s->o;
    s->tls_ops = profd_tls_server(err, errlen);
    if (s->tls_ops)
        s->tls = s->tls_ops->context_new(o->tls_cert_file, o->tls_key_file, o->tls_client_ca_file,
                                         o->protocol == PROFD_RPC_HTTP, err, errlen);
    return s->tls ? 0 : -1;
}

/* Takes over an accepted connection on s's own loop. */
static void adopt(struct profd_server *s, evutil_socket_t fd, const struct sockaddr *addr)
{
    if (s->o.protocol == PROFD_RPC_GRPC)
        profd_h2_adopt(s, fd, addr);
    else
        profd_http1_adopt(s, fd, addr);
}

/* A connection on its way to a part's loop. */
struct handed {
    struct profd_server *part;
    evutil_socket_t fd;
    struct sockaddr_storage addr;
};

static void adopt_handed(void *arg)
{
    struct handed *h = arg;
    adopt(h->part, h->fd, (const struct sockaddr *)&h->addr);
    free(h);
}

/* The server s is a part of (serving on another loop), or s itself. */
static struct profd_server *root_of(struct profd_server *s)
{
    return s->root ? s->root : s;
}

/* Loop i of s's: 0 the server's own, then its parts'. */
static struct profd_server *loop_server(struct profd_server *s, unsigned i)
{
    return i ? s->parts[i - 1] : s;
}

/* The loop a new connection goes to: the one with the fewest open, the
 * first of those from s's turn on (which moves on one each time), so
 * that loops alike in load take connections in turn. */
static unsigned least_busy(struct profd_server *s)
{
    unsigned n = s->nparts + 1, start = s->turn++ % n, best = start;
    size_t least = SIZE_MAX;
    for (unsigned k = 0; k < n; k++) {
        unsigned i = (start + k) % n;
        size_t open = atomic_load_explicit(&loop_server(s, i)->connections,
                                             memory_order_relaxed);
        if (open < least) {
            least = open;
            best = i;
        }
    }
    return best;
}

/* The main loop accepts; the connection goes to the server's loop or a
 * part's, the one with the fewest connections open. */
static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *addr,
                      int addrlen, void *arg)
{
    (void)l;
    struct profd_server *s = arg;
    unsigned i = least_busy(s);
    atomic_fetch_add_explicit(&loop_server(s, i)->connections, 1, memory_order_relaxed);
    if (i == 0)
        return adopt(s, fd, addr);
    struct handed *h = profd_xcalloc(1, sizeof(*h));
    h->part = s->parts[i - 1];
    h->fd = fd;
    memcpy(&h->addr, addr, (size_t)addrlen < sizeof(h->addr) ? (size_t)addrlen : sizeof(h->addr));
    profd_serve_loops_post(s->loops, i - 1, adopt_handed, h);
}

void profd_server_connection_ended(struct profd_server *s)
{
    atomic_fetch_sub_explicit(&s->connections, 1, memory_order_relaxed);
}

#define CONNECTIONS_GAUGE "profd_server_connections"
#define BODIES_GAUGE "profd_server_request_bytes_in_flight"

/* The labels of s's gauges: its address, and its loop i's number when
 * i >= 0. */
static void gauge_labels(const struct profd_server *s, int i, char *out, size_t outlen)
{
    if (i < 0)
        snprintf(out, outlen, "address=\"%s\"", s->address);
    else
        snprintf(out, outlen, "address=\"%s\",loop=\"%d\"", s->address, i);
}

/* Puts on /metrics (watch), or takes off, each loop's count of open
 * connections and the bytes of bodies the server holds, read when the
 * page is rendered: taken off before the counts they read are gone (none,
 * for a server that did not start: taking them off is then a no-op). */
static void gauges(struct profd_server *s, bool watch)
{
    char labels[160];
    gauge_labels(s, -1, labels, sizeof(labels));
    if (watch)
        profd_metrics_gauge_watch(BODIES_GAUGE, "bytes of request bodies a server holds, those "
                                  "counted against its max_request_bytes_in_flight", s->self->id,
                                  labels, &s->bodies.held);
    else
        profd_metrics_gauge_del(BODIES_GAUGE, s->self->id, labels);
    for (unsigned i = 0; i <= s->nparts; i++) {
        gauge_labels(s, (int)i, labels, sizeof(labels));
        if (watch)
            profd_metrics_gauge_watch(CONNECTIONS_GAUGE, "connections open on each of a "
                                      "server's event loops", s->self->id, labels,
                                      &loop_server(s, i)->connections);
        else
            profd_metrics_gauge_del(CONNECTIONS_GAUGE, s->self->id, labels);
    }
}

/* Where a part's requests on workers are answered: made on its loop's
 * thread, which alone may add events to its base. */
static void part_returns_new(void *arg)
{
    struct profd_server *p = arg;
    p->returns = profd_work_returns_new(p->base);
}

/* The server's workers, one per CPU, at most 8; NULL when none can be. */
static struct profd_work_pool *workers_new(struct profd_server *s)
{
    unsigned cpus = cpus_usable();
    return profd_work_pool_new(s->base, cpus > 8 ? 8 : cpus);
}

/* s's parts, one on each of the daemon's other loops, when it has any
 * and their threads run. */
static void parts_start(struct profd_server *s)
{
    struct profd_serve_loops *loops = s->self->graph->serve_loops;
    unsigned n = profd_serve_loops_count(loops);
    if (!n || !profd_serve_loops_base(loops, 0))
        return;
    s->parts = profd_xcalloc(n, sizeof(*s->parts));
    for (unsigned i = 0; i < n; i++) {
        struct profd_server *p = profd_xcalloc(1, sizeof(*p));
        p->self = s->self;
        p->base = profd_serve_loops_base(loops, i);
        p->o = s->o;
        memcpy(p->address, s->address, sizeof(p->address));
        p->fn = s->fn;
        p->arg = s->arg;
        p->tls = s->tls;
        p->tls_ops = s->tls_ops;
        p->root = s;
        s->parts[i] = p;
        profd_serve_loops_call(loops, i, part_returns_new, p);
    }
    s->loops = loops;
    s->nparts = n;
    s->workers = workers_new(s);   /* the parts' threads may ask for it from now on */
}

/* Closes a part's connections, once its requests on workers are
 * answered, and frees it (on its loop's thread). */
static void part_stop(void *arg)
{
    struct profd_server *p = arg;
    profd_work_returns_free(p->returns);
    profd_http1_close_all(p);
    profd_h2_close_all(p);
    free(p);
}

struct profd_server *profd_server_start(struct profd_component *self,
                                        const struct profd_server_options *o,
                                        profd_rpc_handler fn, void *arg, char *err,
                                        size_t errlen)
{
    struct profd_server *s = profd_xcalloc(1, sizeof(*s));
    s->self = self;
    s->base = self->graph->base;
    s->o = *o;
    s->endpoint = profd_xstrdup(o->endpoint ? o->endpoint : "");
    s->o.endpoint = s->endpoint;
    s->fn = fn;
    s->arg = arg;
    s->refusals_log.burst = REFUSALS_LOGGED;
    s->bodies.limit = o->max_in_flight;
    char host[256];
    int port;
    if (split_endpoint(s->endpoint, host, sizeof(host), &port) < 0) {
        snprintf(err, errlen, "endpoint \"%s\" is not host:port", s->endpoint);
        goto fail;
    }
    if (o->tls_cert_file && *o->tls_cert_file && tls_setup(s, err, errlen) < 0)
        goto fail;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    char portstr[16];
    snprintf(portstr, sizeof(portstr), "%d", port);
    int rc = getaddrinfo(host[0] ? host : NULL, portstr, &hints, &ai);
    if (rc != 0) {
        snprintf(err, errlen, "endpoint %s: %s", s->endpoint, gai_strerror(rc));
        goto fail;
    }
    s->listener = evconnlistener_new_bind(s->base, on_accept, s,
                                          LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_FREE, -1,
                                          ai->ai_addr, (int)ai->ai_addrlen);
    freeaddrinfo(ai);
    if (!s->listener) {
        snprintf(err, errlen, "cannot listen on %s: %s", s->endpoint,
                 evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
        goto fail;
    }
    profd_server_note_address(s, evconnlistener_get_fd(s->listener));
    s->accept_guard = profd_accept_guard_new(s->listener, s->base, self->id, s->address);
    parts_start(s);
    gauges(s, true);
    s->next_of_self = self->servers;
    self->servers = s;
    return s;
fail:
    profd_server_stop(s);
    return NULL;
}

void profd_server_stop(struct profd_server *s)
{
    if (!s)
        return;
    for (struct profd_server **at = &s->self->servers; *at; at = &(*at)->next_of_self)
        if (*at == s) {
            *at = s->next_of_self;
            break;
        }
    profd_accept_guard_free(s->accept_guard);
    if (s->listener)
        evconnlistener_free(s->listener);
    gauges(s, false);
    /* Each part after the connections handed to it, and while the workers
     * its requests may be on still run. */
    for (unsigned i = 0; i < s->nparts; i++)
        profd_serve_loops_call(s->loops, i, part_stop, s->parts[i]);
    free(s->parts);
    profd_work_pool_free(s->workers);   /* requests on workers answered first */
    s->workers = NULL;
    profd_http1_close_all(s);
    profd_h2_close_all(s);
    if (s->tls)
        s->tls_ops->context_free(s->tls);
    free(s->endpoint);
    free(s);
}

const char *profd_server_address(const struct profd_server *s)
{
    return s->address;
}

struct bufferevent *profd_server_bufferevent(struct profd_server *s, evutil_socket_t fd)
{
    return s->tls ? s->tls_ops->bufferevent_new(s->tls, s->base, fd)
                  : bufferevent_socket_new(s->base, fd, 0);
}

void profd_server_bufferevent_free(struct profd_server *s, struct bufferevent *bev)
{
    evutil_socket_t fd = s->tls ? -1 : bufferevent_getfd(bev);
    if (fd >= 0)
        bufferevent_setfd(bev, -1);   /* its events off the loop before the socket closes */
    bufferevent_free(bev);
    if (fd >= 0)
        close(fd);
}

void profd_server_write_out(struct bufferevent *bev)
{
    struct evbuffer *out = bufferevent_get_output(bev);
    evbuffer_unfreeze(out, 1);   /* a bufferevent keeps its output's start for its own writes */
    evbuffer_write(out, bufferevent_getfd(bev));
}

void profd_server_peer_name(const struct sockaddr *addr, char *out, size_t n)
{
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (addr->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)addr)->sin_addr, host, sizeof(host));
        port = ntohs(((const struct sockaddr_in *)addr)->sin_port);
    } else if (addr->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)addr)->sin6_addr, host, sizeof(host));
        port = ntohs(((const struct sockaddr_in6 *)addr)->sin6_port);
    }
    snprintf(out, n, "%s:%d", host, port);
}

void profd_server_note_address(struct profd_server *s, int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0) {
        if (ss.ss_family == AF_INET6) {
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host, sizeof(host));
            port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
            snprintf(s->address, sizeof(s->address), "[%s]:%d", host, port);
            return;
        }
        inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof(host));
        port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    }
    snprintf(s->address, sizeof(s->address), "%s:%d", host, port);
}

#define BODY_RESERVED_MAX ((size_t)1 << 20)

void profd_server_body_reserve(uint8_t **body, size_t *cap, uint64_t announced)
{
    size_t want = announced < BODY_RESERVED_MAX ? (size_t)announced : BODY_RESERVED_MAX;
    want = (want + 4095) & ~(size_t)4095;   /* small bodies of any size share one buffer */
    if (want <= *cap)
        return;
    free(*body);
    *body = profd_xmalloc(want);
    *cap = want;
}

bool profd_server_count_body(struct profd_server *s, size_t *counted, size_t len, char *why,
                             size_t whylen)
{
    struct profd_body_budget *bodies = &root_of(s)->bodies;
    if (profd_body_budget_count(bodies, counted, len))
        return true;
    snprintf(why, whylen, "a body of %zu bytes has no room under max_request_bytes_in_flight "
             "(%zu bytes, %zu of them held): try again later", len, bodies->limit,
             atomic_load_explicit(&bodies->held, memory_order_relaxed));
    return false;
}

void profd_server_release_body(struct profd_server *s, size_t *counted)
{
    profd_body_budget_release(&root_of(s)->bodies, counted);
}

bool profd_server_to_worker(struct profd_server *s, size_t len, const char *path,
                            size_t path_len, const char *query)
{
    if (len < PROFD_SERVER_WORKER_FROM && !profd_graph_slow(s->self) &&
        !profd_graph_congested(s->self, len) &&
        !(s->o.costly && s->o.costly(path, path_len, query)))   /* asked last: it reads the query */
        return false;
    if (s->root)   /* a part: its server's workers, answering on its loop */
        return s->root->workers && s->returns;
    if (!s->workers && !s->nparts)   /* none made yet, or none can be: served here then */
        s->workers = workers_new(s);
    return s->workers != NULL;
}

void profd_server_work(struct profd_server *s, struct profd_work *w, size_t len)
{
    profd_log(PROFD_LOG_DEBUG, s->self->id, "a request of %zu bytes on a worker", len);
    if (s->root)
        profd_work_submit_to(s->root->workers, w, s->returns);
    else
        profd_work_submit(s->workers, w);
}

void profd_server_handle(struct profd_server *s, struct profd_rpc_request *req,
                         const struct profd_body_lender *lender, struct profd_rpc_response *res,
                         int64_t deadline_ns)
{
    int64_t was = profd_queue_wait_until(profd_work_pool_thread() ? deadline_ns
                                                                  : PROFD_QUEUE_NO_WAIT);
    profd_body_lend_begin(req->body, req->len, lender);
    s->fn(s->arg, req, res);
    profd_body_lend_end();
    profd_queue_wait_until(was);
}

/* When a Connect client gives up on req (its Connect-Timeout-Ms from now),
 * in CLOCK_MONOTONIC nanoseconds; 0 when it did not say. */
static int64_t connect_deadline(const struct profd_rpc_request *req)
{
    const char *v = req->header ? req->header(req, "connect-timeout-ms") : NULL;
    char *end;
    long long ms = v ? strtoll(v, &end, 10) : 0;
    if (!v || end == v || *end || ms <= 0 || ms > 1000000000000LL)
        return 0;
    return monotonic_ns() + ms * 1000000;
}

void profd_server_refused(struct profd_server *s, const char *peer, const char *path,
                          const char *why)
{
    atomic_fetch_add(&s->self->metrics->counters[PROFD_C_REFUSED_RECORDS], 1);
    /* one log limit for the server's parts too */
    profd_log_limited(&root_of(s)->refusals_log, PROFD_LOG_WARN, s->self->id, "refused",
                      "refused %s from %s: %s", path ? path : "request", peer, why);
}

void profd_server_http(struct profd_server *s, const char *peer, bool is_post,
                       const char *encoding, const uint8_t *raw, size_t raw_len,
                       const struct profd_body_lender *raw_lender,
                       struct profd_rpc_request *req, struct profd_rpc_response *res)
{
    int rc = 0;
    uint8_t *inflated = NULL;   /* a body sent as is is handed over as is, not copied */
    bool as_is = !encoding || !*encoding || !strcasecmp(encoding, "identity");
    if (!is_post) {
        res->http_status = 405;
        snprintf(res->message, sizeof(res->message), "only POST is served");
    } else if (!as_is && !profd_encoding_known(encoding)) {
        res->http_status = 415;
        snprintf(res->message, sizeof(res->message),
                 "Content-Encoding \"%.60s\" is not supported (gzip, zstd)", encoding);
    } else if (as_is && raw_len > s->o.max_body) {
        res->http_status = 413;
        snprintf(res->message, sizeof(res->message), "body of %zu bytes is over the limit of %zu",
                 raw_len, s->o.max_body);
    } else if (!as_is && (rc = profd_decompress(encoding, raw, raw_len, s->o.max_body, &inflated,
                                                &raw_len, res->message,
                                                sizeof(res->message))) < 0) {
        res->http_status = rc == PROFD_DECOMPRESS_TOO_LARGE ? 413 : 400;
    } else {
        req->body = inflated ? inflated : raw ? raw : (const uint8_t *)"";   /* never NULL */
        req->len = raw_len;
        const struct profd_body_lender inflated_lender = {&inflated, NULL};
        profd_server_handle(s, req, inflated ? &inflated_lender : raw_lender, res,
                            connect_deadline(req));
        free(inflated);   /* unless a record took it */
        if (!res->http_status)
            res->http_status = 200;
    }
    if (res->http_status < 400)
        return;
    profd_server_refused(s, peer, req->path, res->message);
    if (!res->content_type) {   /* ours, before the handler: the reason as text */
        free(res->body);
        res->body = (uint8_t *)profd_xasprintf("%s\n", res->message);
        res->len = strlen((char *)res->body);
        res->content_type = "text/plain";
    }
}
