// SPDX-License-Identifier: Apache-2.0
/*
 * HTTP/2 (nghttp2 on libevent bufferevents). A stream collects its headers
 * and DATA; at END_STREAM a gRPC call (content-type application/grpc) has
 * its 5-byte framed message checked, decompressed per grpc-encoding and
 * handed to the module's handler, whose answer goes back as HEADERS + DATA +
 * trailers, or as one Trailers-Only HEADERS frame for an error. On an HTTP
 * server any other request (a Connect call, a plain POST) goes through the
 * same path as HTTP/1.1's (profd_server_http) and is answered with its
 * status, content type and body.
 */
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "../lib/clock.h"
#include "../lib/grpc_frame.h"
#include "compression.h"
#include "rpc_server.h"

#define STREAM_WINDOW (16 << 20)
#define CONN_WINDOW (64 << 20)

struct h2_header {
    char *name, *value;
};

struct h2_stream {
    struct h2_stream *next, **prevp;   /* on its connection's list */
    int32_t id;
    struct h2_header *headers;
    size_t nheaders, headers_cap;
    uint8_t *body;
    size_t len, cap;
    size_t counted;            /* of the body, against the server's bytes in flight */
    bool answered;
    bool working;              /* its request is on a worker */
    bool closed;               /* closed meanwhile: freed when the worker is done */
    bool grpc;                 /* answered the gRPC way (trailers) */
    uint64_t started;          /* when its HEADERS came, for grpc-timeout */
    uint8_t *resp;             /* framed response message */
    size_t resp_len, resp_off;
};

struct h2_conn {
    struct h2_conn *next, **prevp;
    struct profd_server *s;
    struct bufferevent *bev;
    nghttp2_session *session;
    char peer[64];
    struct h2_stream *streams; /* open, and closed ones still on a worker */
    unsigned working;          /* its streams' requests on workers */
    struct event *overdue_timer; /* with read_timeout: at the next request's limit */
    bool gone;                 /* closed meanwhile: freed when the last worker is done */
};

static const char *stream_header(const struct h2_stream *st, const char *name)
{
    for (size_t i = 0; i < st->nheaders; i++)
        if (strcasecmp(st->headers[i].name, name) == 0)
            return st->headers[i].value;
    return NULL;
}

static const char *request_header(const struct profd_rpc_request *req, const char *name)
{
    return stream_header(req->impl, name);
}

static void stream_free(struct profd_server *s, struct h2_stream *st)
{
    profd_server_release_body(s, &st->counted);
    *st->prevp = st->next;
    if (st->next)
        st->next->prevp = st->prevp;
    for (size_t i = 0; i < st->nheaders; i++) {
        free(st->headers[i].name);
        free(st->headers[i].value);
    }
    free(st->headers);
    free(st->body);
    free(st->resp);
    free(st);
}

/* Frees c, or while requests of it are on workers marks it gone and stops
 * its I/O (the last worker done frees it). */
static void conn_free(struct h2_conn *c)
{
    if (c->overdue_timer)
        event_del(c->overdue_timer);
    if (c->working) {
        c->gone = true;
        bufferevent_disable(c->bev, EV_READ | EV_WRITE);
        return;
    }
    if (c->overdue_timer)
        event_free(c->overdue_timer);
    *c->prevp = c->next;
    if (c->next)
        c->next->prevp = c->prevp;
    nghttp2_session_del(c->session);
    while (c->streams)   /* those the session did not close: unanswered when it ended */
        stream_free(c->s, c->streams);
    profd_server_bufferevent_free(c->s, c->bev);
    profd_server_connection_ended(c->s);
    free(c);
}

/* Hands nghttp2's pending frames to the socket; closes the connection when
 * the session is over and everything is written. */
static void flush(struct h2_conn *c)
{
    for (;;) {
        const uint8_t *data;
        ssize_t n = nghttp2_session_mem_send(c->session, &data);
        if (n < 0) {
            conn_free(c);
            return;
        }
        if (n == 0)
            break;
        bufferevent_write(c->bev, data, (size_t)n);
    }
    if (!nghttp2_session_want_read(c->session) && !nghttp2_session_want_write(c->session) &&
        evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
        conn_free(c);
}

/* grpc-message: bytes outside 0x20-0x7e, and '%', percent-encoded. */
static void percent_encode(const char *in, char *out, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && o + 4 < n; p++) {
        if (*p < 0x20 || *p > 0x7e || *p == '%') {
            out[o++] = '%';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        } else {
            out[o++] = (char)*p;
        }
    }
    out[o] = '\0';
}

