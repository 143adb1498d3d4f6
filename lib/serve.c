// SPDX-License-Identifier: Apache-2.0
#include "serve.h"

#include <inttypes.h>
#include <stdlib.h>

struct profd_server *serve_endpoint(const struct profd_host *host, struct profd_component *self,
                                    struct profd_server_options o, const struct server_tls *tls,
                                    const struct serve_limits *limits, profd_rpc_handler fn,
                                    void *arg, const char *what)
{
    o.max_in_flight = limits->max_request_bytes_in_flight;
    o.read_header_timeout = limits->read_header_timeout;
    o.read_timeout = limits->read_timeout;
    o.tls_cert_file = tls->cert_file;
    o.tls_key_file = tls->key_file;
    o.tls_client_ca_file = tls->client_ca_file;
    char err[512];
    struct profd_server *s = host->server_start(self, &o, fn, arg, err, sizeof(err));
    if (!s)
        host->log(self, PROFD_LOG_ERROR, "%s", err);
    else
        host->log(self, PROFD_LOG_INFO, "%s on %s%s", what, host->server_address(s),
                  server_tls_on(tls) ? " (TLS)" : "");
    return s;
}

int serve_limits_validate(const struct profd_host *host, struct profd_diag *d,
                          const struct serve_limits *l, uint64_t max_body,
                          const char *body_option)
{
    const uint64_t *in_flight = &l->max_request_bytes_in_flight;
    if (*in_flight == 0 || *in_flight >= max_body)
        return PROFD_OK;
    host->diag(d, in_flight,
               "max_request_bytes_in_flight (%" PRIu64 " bytes) is below %s (%" PRIu64
               " bytes): requests that large would always be refused",
               *in_flight, body_option, max_body);
    return PROFD_ERR;
}

int serve_validate(const struct profd_host *host, struct profd_diag *d,
                   const struct server_tls *tls, const struct serve_limits *l,
                   uint64_t max_body, const char *body_option)
{
    int rc = server_tls_validate(host, d, tls);
    if (serve_limits_validate(host, d, l, max_body, body_option) != PROFD_OK)
        rc = PROFD_ERR;
    return rc;
}

int served_receiver_create(const struct profd_host *host, struct profd_component *self,
                           const void *cfg, void **out)
{
    struct served_receiver *r = calloc(1, sizeof(*r));
    if (!r)
        return PROFD_ERR;
    *r = (struct served_receiver){host, self, cfg, NULL};
    *out = r;
    return PROFD_OK;
}

int served_receiver_shutdown(void *st)
{
    struct served_receiver *r = st;
    r->host->server_stop(r->server);
    r->server = NULL;
    return PROFD_OK;
}

void served_receiver_destroy(void *st)
{
    if (st)
        served_receiver_shutdown(st);
    free(st);
}
