// SPDX-License-Identifier: Apache-2.0
/*
 * Connections of HTTP servers. Each starts by telling its HTTP version
 * apart: under TLS by the ALPN protocol the handshake chose, in plaintext
 * by whether it opens with HTTP/2's connection preface; HTTP/2 goes to
 * h2_server.c. HTTP/1.1 requests are read here (head parsed by
 * http1_parse.c, body by Content-Length or chunked, Expect: 100-continue
 * answered, keep-alive and pipelining in order), go through
 * profd_server_http, and are answered with the status, content type and
 * body it leaves. A request that cannot be read whole is answered with its
 * status and the connection closed.
 *
 * In plaintext a connection reads with its own event and one recv() into
 * the bufferevent's input, rather than letting the bufferevent read: that
 * asks the socket first how much it holds (an ioctl a request, 3% of a
 * small push's CPU); the bufferevent writes, and reads once the connection
 * lingers at its close, or hands it to HTTP/2. Between requests the recv()
 * goes into a buffer the server lends the input (see on_readable), so a
 * request that comes in one piece costs no allocation of its own.
 *
 * A small keep-alive response in plaintext waits in its connection until
 * the event loop has read everything that was ready in this round, and
 * the round's responses go out then, together (send_batch.c: one system
 * call for them all where io_uring is there; no epoll_ctl, no wait for
 * writability): a client with several connections is woken once for the
 * responses of a round rather than once for each, and a wake-up costs more
 * than the response (on a virtual machine most of all).
 */
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "../lib/clock.h"
#include "alloc.h"
#include "http1_parse.h"
#include "rpc_server.h"
#include "send_batch.h"

#define MAX_HEAD (64 << 10)
#define MAX_LINE 1024          /* a chunk-size or trailer line */
#define PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define PREFACE_LEN 24
#define IDLE_SECONDS 120
#define LINGER_SECONDS 2       /* reading what a closed request still sends */
#define UNSENT_MAX 512         /* a response this small waits for the round's end */
#define KEPT_MAX (64 << 10)    /* request buffers kept for the next request up to this */
#define READ_SIZE (16 << 10)   /* room made for one recv() */

enum h1_state { H1_DETECT, H1_HEAD, H1_BODY, H1_CHUNK_SIZE, H1_CHUNK_DATA, H1_CHUNK_END,
                H1_TRAILERS, H1_WORKING, H1_CLOSING, H1_LINGERING };

struct h1_conn {
    struct h1_conn *next, **prevp;
    struct profd_server *s;
    struct bufferevent *bev;
    struct event *reader;      /* plaintext: reads instead of the bufferevent */
    char peer[64];
    enum h1_state state;
    char *head;                /* the request's head, parsed in place into h */
    size_t head_cap;
    struct http1_head h;
    uint8_t *body;
    size_t len, cap;
    uint64_t remaining;        /* of the body, or of the current chunk */
    size_t counted;            /* of the body, against the server's bytes in flight */
    int64_t head_since;        /* when a head seen waiting for its rest began; 0: none */
    int64_t request_since;     /* with read_timeout: when the request under way was seen */
    int64_t watched_deadline;  /* what the read timeout is set to end at; 0: the idle one */
    bool gone;                 /* closed while its request was on a worker */
    /* Responses waiting for the round's end; on the server's list while
     * there are any. */
    struct h1_conn *unsent_next, **unsent_prevp;
    size_t unsent_len;
    char unsent[UNSENT_MAX];
};

static void unsent_unlink(struct h1_conn *c)
{
    if (!c->unsent_prevp)
        return;
    *c->unsent_prevp = c->unsent_next;
    if (c->unsent_next)
        c->unsent_next->unsent_prevp = c->unsent_prevp;
    c->unsent_next = NULL;
    c->unsent_prevp = NULL;
}

/* Moves c's waiting responses to its output buffer, ahead of anything
 * added to it after. */
