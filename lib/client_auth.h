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
    char *proxy_url;
    char *no_proxy;                /* hosts proxy_url is not used for */
    bool proxy_from_environment;   /* with no proxy_url: http_proxy and the like */
    struct profd_map proxy_connect_header;   /* struct profd_str_list: what goes to the proxy */
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

static const struct profd_option client_proxy_header_value[] = {
    {"<name>", PROFD_OPT_STRING_LIST, 0, NULL, "the header's values, each sent as a line"},
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
    {"proxy_url", PROFD_OPT_STRING, offsetof(type, member.proxy_url), NULL,                    \
     "http://, https:// or socks5:// proxy"},                                                  \
    {"no_proxy", PROFD_OPT_STRING, offsetof(type, member.no_proxy), NULL,                      \
     "with proxy_url, the hosts reached without it, separated by commas: names (their "      \
     "subdomains too), IP addresses, CIDR ranges"},                                            \
    {"proxy_from_environment", PROFD_OPT_BOOL, offsetof(type, member.proxy_from_environment),  \
     from_environment,                                                                         \
     "with no proxy_url, the proxy http_proxy, https_proxy and no_proxy name, if any; "      \
     "else none"},                                                                             \
    {"proxy_connect_header", PROFD_OPT_MAP, offsetof(type, member.proxy_connect_header), NULL, \
     "headers sent to the proxy, by name, when a connection goes through it (CONNECT), "      \
     "as Prometheus's proxy_connect_header: say Proxy-Authorization",                         \
     client_proxy_header_value, sizeof(struct profd_str_list)}

/* Checks a as Prometheus does: credentials one way at most, a secret given
 * or in a file but not both, no Basic authorization (basic_auth's), a
 * proxy of a known scheme, no no_proxy without proxy_url, proxy headers
 * of HTTP names without line breaks and only with a proxy; tells host's
 * diagnostics d what is wrong
 * (prefixed with what). PROFD_OK or PROFD_ERR. */
int client_auth_validate(const struct profd_host *host, struct profd_diag *d,
                         const struct client_auth *a, const char *what);

/* Sets the proxy a says on handle h: proxy_url's but for the hosts
 * no_proxy names (the environment's no_proxy not read), else with
 * proxy_from_environment the one the http_proxy-style variables name (as
 * libcurl reads them, no_proxy too), else none; and the headers
 * proxy_connect_header gives the proxy. Returns the list of those
 * headers h now refers to, which the caller frees (curl_slist_free_all)
 * once h is cleaned up or told otherwise; NULL when there are none. */
struct curl_slist *client_auth_apply_proxy(const struct client_auth *a, CURL *h);

/* What a transfer on h that ended with rc (not CURLE_OK) failed of, for
 * a message, written into buf (len bytes), which it returns: the proxy's
 * refusal to open a tunnel, with the status it answered the CONNECT with
 * (407: it wants credentials, which proxy_connect_header or proxy_url's
 * user and password give), else libcurl's word for rc. */
const char *client_auth_failure(CURL *h, CURLcode rc, char *buf, size_t len);

/* Whether a gives credentials at all, any way. */
bool client_auth_credentials_set(const struct client_auth *a);

/* Whether a's authorization sends anything (its type alone does not). */
bool client_authorization_set(const struct client_auth *a);

#endif
