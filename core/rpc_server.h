// SPDX-License-Identifier: Apache-2.0
/*
 * Servers on the event loop for the modules (struct profd_server_options in
 * plugin.h): gRPC unary calls over HTTP/2 (nghttp2; h2c with prior knowledge
 * or TLS with ALPN h2), and HTTP servers taking HTTP/1.1 and HTTP/2 on one
 * port (http1_server.c tells them apart; gRPC calls arriving over HTTP/2
 * are served too); TLS through profd-tls.so (tls_server.h). What they share lives here: the
 * listener, the TLS context, the size limit, the checks every HTTP request
 * gets whatever its version, and the log and counters of the owning
 * component. Each server serves on every loop of the daemon (serve_loops.h).
 */
#ifndef PROFD_RPC_SERVER_H
#define PROFD_RPC_SERVER_H

#include <event2/bufferevent.h>
#include <event2/util.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/socket.h>

#include "body_budget.h"
#include "body_lend.h"
#include "log.h"
#include "profd/plugin.h"
#include "tls_server.h"
#include "work_pool.h"

struct h2_conn;
struct h1_conn;

/* Refused requests logged a second per server: a client sending nothing
 * but bad requests does not fill the log, and every refusal is counted. */
#define REFUSALS_LOGGED 10

struct profd_server {
    struct profd_component *self;
    struct profd_server *next_of_self;   /* self's servers, a list (main thread) */
    struct event_base *base;
    struct profd_server_options o;
    char *endpoint;                  /* owned copies of the option strings */
    char address[80];                /* what it listens on, port resolved */
    profd_rpc_handler fn;
    void *arg;
    void *tls;                       /* the TLS context; NULL: plaintext */
    const struct profd_tls_server_ops *tls_ops;
    struct evconnlistener *listener;
    struct profd_accept_guard *accept_guard;   /* of listener */
    struct h2_conn *conns;           /* HTTP/2 connections, a list */
    struct h1_conn *h1_conns;        /* HTTP/1.1 (and not yet told apart), a list */
    struct h1_conn *h1_unsent;       /* those with responses waiting for the round's end */
    struct event *h1_round_end;      /* made active to send them */
    struct profd_send_batch *h1_sends;   /* sends them together */
    char *h1_scratch;                /* one recv() of a connection, lent to its input */
    bool h1_scratch_lent;            /* still referenced by an input */
    struct profd_work_pool *workers; /* for large requests, started on the first; its
                                        parts' too (made at once when it has parts) */
    struct profd_work_returns *returns;   /* a part's: its workers' answers come to its loop */
    struct profd_log_limit refusals_log;   /* REFUSALS_LOGGED a second (its parts' too), the rest counted */
    /* The daemon's other loops (serve_loops.h): the server the module
     * started, on the main loop, has a part on each, and hands each
     * connection it accepts to whichever of itself and its parts has the
     * fewest open. A part is a
     * server of its own, sharing its options, handler and TLS context,
     * whose connections are served on its loop's thread alone. */
    struct profd_serve_loops *loops;  /* NULL: no parts (and in a part) */
    struct profd_server *root;        /* a part's server, whose refusals log it shares; NULL in it */
    struct profd_server **parts;
    unsigned nparts, turn;
    /* Connections open on its loop, counted from when the root hands one
     * over (to the loop with the fewest) until it ends there. */
    atomic_size_t connections;
    /* The bodies its requests hold, and those of its parts (a part's own
     * is unused: see profd_server_count_body). */
    struct profd_body_budget bodies;
};

/* Whether an HTTP answer of this status asks the client to come back
 * later (429, 503: full queues, the server's own limits): such answers
 * carry Retry-After: 1, which OTLP and Pyroscope clients wait for. */
static inline bool profd_http_retry_later(int status)
{
    return status == 429 || status == 503;
}

/* See struct profd_host.server_start / server_stop. */
struct profd_server *profd_server_start(struct profd_component *self,
                                        const struct profd_server_options *o,
                                        profd_rpc_handler fn, void *arg, char *err,
                                        size_t errlen);
void profd_server_stop(struct profd_server *s);
/* One of s's connections ended (on s's loop); a connection handed from
 * HTTP/1.1 to HTTP/2 goes on and has not. */
void profd_server_connection_ended(struct profd_server *s);
/* The address s listens on, "host:port" ("[v6]:port"), owned by s. */
const char *profd_server_address(const struct profd_server *s);
/* Records the address fd listens on in s->address. */
void profd_server_note_address(struct profd_server *s, int fd);

/* A bufferevent for an accepted connection: TLS (handshake to come) when
 * the server has it. Freed with profd_server_bufferevent_free. */
struct bufferevent *profd_server_bufferevent(struct profd_server *s, evutil_socket_t fd);
/* Frees a bufferevent from profd_server_bufferevent and closes its socket:
 * a plaintext one by profd itself, its events taken off the loop first, so
 * that ThreadSanitizer sees the descriptor closed (a close inside libevent
 * is not seen, and another thread's file given the number next made
 * profd's own reads of the socket look like races with that file). */
