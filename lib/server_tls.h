// SPDX-License-Identifier: Apache-2.0
/* The TLS settings of a receiver's server, and their options table, shared
 * by the receivers that listen (OTLP, Parca). */
#ifndef PROFD_LIB_SERVER_TLS_H
#define PROFD_LIB_SERVER_TLS_H

#include <stddef.h>

#include "profd/options.h"
#include "profd/plugin.h"

struct server_tls {
    char *cert_file, *key_file, *client_ca_file;
};

static const struct profd_option server_tls_options[] = {
    {"cert_file", PROFD_OPT_STRING, offsetof(struct server_tls, cert_file), NULL,
     "server certificate chain (PEM); set: TLS"},
    {"key_file", PROFD_OPT_STRING, offsetof(struct server_tls, key_file), NULL,
     "server key (PEM)"},
    {"client_ca_file", PROFD_OPT_STRING, offsetof(struct server_tls, client_ca_file), NULL,
     "CA of the client certificates to require (PEM)"},
    {0},
};

/* True when TLS is configured: both files, or neither (false). */
static inline int server_tls_on(const struct server_tls *t)
{
    return t->cert_file && *t->cert_file;
}

/* True when exactly one of cert_file and key_file is set. */
static inline int server_tls_half(const struct server_tls *t)
{
    return server_tls_on(t) != (t->key_file && *t->key_file);
}

/* PROFD_OK, or PROFD_ERR with a diagnostic on t when only half of it is
 * set. */
static inline int server_tls_validate(const struct profd_host *host, struct profd_diag *d,
                                      const struct server_tls *t)
{
    if (!server_tls_half(t))
        return PROFD_OK;
    host->diag(d, t, "TLS needs both cert_file and key_file");
    return PROFD_ERR;
}

#endif