#define NV(n, v) {(uint8_t *)(n), (uint8_t *)(v), strlen(n), strlen(v), NGHTTP2_NV_FLAG_NONE}

/* Answers with status only (Trailers-Only), or a plain HTTP status when
 * http_status is not 200 (not a gRPC request at all). */
static void answer_status(struct h2_conn *c, struct h2_stream *st, int http_status,
                          int grpc_status, const char *message)
{
    char status[8], code[12], encoded[768];
    snprintf(status, sizeof(status), "%d", http_status);
    snprintf(code, sizeof(code), "%d", grpc_status);
    percent_encode(message, encoded, sizeof(encoded));
    nghttp2_nv nva[] = {NV(":status", status), NV("content-type", "application/grpc"),
                        NV("grpc-status", code), NV("grpc-message", encoded)};
    nghttp2_nv plain[] = {NV(":status", status), NV("content-type", "text/plain"),
                          NV("retry-after", "1")};
    if (http_status != 200)
        nghttp2_submit_response(c->session, st->id, plain,
                                profd_http_retry_later(http_status) ? 3 : 2, NULL);
    else
        nghttp2_submit_response(c->session, st->id, nva, message[0] ? 4 : 3, NULL);
    st->answered = true;
    if (grpc_status != GRPC_OK || http_status != 200)
        profd_server_refused(c->s, c->peer, stream_header(st, ":path"), message);
}

static ssize_t read_response(nghttp2_session *session, int32_t stream_id, uint8_t *buf,
                             size_t length, uint32_t *data_flags, nghttp2_data_source *source,
                             void *user_data)
{
    (void)user_data;
    struct h2_stream *st = source->ptr;
    size_t n = st->resp_len - st->resp_off;
    if (n > length)
        n = length;
    memcpy(buf, st->resp + st->resp_off, n);
    st->resp_off += n;
    if (st->resp_off == st->resp_len && !st->grpc) {
        *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    } else if (st->resp_off == st->resp_len) {
        *data_flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
        nghttp2_nv trailers[] = {NV("grpc-status", "0")};
        nghttp2_submit_trailer(session, stream_id, trailers, 1);
    }
    return (ssize_t)n;
}

/* An HTTP answer (not gRPC): status, content type and body (taken over). */
static void answer_http(struct h2_conn *c, struct h2_stream *st,
                        const struct profd_rpc_response *res)
{
    char status[8];
    snprintf(status, sizeof(status), "%d", res->http_status ? res->http_status : 200);
    st->resp = res->body;
    st->resp_len = res->len;
    nghttp2_nv nva[] = {NV(":status", status),
                        NV("content-type", res->content_type ? res->content_type : ""),
                        NV("retry-after", "1")};
    if (!res->content_type)   /* :status alone, or with retry-after */
        nva[1] = nva[2];
    size_t n = (res->content_type ? 2 : 1) + profd_http_retry_later(res->http_status);
    nghttp2_data_provider prd = {.source.ptr = st, .read_callback = read_response};
    nghttp2_submit_response(c->session, st->id, nva, n, res->len ? &prd : NULL);
    st->answered = true;
}

/* What a stream's request comes to: worked out by serve_stream (on a
 * worker thread when it is large), sent by send_answer on the loop. */
struct h2_answer {
    enum { A_STATUS, A_MESSAGE, A_HTTP } how;
    int http_status, grpc_status;   /* A_STATUS */
    char message[300];
    struct profd_rpc_response res;  /* A_HTTP: the response; A_MESSAGE: its body */
};

/* The stream's :path ("" when none): the length of its path part into
 * *path_len, its query ("" when none) into *query. */
static const char *stream_target(const struct h2_stream *st, size_t *path_len, const char **query)
{
    const char *target = stream_header(st, ":path");
    if (!target)
        target = "";
    *path_len = strcspn(target, "?");
    *query = target[*path_len] ? target + *path_len + 1 : "";
    return target;
}

