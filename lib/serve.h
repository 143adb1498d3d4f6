// SPDX-License-Identifier: Apache-2.0
/* Starting a receiver's server from its endpoint, TLS and size options. */
#ifndef PROFD_LIB_SERVE_H
#define PROFD_LIB_SERVE_H

#include <stddef.h>
#include <stdint.h>

#include "profd/plugin.h"
#include "server_tls.h"

/* The limits every receiver that listens takes besides its largest
 * request (whose option is named its own way). */
struct serve_limits {
    /* The bodies held at once (see core/body_budget.h). */
    uint64_t max_request_bytes_in_flight;
    /* A client trickling a request's head byte by byte would otherwise
     * hold its connection (and a descriptor) for as long as it likes, each
     * byte putting the idle timeout off again. */
    int64_t read_header_timeout;
    /* The same for a whole request, its body too (off by default, as in
     * Go's servers: a large body over a slow link takes long). */
    int64_t read_timeout;
};

/* The options of struct serve_limits, at offset `at` of a config. */
#define SERVE_LIMITS_OPTIONS(at)                                                               \
    {"max_request_bytes_in_flight", PROFD_OPT_SIZE,                                            \
     (at) + offsetof(struct serve_limits, max_request_bytes_in_flight), "256MiB",              \
     "the most bytes of request bodies held at once, over all connections (a body counts from " \
     "64 KiB, for what its head announces); a request with no room is refused with 503 or "     \
     "gRPC UNAVAILABLE, which clients retry; 0 for no limit"},                                  \
    {"read_header_timeout", PROFD_OPT_DURATION,                                                \
     (at) + offsetof(struct serve_limits, read_header_timeout), "60s",                         \
     "how long an HTTP/1.1 request's head may take to come in once begun (then 408, and the "   \
     "connection closed); 0 for no limit"},                                                     \
    {"read_timeout", PROFD_OPT_DURATION, (at) + offsetof(struct serve_limits, read_timeout),    \
     "0s", "how long a whole request, head and body, may take to come in once begun (then "    \
     "408, or gRPC DEADLINE_EXCEEDED), whether its client keeps sending or went silent; 0 for " \
     "no limit"}

/* Checks that l's max_request_bytes_in_flight has room for the largest
 * request the receiver takes, max_body bytes (its option body_option): a
 * limit below it refuses such requests however idle the server is.
 * PROFD_OK, or PROFD_ERR said at that option. */
int serve_limits_validate(const struct profd_host *host, struct profd_diag *d,
                          const struct serve_limits *l, uint64_t max_body,
                          const char *body_option);

/* Checks what a receiver serving one endpoint sets for its server: its TLS
 * settings, and its limits as above. */
int serve_validate(const struct profd_host *host, struct profd_diag *d,
                   const struct server_tls *tls, const struct serve_limits *l,
                   uint64_t max_body, const char *body_option);

/* Starts a server as o says (its TLS files taken from tls, its limits from
 * limits) and logs
 * "<what> on <address>" (with " (TLS)" when so), or the reason it could
 * not; NULL then. fn(arg, ...) handles each request. Main thread. */
struct profd_server *serve_endpoint(const struct profd_host *host, struct profd_component *self,
                                    struct profd_server_options o, const struct server_tls *tls,
                                    const struct serve_limits *limits, profd_rpc_handler fn,
                                    void *arg, const char *what);

/* The state of a receiver serving one endpoint (Parca's, Pyroscope's):
 * the handler's arg; cfg is the module's config struct. */
struct served_receiver {
    const struct profd_host *host;
    struct profd_component *self;
    const void *cfg;
    struct profd_server *server;
};

/* Plugin callbacks of such a receiver: create allocates the state, shutdown
 * stops the server (idempotent), destroy shuts down and frees. */
int served_receiver_create(const struct profd_host *host, struct profd_component *self,
                           const void *cfg, void **out);
int served_receiver_shutdown(void *st);
void served_receiver_destroy(void *st);

#endif
