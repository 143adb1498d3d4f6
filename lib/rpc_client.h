// SPDX-License-Identifier: Apache-2.0
/*
 * Unary calls for exporters: gRPC over HTTP/2 (h2c with prior knowledge for
 * http://, ALPN h2 for https://) or HTTP POSTs, through libcurl. Compiled
 * into the modules that send (libcurl stays out of the daemon itself).
 */
#ifndef PROFD_LIB_RPC_CLIENT_H
#define PROFD_LIB_RPC_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client_tls.h"
#include "profd/plugin.h"

struct client_auth;

struct rpc_client_options {
    const char *url;                  /* http(s)://host:port[/path]; no scheme: http:// */
    enum profd_rpc_protocol protocol;
    const char *content_type;         /* HTTP: of the body */
    const char *compression;          /* "gzip", "zstd", or NULL/"" for none */
    const struct profd_str_map *headers;   /* extra request headers, or NULL */
    const char *const *protocol_headers;   /* "Name: value" lines, NULL-ended, or NULL */
    const struct client_tls *tls;     /* or NULL */
    const struct client_auth *auth;   /* credentials and proxy (outliving the client), or
                                       * NULL: none, and libcurl's choice of proxy (the
                                       * http_proxy-style variables) */
    int64_t timeout;                  /* ns per call; 0 = none */
    bool retry_408_5xx;               /* HTTP: also retry 408 and every 5xx (Pyroscope) */
};

/* What one call came back with. body is malloc'd (the caller frees it). */
struct rpc_result {
    int http_status;                  /* 0 when no response came */
    int grpc_status;                  /* gRPC; synthesized from http_status when absent */
    char message[256];                /* why it failed */
    int64_t retry_after;              /* ns the server asked to wait, or 0 */
    uint8_t *body;
    size_t len;
};

struct rpc_client;

/* A client for o's endpoint; host supplies compression. NULL, logged as
 * self's error, when libcurl cannot be set up. */
struct rpc_client *rpc_client_new(const struct profd_host *host, struct profd_component *self,
                                  const struct rpc_client_options *o);

/*
 * Sends body to the URL with path (NULL: none) appended: for gRPC one
 * message to a method such as "/pkg.Service/Method"; for HTTP a POST, path
 * giving what the URL lacks (a path or "?query"). header, unless NULL or
 * "", is one more "Name: value" line for this call alone. Returns
 * PROFD_OK, PROFD_ERETRY for what OTLP says to retry (gRPC UNAVAILABLE and
 * kin, RESOURCE_EXHAUSTED with a RetryInfo, HTTP 429/502/503/504 and with
 * retry_408_5xx 408 and every 5xx, no connection), or PROFD_ERR; res says
 * more in every case. Any thread; calls on one client are serialized.
 */
int rpc_client_call(struct rpc_client *c, const char *path, const char *header,
                    const uint8_t *body, size_t len, struct rpc_result *res);

/* rpc_client_call from an exporter's consume: a failure is logged as
 * "<what> to <url> failed[ (will retry)]: why", and a wait the server asked
 * for goes to host->retry_after for the retry. */
int rpc_client_export(struct rpc_client *c, struct profd_component *self, const char *what,
                      const char *path, const char *header, const uint8_t *body, size_t len,
                      struct rpc_result *res);

/* Frees the client; accepts NULL. */
void rpc_client_free(struct rpc_client *c);

#endif