/* A request on an HTTP server that is not a gRPC call. */
static void serve_http(struct h2_conn *c, struct h2_stream *st, struct h2_answer *a)
{
    const char *ctype = stream_header(st, "content-type");
    const char *method = stream_header(st, ":method"), *query;
    size_t path_len;
    const char *target = stream_target(st, &path_len, &query);
    char *path = profd_xstrndup(target, path_len);
    struct profd_rpc_request req = {
        .protocol = PROFD_RPC_HTTP, .path = path, .content_type = ctype ? ctype : "",
        .header = request_header, .impl = st, .query = query};
    a->how = A_HTTP;
    const struct profd_body_lender lender = {&st->body, &st->cap};
    profd_server_http(c->s, c->peer, method && !strcmp(method, "POST"),
                      stream_header(st, "content-encoding"), st->body, st->len, &lender, &req,
                      &a->res);
    free(path);
}

static void answer_message(struct h2_conn *c, struct h2_stream *st, uint8_t *msg, size_t len)
{
    st->resp = profd_xmalloc(len + 5);
    grpc_frame_prefix(st->resp, 0, len);
    if (len)
        memcpy(st->resp + 5, msg, len);
    st->resp_len = len + 5;
    nghttp2_nv nva[] = {NV(":status", "200"), NV("content-type", "application/grpc"),
                        NV("grpc-accept-encoding", "gzip,zstd,identity")};
    nghttp2_data_provider prd = {.source.ptr = st, .read_callback = read_response};
    st->grpc = true;
    nghttp2_submit_response(c->session, st->id, nva, 3, &prd);
    st->answered = true;
}

/* grpc-timeout ("<digits><unit>") in nanoseconds; 0 when absent or bad. */
static uint64_t grpc_timeout_ns(const char *v)
{
    if (!v)
        return 0;
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    static const struct {
        char unit;
        uint64_t ns;
    } units[] = {{'H', 3600000000000ull}, {'M', 60000000000ull}, {'S', 1000000000ull},
                 {'m', 1000000ull},       {'u', 1000ull},        {'n', 1}};
    for (size_t i = 0; end != v && end[1] == '\0' && i < 6; i++)
        if (*end == units[i].unit)
            return n * units[i].ns;
    return 0;
}

static bool is_grpc(const struct h2_stream *st)
{
    const char *ctype = stream_header(st, "content-type");
    return ctype && strncmp(ctype, "application/grpc", 16) == 0 &&
           (!ctype[16] || ctype[16] == '+' || ctype[16] == ';');
}

/* Works out st's answer: reads the stream and the server, never the
 * session, so it may run on a worker. */
static void serve_stream(struct h2_conn *c, struct h2_stream *st, struct h2_answer *a)
{
    const struct profd_server_options *o = &c->s->o;
    uint64_t timeout = grpc_timeout_ns(stream_header(st, "grpc-timeout"));
    const char *ctype = stream_header(st, "content-type");
    *a = (struct h2_answer){.how = A_STATUS, .http_status = 200};
    /* The client gave up meanwhile: */
    if (timeout && (uint64_t)monotonic_ns() - st->started > timeout) {
        a->grpc_status = GRPC_DEADLINE_EXCEEDED;
        snprintf(a->message, sizeof(a->message),
                 "the request took longer to arrive than its grpc-timeout");
        return;
    }
    if (!is_grpc(st) && o->protocol == PROFD_RPC_HTTP)
        return serve_http(c, st, a);
    if (!is_grpc(st)) {
        a->http_status = 415;
        snprintf(a->message, sizeof(a->message), "content-type \"%s\" is not application/grpc",
                 ctype ? ctype : "");
        return;
    }
    const uint8_t *msg;
    uint8_t *inflated;
    size_t len;
    a->grpc_status = grpc_unframe_view(st->body, st->len, stream_header(st, "grpc-encoding"),
                                       o->max_body, profd_decompress, &msg, &len, &inflated,
                                       a->message, sizeof(a->message));
    if (a->grpc_status != GRPC_OK)
        return;
    struct profd_rpc_request req = {
        .protocol = PROFD_RPC_GRPC, .path = stream_header(st, ":path"), .content_type = ctype,
        .body = msg, .len = len, .header = request_header, .impl = st, .query = ""};
    const struct profd_body_lender lender = inflated ? (struct profd_body_lender){&inflated, NULL}
                                                     : (struct profd_body_lender){&st->body,
                                                                                  &st->cap};
    profd_server_handle(c->s, &req, &lender, &a->res,
                        timeout ? (int64_t)(st->started + timeout) : 0);
    free(inflated);   /* unless a record took it */
    if (a->res.grpc_status != GRPC_OK) {
        a->grpc_status = a->res.grpc_status;
        snprintf(a->message, sizeof(a->message), "%s", a->res.message);
        free(a->res.body);
        a->res.body = NULL;
        return;
    }
    a->how = A_MESSAGE;
}

