// SPDX-License-Identifier: Apache-2.0
/*
 * OAuth 2.0 client credentials (RFC 6749 section 4.4), as Prometheus's and
 * Alloy's `oauth2` blocks take them: a token fetched from token_url with
 * the client's id and secret (HTTP basic auth), scopes and extra
 * parameters, kept until 10 s before it expires, then fetched again.
 */
#ifndef PROFD_LIB_OAUTH2_TOKEN_H
#define PROFD_LIB_OAUTH2_TOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "client_proxy.h"
#include "client_tls.h"
#include "profd/options.h"

struct client_oauth2 {
    char *client_id, *client_secret, *client_secret_file, *token_url;
    struct profd_str_list scopes;
    struct profd_str_map endpoint_params;
    struct client_tls tls_config;   /* the token requests' own; none given: the client's */
    struct client_proxy proxy;      /* the same */
};

static const struct profd_option client_oauth2_options[] = {
    {"client_id", PROFD_OPT_STRING, offsetof(struct client_oauth2, client_id), NULL,
     "the client's id"},
    {"client_secret", PROFD_OPT_STRING, offsetof(struct client_oauth2, client_secret), NULL,
     "the client's secret"},
    {"client_secret_file", PROFD_OPT_STRING, offsetof(struct client_oauth2, client_secret_file),
     NULL, "a file holding the secret, read at each token fetch"},
    {"token_url", PROFD_OPT_STRING, offsetof(struct client_oauth2, token_url), NULL,
     "where tokens are fetched (client credentials grant)"},
    {"scopes", PROFD_OPT_STRING_LIST, offsetof(struct client_oauth2, scopes), NULL,
     "scopes asked for"},
    {"endpoint_params", PROFD_OPT_STRING_MAP, offsetof(struct client_oauth2, endpoint_params),
     NULL, "more parameters of the token request"},
    {"tls_config", PROFD_OPT_OBJECT, offsetof(struct client_oauth2, tls_config), NULL,
     "TLS to token_url (no server_name); none of it given: the client's", client_tls_options},
    CLIENT_PROXY_OPTIONS(struct client_oauth2, proxy, "false"),
    {0},
};

/* Whether o is set at all (any of its fields given). */
bool oauth2_set(const struct client_oauth2 *o);

/* The token and its lifetime (s; 0 when the answer gave none) from a token
 * endpoint's JSON answer, the token malloc'd; -1 with why set when the
 * answer is not JSON or holds no access_token a header can carry. */
int oauth2_token_parse(const char *body, size_t len, char **token, int64_t *expires_in,
                       char *why, size_t whylen);

struct oauth2_token;

struct client_auth;

/* A token source for a's oauth2 (a outliving it), its requests going with
 * the oauth2 block's own TLS and proxy, or where it gives none tls and
 * a's proxy, and timing out after timeout ns (0: never). */
struct oauth2_token *oauth2_token_new(const struct client_auth *a, const struct client_tls *tls,
                                      int64_t timeout);

/* Whether a token must be fetched before the next request: there is
 * none, or it expires within 10 s. */
bool oauth2_token_due(const struct oauth2_token *t);

/* The monotonic ns from which a token must be fetched again: 0 while
 * there is none, INT64_MAX when it never expires. */
int64_t oauth2_token_refresh_at(const struct oauth2_token *t);

/* Sets t's handle up for one fetch and returns it, for a caller that
 * performs it, blocking or on a multi handle of its own, and then calls
 * oauth2_token_fetch_finish; NULL with why set when the client's secret
 * cannot be read. One fetch at a time. */
CURL *oauth2_token_fetch_start(struct oauth2_token *t, char *why, size_t whylen);

/* Takes the result rc of the fetch oauth2_token_fetch_start began: true
 * when the answer held a token, which is then the current one; false
 * with why set, the current token left as it was. */
bool oauth2_token_fetch_finish(struct oauth2_token *t, CURLcode rc, char *why, size_t whylen);

/* The "Authorization: Bearer <token>" line of the current token (valid
 * until the next fetch finishes or t is freed), or NULL when none came
 * yet. */
const char *oauth2_token_current(const struct oauth2_token *t);

/* The line to send now, fetching a token first, blocking, when one is
 * due; NULL with why set when the token URL gave none. Calls must not
 * overlap. */
const char *oauth2_token_header(struct oauth2_token *t, char *why, size_t whylen);

/* Frees t; accepts NULL. */
void oauth2_token_free(struct oauth2_token *t);

#endif