static void unsent_to_output(struct h1_conn *c)
{
    unsent_unlink(c);
    if (c->unsent_len)
        evbuffer_add(bufferevent_get_output(c->bev), c->unsent, c->unsent_len);
    c->unsent_len = 0;
}

/* What a socket did not take of c's waiting responses goes to its output
 * buffer (errors show on that buffered write). */
static void unsent_sent(void *tag, size_t sent)
{
    struct h1_conn *c = tag;
    if (sent < c->unsent_len)
        evbuffer_add(bufferevent_get_output(c->bev), c->unsent + sent, c->unsent_len - sent);
    c->unsent_len = 0;
}

/* The round's end: every waiting response is sent. */
static void send_unsent(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct profd_server *s = arg;
    while (s->h1_unsent) {
        struct h1_conn *c = s->h1_unsent;
        unsent_unlink(c);
        profd_send_batch_add(s->h1_sends, bufferevent_getfd(c->bev), c->unsent, c->unsent_len, c);
    }
    profd_send_batch_flush(s->h1_sends);
}

/* Has a response wait in c for the round's end; false when it cannot (TLS,
 * something buffered already, too large). */
static bool wait_for_round_end(struct h1_conn *c, const char *head, size_t head_len,
                               const uint8_t *body, size_t len)
{
    if (c->s->tls || evbuffer_get_length(bufferevent_get_output(c->bev)) != 0 ||
        c->unsent_len + head_len + len > sizeof(c->unsent))
        return false;
    memcpy(c->unsent + c->unsent_len, head, head_len);
    if (len)
        memcpy(c->unsent + c->unsent_len + head_len, body, len);
    c->unsent_len += head_len + len;
    if (!c->unsent_prevp) {
        struct profd_server *s = c->s;
        c->unsent_next = s->h1_unsent;
        if (s->h1_unsent)
            s->h1_unsent->unsent_prevp = &c->unsent_next;
        c->unsent_prevp = &s->h1_unsent;
        s->h1_unsent = c;
        /* active events run in order: after the reads of this round */
        event_active(s->h1_round_end, EV_TIMEOUT, 0);
    }
    return true;
}

static void conn_free(struct h1_conn *c, bool free_bev)
{
    *c->prevp = c->next;
    if (c->next)
        c->next->prevp = c->prevp;
    unsent_unlink(c);
    profd_server_release_body(c->s, &c->counted);
    if (c->reader)
        event_free(c->reader);
    if (free_bev) {   /* else it goes on as HTTP/2 */
        profd_server_bufferevent_free(c->s, c->bev);
        profd_server_connection_ended(c->s);
    }
    free(c->head);
    free(c->body);
    free(c);
}

static const char *reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return status < 400 ? "OK" : status < 500 ? "Bad Request" : "Internal Server Error";
    }
}

static const struct timeval idle_timeout = {IDLE_SECONDS, 0};

/* Sets how long c waits for its next bytes (its idle timeout, or less). */
static void read_timeout_set(struct h1_conn *c, const struct timeval *tv)
{
    if (c->reader)
        event_add(c->reader, tv);
    else
        bufferevent_set_timeouts(c->bev, tv, &idle_timeout);
}

/* Turns reading requests on (the idle timeout with it) or off. */
static void reading(struct h1_conn *c, bool on)
{
    c->watched_deadline = 0;
    if (!c->reader)
        (on ? bufferevent_enable : bufferevent_disable)(c->bev, EV_READ);
    if (c->reader && !on)
        event_del(c->reader);
    else if (on)
        read_timeout_set(c, &idle_timeout);
}

/* A response head being written: text appended at end, cut at its size. */
struct response_head {
    char text[512];
    size_t len;
};

static void head_add(struct response_head *h, const char *s)
{
    size_t n = strlen(s);
    if (n > sizeof(h->text) - h->len)
        n = sizeof(h->text) - h->len;
    memcpy(h->text + h->len, s, n);
    h->len += n;
}