/* Submits st's answer to the session (the loop's thread). */
static void send_answer(struct h2_conn *c, struct h2_stream *st, struct h2_answer *a)
{
    profd_server_release_body(c->s, &st->counted);
    switch (a->how) {
    case A_STATUS:
        answer_status(c, st, a->http_status, a->grpc_status, a->message);
        break;
    case A_HTTP:
        answer_http(c, st, &a->res);   /* takes the body */
        break;
    case A_MESSAGE:
        answer_message(c, st, a->res.body, a->res.len);
        free(a->res.body);
        break;
    }
}

/* A stream's request handled on a worker thread. */
struct h2_work {
    struct profd_work work;
    struct h2_conn *c;
    struct h2_stream *st;
    struct h2_answer a;
};

static void work_run(struct profd_work *pw)
{
    struct h2_work *w = (struct h2_work *)pw;
    serve_stream(w->c, w->st, &w->a);
}

/* Back on the loop: the answer goes out, unless the stream or the
 * connection closed meanwhile. */
static void work_done(struct profd_work *pw)
{
    struct h2_work *w = (struct h2_work *)pw;
    struct h2_conn *c = w->c;
    struct h2_stream *st = w->st;
    st->working = false;
    c->working--;
    if (st->closed || c->gone) {
        free(w->a.res.body);
        if (st->closed)
            stream_free(c->s, st);
        if (c->gone && !c->working)
            conn_free(c);
    } else {
        send_answer(c, st, &w->a);
        flush(c);
    }
    free(w);
}

static void handle(struct h2_conn *c, struct h2_stream *st)
{
    const char *query;
    size_t path_len;
    const char *target = stream_target(st, &path_len, &query);
    if (profd_server_to_worker(c->s, st->len, target, path_len, query)) {
        struct h2_work *w = profd_xcalloc(1, sizeof(*w));
        w->work = (struct profd_work){work_run, work_done, NULL};
        w->c = c;
        w->st = st;
        st->working = true;
        c->working++;
        profd_server_work(c->s, &w->work, st->len);
        return;
    }
    struct h2_answer a;
    serve_stream(c, st, &a);
    send_answer(c, st, &a);
}

static int on_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *user_data)
{
    struct h2_conn *c = user_data;
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    struct h2_stream *st = profd_xcalloc(1, sizeof(*st));
    st->next = c->streams;
    if (c->streams)
        c->streams->prevp = &st->next;
    st->prevp = &c->streams;
    c->streams = st;
    st->id = frame->hd.stream_id;
    st->started = (uint64_t)monotonic_ns();
    nghttp2_session_set_stream_user_data(session, st->id, st);
    return 0;
}

static int on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *user_data)
{
    (void)flags;
    (void)user_data;
    struct h2_stream *st = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
    if (!st || st->nheaders >= 64)
        return 0;
    profd_grow(&st->headers, &st->headers_cap, st->nheaders + 1, sizeof(*st->headers));
    st->headers[st->nheaders++] = (struct h2_header){
        profd_xstrndup((const char *)name, namelen), profd_xstrndup((const char *)value, valuelen)};
    return 0;
}

/* The length st's body says it has from its first DATA bytes (len of
 * them at data): its content-length, else the first gRPC message's with
 * its prefix; 0 when neither says. */
