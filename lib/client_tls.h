// SPDX-License-Identifier: Apache-2.0
/* The TLS settings of a module's outbound connections, and their options
 * table, shared by the modules that connect out (scrape, exporters). */
#ifndef PROFD_LIB_CLIENT_TLS_H
#define PROFD_LIB_CLIENT_TLS_H

#include <stdbool.h>
#include <stddef.h>

#include "profd/options.h"

struct client_tls {
    char *ca_file, *cert_file, *key_file;
    bool insecure_skip_verify;
};

static const struct profd_option client_tls_options[] = {
    {"ca_file", PROFD_OPT_STRING, offsetof(struct client_tls, ca_file), NULL,
     "CA certificates to verify the server with (PEM)"},
    {"cert_file", PROFD_OPT_STRING, offsetof(struct client_tls, cert_file), NULL,
     "client certificate (PEM)"},
    {"key_file", PROFD_OPT_STRING, offsetof(struct client_tls, key_file), NULL,
     "client key (PEM)"},
    {"insecure_skip_verify", PROFD_OPT_BOOL, offsetof(struct client_tls, insecure_skip_verify),
     "false", "do not verify the server's certificate"},
    {0},
};

/* Sets t's CA, client certificate and key, and whether to verify, on the
 * libcurl handle easy (a CURL *); t NULL or empty fields set nothing. */
void client_tls_apply(void *easy, const struct client_tls *t);

#endif