void profd_server_bufferevent_free(struct profd_server *s, struct bufferevent *bev);

/* Writes what a plaintext connection's output holds straight to its
 * socket, as much as it takes now: for a connection about to be closed
 * (a bufferevent's output is otherwise written only by its own events). */
void profd_server_write_out(struct bufferevent *bev);

/* "host:port" of addr into out. */
void profd_server_peer_name(const struct sockaddr *addr, char *out, size_t n);

/* Protocol halves, in h2_server.c and http1_server.c: each takes over an
 * accepted connection (HTTP/2 also one that http1_server.c found to be
 * HTTP/2, with what it read so far still in its input), and closes all of
 * its connections when the server stops. */
void profd_h2_adopt(struct profd_server *s, evutil_socket_t fd, const struct sockaddr *addr);
void profd_h2_adopt_bev(struct profd_server *s, struct bufferevent *bev, const char *peer);
void profd_h2_close_all(struct profd_server *s);
void profd_http1_adopt(struct profd_server *s, evutil_socket_t fd, const struct sockaddr *addr);
void profd_http1_close_all(struct profd_server *s);

/*
 * An HTTP request of either version, with req's path, query, content type
 * and header lookup set by the caller: refuses a method other than POST
 * (405), an unknown Content-Encoding (415), a body that does not decompress
 * (400) or decompresses past the limit (413) with a text answer in res;
 * otherwise hands the decompressed body to the module's handler, lending
 * it to the records made from it (raw_lender: where the server keeps raw's
 * buffer, or NULL). Refusals, the module's too, are logged and counted.
 */
void profd_server_http(struct profd_server *s, const char *peer, bool is_post,
                       const char *encoding, const uint8_t *raw, size_t raw_len,
                       const struct profd_body_lender *raw_lender,
                       struct profd_rpc_request *req, struct profd_rpc_response *res);

/* Makes *body (*cap bytes, holding none of the request's yet) ready for a
 * body that says it has `announced` bytes: all of them up to 1 MiB (a
 * client that announces much and sends little gets no more), so that a
 * large body is not copied from buffer to buffer as it comes. */
void profd_server_body_reserve(uint8_t **body, size_t *cap, uint64_t announced);

/* Has a request body of s's count len bytes (what its head announced, or
 * what came) against the bytes the server holds at once (*counted: what it
 * counts already, 0 at first; see body_budget.h). False, with why filled,
 * when there is no room for it: the request is then refused with 503 /
 * UNAVAILABLE, which clients take as "try again later". Loop's thread. */
bool profd_server_count_body(struct profd_server *s, size_t *counted, size_t len, char *why,
                             size_t whylen);
/* Gives back what a request body counted (none after). Loop's thread. */
void profd_server_release_body(struct profd_server *s, size_t *counted);

/* Whether a request to path (path_len bytes) with query, whose body has
 * len bytes, is handled on a worker thread: when the module says it is
 * costly (profd_server_options.costly); from PROFD_SERVER_WORKER_FROM
 * bytes on, the work of one request
 * (decompressing, checking, the pipeline) is long enough to stall every
 * other connection, and a hand-over costs little beside it; and at any size
 * while the pipeline is congested (profd_graph_congested), so that a
 * request waiting for room in a full queue waits there, not on the loop;
 * and at any size when the pipeline has a slow processor or syncs files
 * before it returns (profd_graph_slow: symbolize, whose lookups and fetches
 * take long; an exporter's sending_queue.storage_fsync).
 * The workers (one per CPU, at most 8, for a server and its parts) start as
 * such requests come; false when none can be had, and the request is
 * served on the loop. */
#define PROFD_SERVER_WORKER_FROM ((size_t)64 << 10)
bool profd_server_to_worker(struct profd_server *s, size_t len, const char *path,
                            size_t path_len, const char *query);

/* Hands req to the module's handler, its body lent to the records made
 * from it (body_lend.h; lender: where the server keeps the body's buffer,
 * or NULL). Only on a worker may the pipeline wait
 * for room in a full queue, and not past deadline_ns (CLOCK_MONOTONIC; 0
 * for none), when the client said when it gives up: on the loop, which
 * serves every connection, a full queue refuses at once (the handler's
 * "retry later"). */
void profd_server_handle(struct profd_server *s, struct profd_rpc_request *req,
                         const struct profd_body_lender *lender, struct profd_rpc_response *res,
                         int64_t deadline_ns);

/* Runs w, a request of len bytes, on one of the server's workers
 * (profd_server_to_worker said yes), w->done back on s's loop's thread. */
void profd_server_work(struct profd_server *s, struct profd_work *w, size_t len);

/* Logs a refused request (who and why) and counts it. */
void profd_server_refused(struct profd_server *s, const char *peer, const char *path,
                          const char *why);

#endif
