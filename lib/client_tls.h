// SPDX-License-Identifier: Apache-2.0
/* The TLS settings of a module's outbound connections, and their options
 * table, shared by the modules that connect out (scrape, exporters). */
#ifndef PROFD_LIB_CLIENT_TLS_H
#define PROFD_LIB_CLIENT_TLS_H

#include <stdbool.h>
#include <stddef.h>

#include "profd/options.h"
#include "profd/plugin.h"

struct client_tls {
    char *ca_file, *cert_file, *key_file;
    bool insecure_skip_verify;
    char *server_name;               /* NULL: the URL's host */
    char *min_version, *max_version; /* "TLS10".."TLS13"; NULL: TLS12, and no maximum */
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
    {"server_name", PROFD_OPT_STRING, offsetof(struct client_tls, server_name), NULL,
     "the name to ask for (SNI) and check the certificate against, instead of the URL's host"},
    {"min_version", PROFD_OPT_STRING, offsetof(struct client_tls, min_version), "TLS12",
     "the oldest TLS version to accept: TLS10, TLS11, TLS12 or TLS13"},
    {"max_version", PROFD_OPT_STRING, offsetof(struct client_tls, max_version), NULL,
     "the newest TLS version to offer (TLS10 to TLS13); unset: the newest there is"},
    {0},
};

/* Checks t's versions (known names, min not above max) and server_name (a
 * host name, no port or path), telling host's diagnostics d what is wrong
 * and for whom (what, e.g. "job 'app': "). PROFD_OK or PROFD_ERR. */
int client_tls_validate(const struct profd_host *host, struct profd_diag *d,
                        const struct client_tls *t, const char *what);

/* Whether t gives anything its defaults do not (a file, verification
 * off, a name, a version other than TLS12 at least). */
bool client_tls_given(const struct client_tls *t);

/* Sets t's CA, client certificate and key, whether to verify, and the TLS
 * versions on the libcurl handle easy (a CURL *); t NULL or empty fields
 * set nothing. server_name is client_tls_route's. */
void client_tls_apply(void *easy, const struct client_tls *t);

/*
 * How to request a URL for a server_name: the URL with server_name for its
 * host (so that the handshake names it, and the certificate is checked
 * against it), a libcurl connect-to entry that still takes the request to
 * the URL's own host and port, and a Host header naming those. All NULL
 * when the URL goes as it is: no server_name, or not https.
 */
struct client_tls_route {
    char *url;
    struct curl_slist *connect_to;
    char *host_header;   /* "Host: host[:port]" */
};

/* The route of url for server_name (NULL: none) into *out. */
void client_tls_route(const char *server_name, const char *url, struct client_tls_route *out);

/* Sets easy's URL (the route's, or url) and connect-to (the route's, or
 * none). The route must outlive the handle's transfers. */
void client_tls_route_apply(void *easy, const char *url, const struct client_tls_route *r);

/* Frees what client_tls_route made; zeroes r. */
void client_tls_route_free(struct client_tls_route *r);

#endif
