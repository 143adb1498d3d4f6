// SPDX-License-Identifier: Apache-2.0
/* How an exporter is let in and gets out: a bearer token or basic auth,
 * each given or read from a file (again when it changes), or an OAuth 2.0
 * token fetched with client credentials; and a proxy;
 * the options, written flat among the exporter's own as Prometheus and
 * Alloy write them. */
#ifndef PROFD_LIB_CLIENT_AUTH_H
#define PROFD_LIB_CLIENT_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "oauth2_token.h"
#include "profd/options.h"
#include "profd/plugin.h"
#include "rpc_client.h"

struct client_basic_auth {
    char *username, *password, *password_file;
};

struct client_auth {
    char *bearer_token, *bearer_token_file;
    struct client_basic_auth basic_auth;
    struct client_oauth2 oauth2;
    char *proxy_url;
};

static const struct profd_option client_basic_auth_options[] = {
    {"username", PROFD_OPT_STRING, offsetof(struct client_basic_auth, username), NULL,
     "user name"},
    {"password", PROFD_OPT_STRING, offsetof(struct client_basic_auth, password), NULL,
     "password"},
    {"password_file", PROFD_OPT_STRING, offsetof(struct client_basic_auth, password_file), NULL,
     "a file holding the password, read again when it changes"},
    {0},
};

/* The option entries of a struct client_auth that is member of type. */
#define CLIENT_AUTH_OPTIONS(type, member)                                                      \
    {"bearer_token", PROFD_OPT_STRING, offsetof(type, member.bearer_token), NULL,              \
     "sent as \"Authorization: Bearer <token>\""},                                             \
    {"bearer_token_file", PROFD_OPT_STRING, offsetof(type, member.bearer_token_file), NULL,   \
     "a file holding the bearer token, read again when it changes"},                          \
    {"basic_auth", PROFD_OPT_OBJECT, offsetof(type, member.basic_auth), NULL,                  \
     "HTTP basic auth", client_basic_auth_options},                                            \
    {"oauth2", PROFD_OPT_OBJECT, offsetof(type, member.oauth2), NULL,                          \
     "OAuth 2.0 client credentials: a bearer token fetched from token_url",                   \
     client_oauth2_options},                                                                   \
    {"proxy_url", PROFD_OPT_STRING, offsetof(type, member.proxy_url), NULL,                    \
     "http://, https:// or socks5:// proxy; unset: the http_proxy-style variables'"}

/* Checks a as Prometheus does: credentials one way at most, a secret given
 * or in a file but not both, a proxy of a known scheme; tells host's
 * diagnostics d what is wrong (prefixed with what). PROFD_OK or
 * PROFD_ERR. */
int client_auth_validate(const struct profd_host *host, struct profd_diag *d,
                         const struct client_auth *a, const char *what);

/* Sets a's credentials and proxy in o. */
void client_auth_to_rpc(const struct client_auth *a, struct rpc_client_options *o);

#endif
