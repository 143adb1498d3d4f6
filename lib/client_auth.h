// SPDX-License-Identifier: Apache-2.0
/* How a client (an exporter, a scrape job) is let in and gets out, as
 * Prometheus's HTTP client configuration says it: a bearer token,
 * authorization of a type, or basic auth, each given or read from a file
 * (again when it changes), or an OAuth 2.0 token fetched with client
 * credentials; and a proxy; the options, written flat among the client's
 * own as Prometheus and Alloy write them. */
#ifndef PROFD_LIB_CLIENT_AUTH_H
#define PROFD_LIB_CLIENT_AUTH_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>

#include "client_proxy.h"
#include "oauth2_token.h"
#include "profd/options.h"
#include "profd/plugin.h"

struct client_basic_auth {
    char *username, *password, *password_file;
};

/* "Authorization: <type> <credentials>", type Bearer unless given. */
struct client_authorization {
    char *type, *credentials, *credentials_file;
};

struct client_auth {
    char *bearer_token, *bearer_token_file;
    struct client_authorization authorization;
    struct client_basic_auth basic_auth;
    struct client_oauth2 oauth2;
    struct client_proxy proxy;
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

static const struct profd_option client_authorization_options[] = {
    {"type", PROFD_OPT_STRING, offsetof(struct client_authorization, type), "Bearer",
     "the header's scheme (Basic is basic_auth's)"},
    {"credentials", PROFD_OPT_STRING, offsetof(struct client_authorization, credentials), NULL,
     "what follows the scheme"},
    {"credentials_file", PROFD_OPT_STRING,
     offsetof(struct client_authorization, credentials_file), NULL,
     "a file holding the credentials, read again when it changes"},
    {0},
};

/* The option entries of a struct client_auth that is member of type;
 * from_environment is proxy_from_environment's default for this client,
 * "true" or "false". */
#define CLIENT_AUTH_OPTIONS(type, member, from_environment)                                    \
    {"bearer_token", PROFD_OPT_STRING, offsetof(type, member.bearer_token), NULL,              \
     "sent as \"Authorization: Bearer <token>\""},                                             \
    {"bearer_token_file", PROFD_OPT_STRING, offsetof(type, member.bearer_token_file), NULL,   \
     "a file holding the bearer token, read again when it changes"},                          \
    {"authorization", PROFD_OPT_OBJECT, offsetof(type, member.authorization), NULL,            \
     "sent as \"Authorization: <type> <credentials>\"", client_authorization_options},          \
    {"basic_auth", PROFD_OPT_OBJECT, offsetof(type, member.basic_auth), NULL,                  \
     "HTTP basic auth", client_basic_auth_options},                                            \
    {"oauth2", PROFD_OPT_OBJECT, offsetof(type, member.oauth2), NULL,                          \
     "OAuth 2.0 client credentials: a bearer token fetched from token_url",                   \
     client_oauth2_options},                                                                   \
    CLIENT_PROXY_OPTIONS(type, member.proxy, from_environment)

/* Checks a as Prometheus does: credentials one way at most, a secret given
 * or in a file but not both, no Basic authorization (basic_auth's), the
 * proxy and the oauth2 block's own as client_proxy_validate does; tells
 * host's diagnostics d what is wrong (prefixed with what). PROFD_OK or
 * PROFD_ERR. */
int client_auth_validate(const struct profd_host *host, struct profd_diag *d,
                         const struct client_auth *a, const char *what);

/* Whether a gives credentials at all, any way. */
bool client_auth_credentials_set(const struct client_auth *a);

/* Whether a's authorization sends anything (its type alone does not). */
bool client_authorization_set(const struct client_auth *a);

#endif
