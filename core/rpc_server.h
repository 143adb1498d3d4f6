// SPDX-License-Identifier: Apache-2.0
/*
 * Servers on the event loop for the modules (struct profd_server_options in
 * plugin.h): gRPC unary calls over HTTP/2 (nghttp2; h2c with prior knowledge
 * or TLS with ALPN h2) and HTTP/1.1 requests (libevent's evhttp, TLS through
 * OpenSSL). What both share lives here: the listening address, the TLS
 * context, the size limit, and the log and counters of the owning component.
 */
#ifndef PROFD_RPC_SERVER_H
#define PROFD_RPC_SERVER_H

#include <openssl/ssl.h>
#include <sys/socket.h>

#include "profd/plugin.h"

struct h2_conn;

struct profd_server {
    struct profd_component *self;
    struct event_base *base;
    struct profd_server_options o;
    char *endpoint;                  /* owned copies of the option strings */
    char address[80];                /* what it listens on, port resolved */
    profd_rpc_handler fn;
    void *arg;
    SSL_CTX *tls;                    /* NULL: plaintext */
    struct evconnlistener *listener; /* gRPC */
    struct h2_conn *conns;           /* gRPC connections, a list */
    struct evhttp *http;             /* HTTP/1.1 */
};

/* See struct profd_host.server_start / server_stop. */
struct profd_server *profd_server_start(struct profd_component *self,
                                        const struct profd_server_options *o,
                                        profd_rpc_handler fn, void *arg, char *err,
                                        size_t errlen);
void profd_server_stop(struct profd_server *s);
const char *profd_server_address(const struct profd_server *s);
/* Records the address fd listens on in s->address. */
void profd_server_note_address(struct profd_server *s, int fd);

/* Protocol halves, in h2_server.c and http1_server.c: 0, or -1 with err. */
int profd_h2_listen(struct profd_server *s, const struct sockaddr *addr, int addrlen, char *err,
                    size_t errlen);
void profd_h2_close_all(struct profd_server *s);
int profd_http1_listen(struct profd_server *s, const char *host, int port, char *err,
                       size_t errlen);

/* Logs a refused request (who and why) and counts it. */
void profd_server_refused(struct profd_server *s, const char *peer, const char *path,
                          const char *why);

#endif
