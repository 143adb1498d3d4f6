// SPDX-License-Identifier: Apache-2.0
/* Starting a receiver's server from its endpoint, TLS and size options. */
#ifndef PROFD_LIB_SERVE_H
#define PROFD_LIB_SERVE_H

#include <stddef.h>

#include "profd/plugin.h"
#include "server_tls.h"

/* The option read_header_timeout (a PROFD_OPT_DURATION at offset at), as
 * every receiver that listens has it: a client trickling a request's head
 * byte by byte would otherwise hold its connection (and a descriptor) for
 * as long as it likes, each byte putting the idle timeout off again. */
#define SERVE_READ_HEADER_TIMEOUT_OPTION(at)                                                   \
    {"read_header_timeout", PROFD_OPT_DURATION, (at), "60s",                                    \
     "how long an HTTP/1.1 request's head may take to come in once begun (then 408, and the "   \
     "connection closed); 0 for no limit"}

/* Starts a server as o says (its TLS files taken from tls) and logs
 * "<what> on <address>" (with " (TLS)" when so), or the reason it could
 * not; NULL then. fn(arg, ...) handles each request. Main thread. */
struct profd_server *serve_endpoint(const struct profd_host *host, struct profd_component *self,
                                    struct profd_server_options o, const struct server_tls *tls,
                                    profd_rpc_handler fn, void *arg, const char *what);

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