static void head_add_number(struct response_head *h, size_t v)
{
    char digits[24], *p = digits + sizeof(digits);
    *--p = '\0';
    do
        *--p = (char)('0' + v % 10);
    while ((v /= 10) && p > digits);
    head_add(h, p);
}

/* Writes a response; with close, the connection ends once it is sent.
 * The head is put together by hand: it is written for every request. */
static void respond(struct h1_conn *c, int status, const char *content_type, const uint8_t *body,
                    size_t len, bool close)
{
    struct response_head h = {.len = 0};
    head_add(&h, "HTTP/1.1 ");
    head_add_number(&h, (size_t)status);
    head_add(&h, " ");
    head_add(&h, reason(status));
    head_add(&h, "\r\nContent-Length: ");
    head_add_number(&h, len);
    head_add(&h, "\r\n");
    if (content_type) {
        head_add(&h, "Content-Type: ");
        head_add(&h, content_type);
        head_add(&h, "\r\n");
    }
    if (status == 405)
        head_add(&h, "Allow: POST\r\n");
    if (profd_http_retry_later(status))
        head_add(&h, "Retry-After: 1\r\n");
    if (close)
        head_add(&h, "Connection: close\r\n");
    head_add(&h, "\r\n");
    const char *head = h.text;
    size_t head_len = h.len;
    if (!close && wait_for_round_end(c, head, head_len, body, len))
        return;
    unsent_to_output(c);
    struct evbuffer *out = bufferevent_get_output(c->bev);
    evbuffer_add(out, head, head_len);
    if (len)
        evbuffer_add(out, body, len);
    if (close) {
        c->state = H1_CLOSING;
        reading(c, false);
    }
}

/* Refuses what could not be read (logged, counted) and ends the connection. */
static void fail(struct h1_conn *c, int status, const char *why)
{
    profd_server_release_body(c->s, &c->counted);
    profd_server_refused(c->s, c->peer, c->h.target, why);
    char text[320];
    int n = snprintf(text, sizeof(text), "%s\n", why);
    respond(c, status, "text/plain", (const uint8_t *)text, (size_t)n, true);
}

static const char *request_header(const struct profd_rpc_request *req, const char *name)
{
    return http1_field(req->impl, name);
}

/* The request (its path malloc'd into *path) as the handler sees it. */
static void request_of(struct h1_conn *c, struct profd_rpc_request *req, char **path)
{
    const char *target = c->h.target;
    if (!strncmp(target, "http://", 7) || !strncmp(target, "https://", 8)) {   /* absolute */
        const char *p = strchr(strstr(target, "//") + 2, '/');
        target = p ? p : "/";
    }
    size_t path_len = strcspn(target, "?");
    *path = profd_xstrndup(target, path_len);
    const char *ctype = http1_field(&c->h, "Content-Type");
    *req = (struct profd_rpc_request){
        .protocol = PROFD_RPC_HTTP, .path = *path, .content_type = ctype ? ctype : "",
        .header = request_header, .impl = &c->h,
        .query = target[path_len] ? target + path_len + 1 : ""};
}

/* Has the server (and the module's handler) answer the request. */
static void serve(struct h1_conn *c, struct profd_rpc_request *req, struct profd_rpc_response *res)
{
    const struct profd_body_lender lender = {&c->body, &c->cap};
    profd_server_http(c->s, c->peer, !strcmp(c->h.method, "POST"),
                      http1_field(&c->h, "Content-Encoding"), c->body, c->len, &lender, req, res);
}

/* Sends the answer and readies c for its next request. */
static void finish(struct h1_conn *c, struct profd_rpc_response *res, char *path)
{
    respond(c, res->http_status, res->content_type, res->body, res->len, !c->h.keep_alive);
    profd_server_release_body(c->s, &c->counted);
    free(res->body);
    free(path);
    if (c->head_cap > KEPT_MAX) {   /* a small buffer stays for the next request */
        free(c->head);
        c->head = NULL;
        c->head_cap = 0;
    }
    if (c->cap > KEPT_MAX) {
        free(c->body);
        c->body = NULL;
        c->cap = 0;
    }
    c->len = 0;
    c->request_since = 0;
    memset(&c->h, 0, sizeof(c->h));
    if (c->state != H1_CLOSING)
        c->state = H1_HEAD;
}

