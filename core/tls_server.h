// SPDX-License-Identifier: Apache-2.0
/*
 * Server TLS for the core's servers, kept out of the executable: OpenSSL is
 * used through profd-tls.so (core/tls/server_openssl.c), loaded the first
 * time a server is configured with TLS, so that a profd serving no TLS
 * (profd convert, a sidecar on loopback) never maps OpenSSL, whose
 * relocated tables alone keep about 1.7 MB resident.
 */
#ifndef PROFD_TLS_SERVER_H
#define PROFD_TLS_SERVER_H

#include <event2/bufferevent.h>
#include <event2/util.h>
#include <stdbool.h>
#include <stddef.h>

/* The symbol profd-tls.so defines: a struct profd_tls_server_ops. */
#define PROFD_TLS_SERVER_OPS "profd_tls_server_ops_v1"

struct profd_tls_server_ops {
    /* A context serving the certificate chain cert with key (PEM files),
     * requiring client certificates of client_ca when that is set; ALPN
     * chooses h2, and http/1.1 too when http1. NULL with err filled. */
    void *(*context_new)(const char *cert, const char *key, const char *client_ca, bool http1,
                         char *err, size_t errlen);
    void (*context_free)(void *ctx);
    /* A bufferevent that accepts a TLS connection on fd (closed with it). */
    struct bufferevent *(*bufferevent_new)(void *ctx, struct event_base *base,
                                           evutil_socket_t fd);
    /* True when the handshake on bev (one bufferevent_new made) chose h2. */
    bool (*chose_h2)(struct bufferevent *bev);
};

/* The operations, profd-tls.so loaded on the first call (from next to the
 * executable, or its ../lib/profd when installed). Thread-safe. NULL with
 * err filled when it cannot be loaded. */
const struct profd_tls_server_ops *profd_tls_server(char *err, size_t errlen);

#endif