static uint64_t announced_length(const struct h2_stream *st, const uint8_t *data, size_t len)
{
    const char *cl = stream_header(st, "content-length");
    if (cl)
        return strtoull(cl, NULL, 10);
    if (is_grpc(st) && len >= 5)
        return 5 + (uint64_t)grpc_frame_length(data);
    return 0;
}

/* Refuses st for its body (http_status, or grpc_status for a gRPC call)
 * and lets go of what it held. Answered now; the rest of the body is read
 * and dropped (a RST_STREAM after the trailers makes grpc-core clients
 * report INTERNAL instead). */
static void refuse_body(struct h2_conn *c, struct h2_stream *st, int http_status,
                        int grpc_status, const char *why)
{
    if (is_grpc(st)) {
        answer_status(c, st, 200, grpc_status, why);
    } else {
        profd_server_refused(c->s, c->peer, stream_header(st, ":path"), why);
        struct profd_rpc_response res = {.http_status = http_status,
                                         .content_type = "text/plain"};
        res.body = (uint8_t *)profd_xstrdup(why);
        res.len = strlen(why);
        answer_http(c, st, &res);
    }
    profd_server_release_body(c->s, &st->counted);
    free(st->body);
    st->body = NULL;
    st->len = st->cap = 0;
}

static int on_data(nghttp2_session *session, uint8_t flags, int32_t stream_id,
                   const uint8_t *data, size_t len, void *user_data)
{
    (void)flags;
    struct h2_conn *c = user_data;
    struct h2_stream *st = nghttp2_session_get_stream_user_data(session, stream_id);
    if (!st || st->answered)
        return 0;
    size_t max = c->s->o.max_body + 5;
    char why[192];
    if (st->len + len > max) {
        snprintf(why, sizeof(why), "message over the limit of %zu bytes", c->s->o.max_body);
        refuse_body(c, st, 413, GRPC_RESOURCE_EXHAUSTED, why);
        return 0;
    }
    /* counted from its first bytes for what it announces, else as it comes */
    uint64_t announced = st->cap ? 0 : announced_length(st, data, len);
    size_t count = st->len + len;
    if (announced > count)
        count = announced < max ? (size_t)announced : max;
    if (!profd_server_count_body(c->s, &st->counted, count, why, sizeof(why))) {
        refuse_body(c, st, 503, GRPC_UNAVAILABLE, why);
        return 0;
    }
    if (!st->cap)
        profd_server_body_reserve(&st->body, &st->cap, announced);
    profd_grow(&st->body, &st->cap, st->len + len, 1);
    memcpy(st->body + st->len, data, len);
    st->len += len;
    return 0;
}

static int on_frame(nghttp2_session *session, const nghttp2_frame *frame, void *user_data)
{
    struct h2_conn *c = user_data;
    if ((frame->hd.type != NGHTTP2_DATA && frame->hd.type != NGHTTP2_HEADERS) ||
        !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
        return 0;
    struct h2_stream *st = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
    if (st && !st->answered && !st->working)
        handle(c, st);
    return 0;
}

static int on_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code,
                    void *user_data)
{
    (void)error_code;
    struct h2_conn *c = user_data;
    struct h2_stream *st = nghttp2_session_get_stream_user_data(session, stream_id);
    if (st) {
        nghttp2_session_set_stream_user_data(session, stream_id, NULL);
        if (st->working)
            st->closed = true;   /* its worker frees it */
        else
            stream_free(c->s, st);
    }
    return 0;
}

/* With read_timeout: refuses c's requests still coming in that began
 * longer ago than that (408, or gRPC DEADLINE_EXCEEDED), checked whenever
 * the connection reads. */
static void refuse_overdue(struct h2_conn *c)
{
    int64_t limit = c->s->o.read_timeout;
    if (!limit)
        return;
    uint64_t now = (uint64_t)monotonic_ns();
    char why[96];
    snprintf(why, sizeof(why), "request not whole %g s after it began", (double)limit / 1e9);
    for (struct h2_stream *st = c->streams; st; st = st->next)
        if (!st->answered && !st->working && now - st->started > (uint64_t)limit)
            refuse_body(c, st, 408, GRPC_DEADLINE_EXCEEDED, why);
}