/* A request handled on a worker thread; the connection reads nothing more
 * until it is answered. */
struct h1_work {
    struct profd_work work;
    struct h1_conn *c;
    char *path;
    struct profd_rpc_request req;
    struct profd_rpc_response res;
};

static void on_read(struct bufferevent *bev, void *arg);

static void work_run(struct profd_work *pw)
{
    struct h1_work *w = (struct h1_work *)pw;
    serve(w->c, &w->req, &w->res);
}

/* Back on the loop: the answer goes out, and what the client sent behind
 * the request is read. */
static void work_done(struct profd_work *pw)
{
    struct h1_work *w = (struct h1_work *)pw;
    struct h1_conn *c = w->c;
    bool gone = c->gone;
    if (gone) {
        free(w->res.body);
        free(w->path);
        conn_free(c, true);
    } else {
        c->state = H1_HEAD;
        finish(c, &w->res, w->path);
    }
    free(w);
    if (gone || c->state == H1_CLOSING)
        return;
    reading(c, true);
    if (evbuffer_get_length(bufferevent_get_input(c->bev)))
        on_read(c->bev, c);
}

/* The request is whole: hands it over and answers, here or, when it is
 * large, from a worker thread. */
static void dispatch(struct h1_conn *c)
{
    char *path;
    struct profd_rpc_request req;
    request_of(c, &req, &path);
    if (profd_server_to_worker(c->s, c->len, req.path, strlen(req.path), req.query)) {
        struct h1_work *w = profd_xcalloc(1, sizeof(*w));
        *w = (struct h1_work){{work_run, work_done, NULL}, c, path, req, {0}};
        c->state = H1_WORKING;
        reading(c, false);
        profd_server_work(c->s, &w->work, c->len);
        return;
    }
    struct profd_rpc_response res = {0};
    serve(c, &req, &res);
    finish(c, &res, path);
}

/* Moves up to c->remaining body bytes from in; true when they are all here. */
static bool take_body(struct h1_conn *c, struct evbuffer *in)
{
    size_t n = evbuffer_get_length(in);
    if (n > c->remaining)
        n = (size_t)c->remaining;
    if (n == 0)
        return c->remaining == 0;
    profd_grow(&c->body, &c->cap, c->len + n, 1);
    evbuffer_remove(in, c->body + c->len, n);
    c->len += n;
    c->remaining -= n;
    return c->remaining == 0;
}

/* Whether what of c's request began at *since (set to now when 0) has
 * taken longer than limit ns: answers 408 saying so (what: "request",
 * "request head") when it has. */
static bool past_limit(struct h1_conn *c, int64_t limit, int64_t *since, const char *what)
{
    int64_t now = monotonic_ns();
    if (!*since)
        *since = now;
    if (now - *since <= limit)
        return false;
    char why[96];
    snprintf(why, sizeof(why), "%s not whole %g s after it began", what, (double)limit / 1e9);
    fail(c, 408, why);
    return true;
}

/* Whether the request head begun in in (waiting for the rest) has taken
 * longer than read_header_timeout; its start is when it was first seen
 * waiting. Answers 408 when it has. */
static bool head_overdue(struct h1_conn *c, const struct evbuffer *in)
{
    int64_t limit = c->s->o.read_header_timeout;
    return limit && evbuffer_get_length(in) &&
           past_limit(c, limit, &c->head_since, "request head");
}

/* With read_timeout: whether the request under way in c (in holds what
 * came of it and was not read yet) began longer ago than that, checked as
 * its bytes come; answers 408 when it has. Its start is the first read
 * that saw it. */
