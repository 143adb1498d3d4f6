// SPDX-License-Identifier: Apache-2.0
#include "serve.h"

struct profd_server *serve_endpoint(const struct profd_host *host, struct profd_component *self,
                                    const char *endpoint, enum profd_rpc_protocol protocol,
                                    const struct server_tls *tls, size_t max_body,
                                    profd_rpc_handler fn, void *arg, const char *what)
{
    struct profd_server_options o = {.endpoint = endpoint,
                                     .protocol = protocol,
                                     .tls_cert_file = tls->cert_file,
                                     .tls_key_file = tls->key_file,
                                     .tls_client_ca_file = tls->client_ca_file,
                                     .max_body = max_body};
    char err[512];
    struct profd_server *s = host->server_start(self, &o, fn, arg, err, sizeof(err));
    if (!s)
        host->log(self, PROFD_LOG_ERROR, "%s", err);
    else
        host->log(self, PROFD_LOG_INFO, "%s on %s%s", what, host->server_address(s),
                  server_tls_on(tls) ? " (TLS)" : "");
    return s;
}