static void overdue_timer_ended(evutil_socket_t fd, short what, void *arg);

/* With read_timeout: has c's timer end just past the limit of the
 * earliest of its requests still coming in, so that one whose client went
 * silent is refused then, not when the connection idles out. */
static void watch_overdue(struct h2_conn *c)
{
    int64_t limit = c->s->o.read_timeout;
    if (!limit)
        return;
    uint64_t first = UINT64_MAX;
    for (struct h2_stream *st = c->streams; st; st = st->next)
        if (!st->answered && !st->working && st->started < first)
            first = st->started;
    if (first == UINT64_MAX) {
        if (c->overdue_timer)
            event_del(c->overdue_timer);
        return;
    }
    if (!c->overdue_timer)
        c->overdue_timer = evtimer_new(c->s->base, overdue_timer_ended, c);
    int64_t wait = (int64_t)(first - (uint64_t)monotonic_ns()) + limit + 1000000;
    if (wait < 1000000)
        wait = 1000000;   /* a millisecond past */
    const struct timeval tv = {wait / 1000000000, wait % 1000000000 / 1000};
    evtimer_add(c->overdue_timer, &tv);
}

static void overdue_timer_ended(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct h2_conn *c = arg;
    refuse_overdue(c);
    watch_overdue(c);
    flush(c);
}

static void on_read(struct bufferevent *bev, void *arg)
{
    struct h2_conn *c = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    size_t len = evbuffer_get_length(in);
    ssize_t n = nghttp2_session_mem_recv(c->session, evbuffer_pullup(in, -1), len);
    if (n < 0) {
        profd_server_refused(c->s, c->peer, NULL, nghttp2_strerror((int)n));
        conn_free(c);
        return;
    }
    evbuffer_drain(in, (size_t)n);
    refuse_overdue(c);
    watch_overdue(c);
    flush(c);
}

static void on_write(struct bufferevent *bev, void *arg)
{
    (void)bev;
    flush(arg);
}

static void on_event(struct bufferevent *bev, short events, void *arg)
{
    (void)bev;
    if (events & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT))
        conn_free(arg);
}

void profd_h2_adopt(struct profd_server *s, evutil_socket_t fd, const struct sockaddr *addr)
{
    char peer[64];
    profd_server_peer_name(addr, peer, sizeof(peer));
    profd_h2_adopt_bev(s, profd_server_bufferevent(s, fd), peer);
}

void profd_h2_adopt_bev(struct profd_server *s, struct bufferevent *bev, const char *peer)
{
    struct h2_conn *c = profd_xcalloc(1, sizeof(*c));
    c->s = s;
    snprintf(c->peer, sizeof(c->peer), "%s", peer);
    c->bev = bev;
    nghttp2_session_callbacks *cb;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
    nghttp2_session_server_new(&c->session, cb, c);
    nghttp2_session_callbacks_del(cb);
    nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100},
                                         {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, STREAM_WINDOW}};
    nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, settings, 2);
    nghttp2_session_set_local_window_size(c->session, NGHTTP2_FLAG_NONE, 0, CONN_WINDOW);
    c->next = s->conns;
    if (s->conns)
        s->conns->prevp = &c->next;
    c->prevp = &s->conns;
    s->conns = c;
    bufferevent_setcb(c->bev, on_read, on_write, on_event, c);
    bufferevent_enable(c->bev, EV_READ | EV_WRITE);
    if (evbuffer_get_length(bufferevent_get_input(c->bev)))
        on_read(c->bev, c);   /* what came before the hand-over (and flushes) */
    else
        flush(c);
}

void profd_h2_close_all(struct profd_server *s)
{
    while (s->conns) {
        struct h2_conn *c = s->conns;
        /* GOAWAY: every request received so far was answered already */
        nghttp2_session_terminate_session(c->session, NGHTTP2_NO_ERROR);
        const uint8_t *data;
        ssize_t n;
        while ((n = nghttp2_session_mem_send(c->session, &data)) > 0)
            bufferevent_write(c->bev, data, (size_t)n);
        if (!s->tls)
            profd_server_write_out(c->bev);
        conn_free(c);
    }
}