static bool request_overdue(struct h1_conn *c, const struct evbuffer *in)
{
    int64_t limit = c->s->o.read_timeout;
    bool under_way = c->state != H1_HEAD || evbuffer_get_length(in);
    return limit && under_way && c->state != H1_DETECT &&
           past_limit(c, limit, &c->request_since, "request");
}

/* When the head or the request c is reading must be whole by, the earlier
 * of the two; 0 when neither has a limit under way. */
static int64_t read_deadline(const struct h1_conn *c)
{
    const struct profd_server_options *o = &c->s->o;
    int64_t head = c->head_since && o->read_header_timeout ? c->head_since + o->read_header_timeout
                                                           : 0;
    int64_t whole = c->request_since && o->read_timeout ? c->request_since + o->read_timeout : 0;
    return !head || (whole && whole < head) ? whole : head;
}

/* Has c's read timeout end just past its read deadline when it has one,
 * so that a client gone silent mid-request is answered 408 then, not when
 * it idles out; else (again) the idle timeout. */
static void watch_read_deadline(struct h1_conn *c)
{
    int64_t deadline = read_deadline(c);
    if (deadline == c->watched_deadline)
        return;
    c->watched_deadline = deadline;
    int64_t wait = deadline - monotonic_ns() + 1000000;   /* a millisecond past */
    if (!deadline || wait >= (int64_t)IDLE_SECONDS * 1000000000)
        return read_timeout_set(c, &idle_timeout);
    if (wait < 1000000)
        wait = 1000000;
    const struct timeval tv = {wait / 1000000000, wait % 1000000000 / 1000};
    read_timeout_set(c, &tv);
}

/* Reads the head when it is all here; false to wait for more. */
static bool read_head(struct h1_conn *c, struct evbuffer *in)
{
    const unsigned char *first;
    while (evbuffer_get_length(in) && (first = evbuffer_pullup(in, 1)) &&
           (*first == '\r' || *first == '\n'))
        evbuffer_drain(in, 1);   /* line ends between requests */
    struct evbuffer_ptr end = evbuffer_search(in, "\r\n\r\n", 4, NULL);
    if (end.pos < 0) {
        if (evbuffer_get_length(in) > MAX_HEAD)
            fail(c, 431, "request head over 64 KiB");
        else
            head_overdue(c, in);
        return false;
    }
    c->head_since = 0;
    size_t len = (size_t)end.pos + 4;
    if (len > MAX_HEAD) {
        fail(c, 431, "request head over 64 KiB");
        return false;
    }
    profd_grow(&c->head, &c->head_cap, len + 1, 1);
    evbuffer_remove(in, c->head, len);
    c->head[len] = '\0';
    char why[192];
    int status = http1_parse_head(c->head, len, &c->h, why, sizeof(why));
    if (status) {
        fail(c, status, why);
        return false;
    }
    size_t max = c->s->o.max_body;
    if (c->h.has_length && c->h.content_length > max) {
        snprintf(why, sizeof(why), "body of %llu bytes over the limit of %zu",
                 (unsigned long long)c->h.content_length, max);
        fail(c, 413, why);
        return false;
    }
    if (c->h.has_length &&
        !profd_server_count_body(c->s, &c->counted, c->h.content_length, why, sizeof(why))) {
        fail(c, 503, why);
        return false;
    }
    bool has_body = c->h.chunked || c->h.content_length > 0;
    if (c->h.expect_continue && has_body) {
        unsent_to_output(c);
        evbuffer_add_printf(bufferevent_get_output(c->bev), "HTTP/1.1 100 Continue\r\n\r\n");
    }
    c->remaining = c->h.content_length;
    c->state = c->h.chunked ? H1_CHUNK_SIZE : H1_BODY;
    if (!c->h.chunked)   /* and read straight into its buffer (see on_readable) */
        profd_server_body_reserve(&c->body, &c->cap, c->remaining);
    return true;
}

/* A line (chunk size, trailer) without its CRLF, malloc'd; NULL to wait
 * or after failing the connection (c->state tells). */
static char *read_line(struct h1_conn *c, struct evbuffer *in, size_t *len)
{
    char *line = evbuffer_readln(in, len, EVBUFFER_EOL_CRLF);
    if (!line && evbuffer_get_length(in) > MAX_LINE)
        fail(c, 400, "chunk line too long");
    else if (line && *len > MAX_LINE)
        fail(c, 400, "chunk line too long");
    return line;
}

/* One step of reading a chunked body; false to wait for more. */
static bool read_chunked(struct h1_conn *c, struct evbuffer *in)
{
    size_t len;
    char *line;
    uint64_t size;
    switch (c->state) {
    case H1_CHUNK_SIZE:
        if (!(line = read_line(c, in, &len)))
            return false;
        if (http1_chunk_size(line, len, &size) < 0) {
            free(line);
            fail(c, 400, "malformed chunk size");
            return false;
        }
        free(line);
        if (size > c->s->o.max_body - c->len) {
            fail(c, 413, "chunked body over the limit");
            return false;
        }
        char why[192];
        if (!profd_server_count_body(c->s, &c->counted, c->len + size, why, sizeof(why))) {
            fail(c, 503, why);
            return false;
        }
        c->remaining = size;
        c->state = size ? H1_CHUNK_DATA : H1_TRAILERS;
        return true;
    case H1_CHUNK_DATA:
        if (!take_body(c, in))
            return false;
        c->state = H1_CHUNK_END;
        return true;
    case H1_CHUNK_END:
        if (!(line = read_line(c, in, &len)))
            return false;
        free(line);
        if (len) {
            fail(c, 400, "chunk data longer than its size");
            return false;
        }
        c->state = H1_CHUNK_SIZE;
        return true;
    default:   /* H1_TRAILERS: read and dropped up to the empty line */
        if (!(line = read_line(c, in, &len)))
            return false;
        free(line);
        if (!len)
            dispatch(c);
        return true;
    }
}

/* HTTP/2 or HTTP/1.1, from what has come so far; false to wait for more. */
static bool detect(struct h1_conn *c, struct evbuffer *in)
{
    bool h2;
    if (c->s->tls) {
        h2 = c->s->tls_ops->chose_h2(c->bev);
    } else {
        size_t have = evbuffer_get_length(in), n = have < PREFACE_LEN ? have : PREFACE_LEN;
        h2 = !memcmp(evbuffer_pullup(in, (ev_ssize_t)n), PREFACE, n);
        if (h2 && n < PREFACE_LEN) {
            head_overdue(c, in);
            return false;
        }
    }
    if (!h2) {
        c->state = H1_HEAD;
        return true;
    }
    struct bufferevent *bev = c->bev;
    char peer[sizeof(c->peer)];
    memcpy(peer, c->peer, sizeof(peer));
    struct profd_server *s = c->s;
    conn_free(c, false);   /* its reader with it: HTTP/2 reads through the bufferevent */
    profd_h2_adopt_bev(s, bev, peer);
    return false;
}

static void on_read(struct bufferevent *bev, void *arg)
{
    struct h1_conn *c = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    if (c->state == H1_LINGERING) {
        evbuffer_drain(in, evbuffer_get_length(in));
        return;
    }
    if (c->state != H1_CLOSING && c->state != H1_WORKING && request_overdue(c, in))
        return;
    for (bool more = true; more && c->state != H1_CLOSING && c->state != H1_WORKING;) {
        switch (c->state) {
        case H1_DETECT:
            if (!detect(c, in))
                return;   /* waiting, or the connection is HTTP/2's now */
            break;
        case H1_HEAD:
            more = read_head(c, in);
            if (more && c->state == H1_BODY && c->remaining == 0)
                dispatch(c);
            break;
        case H1_BODY:
            more = take_body(c, in);
            if (more)
                dispatch(c);
            break;
        default:
            more = read_chunked(c, in);
            break;
        }
    }
    /* A request begun in this read (its first, say) is timed from it too. */
    if (c->state != H1_CLOSING && c->state != H1_WORKING && !request_overdue(c, in))
        watch_read_deadline(c);
}

/* Once the last response is out: in plaintext the sending side is shut
 * and what the client still sends is read and dropped for a while, so its
 * unread request does not turn the close into a reset that could destroy
 * the response before the client reads it (a lingering close). */
static void on_write(struct bufferevent *bev, void *arg)
{
    struct h1_conn *c = arg;
    if (c->state != H1_CLOSING || evbuffer_get_length(bufferevent_get_output(bev)) != 0)
        return;
    if (c->s->tls)
        return conn_free(c, true);
    shutdown(bufferevent_getfd(bev), SHUT_WR);
    c->state = H1_LINGERING;
    if (c->reader) {   /* the bufferevent drops what still comes, with its own timeout */
        event_free(c->reader);
        c->reader = NULL;
    }
    struct timeval linger = {LINGER_SECONDS, 0};
    bufferevent_set_timeouts(bev, &linger, NULL);
    bufferevent_enable(bev, EV_READ);
}

/* The client closed, failed or idled out: the connection ends, once its
 * worker is done when it has one. */
static void ended(struct h1_conn *c)
{
    if (c->state != H1_WORKING)
        return conn_free(c, true);
    c->gone = true;   /* freed when its worker is done */
    reading(c, false);
    bufferevent_disable(c->bev, EV_READ | EV_WRITE);
}

/* c's read timeout ended: a head or request past its limit is answered
 * 408, one not yet (the timer's clock runs a little ahead) watched again;
 * with neither, c idled out and ends. */
static void read_timed_out(struct h1_conn *c)
{
    struct evbuffer *in = bufferevent_get_input(c->bev);
    if (!c->watched_deadline)
        return ended(c);
    if (head_overdue(c, in) || request_overdue(c, in))
        return;
    c->watched_deadline = 0;
    if (!c->reader)   /* a bufferevent's timeout stops its reading */
        bufferevent_enable(c->bev, EV_READ);
    watch_read_deadline(c);
}

static void on_event(struct bufferevent *bev, short events, void *arg)
{
    (void)bev;
    struct h1_conn *c = arg;
    if (events & BEV_EVENT_CONNECTED)   /* TLS handshake done: ALPN is known */
        return on_read(c->bev, c);
    if ((events & BEV_EVENT_TIMEOUT) && (events & BEV_EVENT_READING) &&
        !(events & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
        return read_timed_out(c);
    if (events & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT))
        ended(c);
}

/* The scratch buffer's reference has been drained from an input. */
static void scratch_returned(const void *data, size_t len, void *arg)
{
    (void)data;
    (void)len;
    struct profd_server *s = arg;
    s->h1_scratch_lent = false;
}

/* After a request's reading: what an input still holds of the scratch
 * buffer (a request not all here yet, one pipelined behind it, or its
 * connection busy) is copied into the input's own memory. */
static void scratch_take_back(struct profd_server *s, struct evbuffer *in)
{
    if (!s->h1_scratch_lent)
        return;
    size_t n = evbuffer_get_length(in);
    uint8_t *rest = profd_xmalloc(n);
    evbuffer_remove(in, rest, n);   /* the reference with it */
    evbuffer_unfreeze(in, 0);
    evbuffer_add(in, rest, n);
    evbuffer_freeze(in, 0);
    free(rest);
}

/* A Content-Length body under way with nothing read ahead of it: what
 * the socket holds of it, no more, read with one recv() straight into the
 * body's buffer (grown by READ_SIZE when full). */
static ssize_t recv_body(struct h1_conn *c, evutil_socket_t fd)
{
    if (c->len == c->cap)
        profd_grow(&c->body, &c->cap, c->len + READ_SIZE, 1);
    size_t room = c->cap - c->len;
    size_t want = c->remaining < room ? (size_t)c->remaining : room;
    ssize_t n = recv(fd, c->body + c->len, want, 0);
    if (n > 0) {
        c->len += (size_t)n;
        c->remaining -= (uint64_t)n;
    }
    return n;
}

/* Plaintext: what the socket holds, read with one recv(). An empty input
 * (the usual case between requests) is lent the server's scratch buffer,
 * so a request read whole in one go costs no allocation of its own:
 * libevent would otherwise make and free a READ_SIZE chain for each, and
 * allocations that large make malloc sort its freed small blocks every
 * time. Otherwise the input makes room itself; a body under way is read
 * into its own buffer (recv_body). */
static void on_readable(evutil_socket_t fd, short what, void *arg)
{
    struct h1_conn *c = arg;
    if (what & EV_TIMEOUT)
        return read_timed_out(c);
    struct profd_server *s = c->s;
    struct evbuffer *in = bufferevent_get_input(c->bev);
    bool empty = evbuffer_get_length(in) == 0;
    bool lend = c->state != H1_DETECT && empty && !s->h1_scratch_lent;
    struct evbuffer_iovec room;
    evbuffer_unfreeze(in, 0);   /* a bufferevent keeps its input's end for its own reads */
    ssize_t n = -1;
    if (c->state == H1_BODY && empty && c->remaining) {
        n = recv_body(c, fd);
    } else if (lend) {
        if (!s->h1_scratch)
            s->h1_scratch = profd_xmalloc(READ_SIZE);
        n = recv(fd, s->h1_scratch, READ_SIZE, 0);
        if (n > 0 && evbuffer_add_reference(in, s->h1_scratch, (size_t)n, scratch_returned, s) == 0)
            s->h1_scratch_lent = true;
        else if (n > 0)
            evbuffer_add(in, s->h1_scratch, (size_t)n);
    } else if (evbuffer_reserve_space(in, READ_SIZE, &room, 1) == 1) {
        n = recv(fd, room.iov_base, room.iov_len, 0);
        if (n > 0) {
            room.iov_len = (size_t)n;
            evbuffer_commit_space(in, &room, 1);
        }
    } else {
        errno = ENOMEM;
    }
    evbuffer_freeze(in, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0)
        return ended(c);
    on_read(c->bev, c);   /* may free c; in lives while it holds the scratch */
    scratch_take_back(s, in);
}

void profd_http1_adopt(struct profd_server *s, evutil_socket_t fd, const struct sockaddr *addr)
{
    if (!s->h1_round_end) {
        s->h1_round_end = event_new(s->base, -1, 0, send_unsent, s);
        s->h1_sends = profd_send_batch_new(256, true, unsent_sent);
    }
    struct h1_conn *c = profd_xcalloc(1, sizeof(*c));
    c->s = s;
    profd_server_peer_name(addr, c->peer, sizeof(c->peer));
    c->bev = profd_server_bufferevent(s, fd);
    c->next = s->h1_conns;
    if (s->h1_conns)
        s->h1_conns->prevp = &c->next;
    c->prevp = &s->h1_conns;
    s->h1_conns = c;
    struct timeval idle = {IDLE_SECONDS, 0};
    bufferevent_set_timeouts(c->bev, &idle, &idle);
    bufferevent_setcb(c->bev, on_read, on_write, on_event, c);
    bufferevent_enable(c->bev, EV_WRITE);
    if (!s->tls)
        c->reader = event_new(s->base, fd, EV_READ | EV_PERSIST, on_readable, c);
    reading(c, true);
}

void profd_http1_close_all(struct profd_server *s)
{
    while (s->h1_conns) {
        struct h1_conn *c = s->h1_conns;
        if (!s->tls) {   /* what was answered already goes out before the close */
            unsent_to_output(c);
            profd_server_write_out(c->bev);
        }
        conn_free(c, true);
    }
    if (s->h1_round_end)
        event_free(s->h1_round_end);
    s->h1_round_end = NULL;
    profd_send_batch_free(s->h1_sends);
    s->h1_sends = NULL;
    free(s->h1_scratch);
    s->h1_scratch = NULL;
}
