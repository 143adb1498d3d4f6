// SPDX-License-Identifier: Apache-2.0
#include "client_auth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_headers.h"
#include "option_set.h"
#include "proxy_url.h"

bool client_authorization_set(const struct client_auth *a)
{
    return option_set(a->authorization.credentials) ||
           option_set(a->authorization.credentials_file);
}

/* How many ways a gives credentials. */
static int ways(const struct client_auth *a)
{
    return (option_set(a->bearer_token) || option_set(a->bearer_token_file)) +
           client_authorization_set(a) + option_set(a->basic_auth.username) +
           oauth2_set(&a->oauth2);
}

bool client_auth_credentials_set(const struct client_auth *a)
{
    return ways(a) > 0;
}

/* Where credentials set more than one way are said to be: at the last of
 * them in the order the options are written. */
static const void *second_way(const struct client_auth *a)
{
    return oauth2_set(&a->oauth2)               ? (const void *)&a->oauth2
           : option_set(a->basic_auth.username) ? (const void *)&a->basic_auth
                                                : (const void *)&a->authorization;
}

/* The option of a given in the config that holds a line break, which
 * would end the header it goes in, and its name; NULL when none does
 * (files' secrets end at their first line). */
static const void *broken_line(const struct client_auth *a, const char **name)
{
    const struct {
        char *const *value;
        const char *name;
    } given[] = {
        {&a->bearer_token, "bearer_token"},
        {&a->authorization.type, "authorization's type"},
        {&a->authorization.credentials, "authorization's credentials"},
        {&a->basic_auth.username, "basic_auth's username"},
        {&a->basic_auth.password, "basic_auth's password"},
    };
    for (size_t i = 0; i < sizeof(given) / sizeof(given[0]); i++)
        if (*given[i].value && strpbrk(*given[i].value, "\r\n")) {
            *name = given[i].name;
            return given[i].value;
        }
    return NULL;
}

/* Checks a's proxy_connect_header: names HTTP tokens, given once, values
 * without line breaks, and a proxy to send them to. */
static int validate_proxy_headers(const struct profd_host *host, struct profd_diag *d,
                                  const struct client_auth *a, const char *what)
{
    const struct profd_map *m = &a->proxy_connect_header;
    const struct profd_str_list *values = m->values;
    for (size_t i = 0; i < m->n; i++) {
        const char *why = http_header_name_problem(m, i);
        if (!why && http_header_values_broken(&values[i]))
            why = "a value holds a line break";
        if (why) {
            host->diag(d, &values[i], "%sproxy_connect_header: '%s': %s", what, m->keys[i], why);
            return PROFD_ERR;
        }
    }
    if (m->n && !option_set(a->proxy_url) && !a->proxy_from_environment) {
        host->diag(d, m, "%sproxy_connect_header needs proxy_url or proxy_from_environment",
                   what);
        return PROFD_ERR;
    }
    return PROFD_OK;
}

int client_auth_validate(const struct profd_host *host, struct profd_diag *d,
                         const struct client_auth *a, const char *what)
{
    const char *name;
    const void *broken = broken_line(a, &name);
    if (broken) {
        host->diag(d, broken, "%s%s holds a line break, which no header can carry", what, name);
        return PROFD_ERR;
    }
    const void *where = NULL;
    const char *why = NULL;
    const struct client_oauth2 *o = &a->oauth2;
    const struct client_authorization *z = &a->authorization;
    if (ways(a) > 1) {
        where = second_way(a);
        why = "at most one of bearer_token (or bearer_token_file), authorization, basic_auth "
              "and oauth2 may be set";
    } else if (option_set(z->credentials) && option_set(z->credentials_file)) {
        where = &z->credentials_file;
        why = "authorization's credentials and credentials_file cannot both be set";
    } else if (z->type && !strcasecmp(z->type, "basic")) {
        where = &z->type;
        why = "authorization type cannot be Basic: use basic_auth";
    } else if (oauth2_set(o) && (!option_set(o->client_id) || !option_set(o->token_url))) {
        where = o;
        why = "oauth2 needs client_id and token_url";
    } else if (option_set(o->client_secret) && option_set(o->client_secret_file)) {
        where = &o->client_secret_file;
        why = "oauth2's client_secret and client_secret_file cannot both be set";
    } else if (option_set(a->bearer_token) && option_set(a->bearer_token_file)) {
        where = &a->bearer_token_file;
        why = "bearer_token and bearer_token_file cannot both be set";
    } else if (option_set(a->basic_auth.password) && option_set(a->basic_auth.password_file)) {
        where = &a->basic_auth.password_file;
        why = "basic_auth's password and password_file cannot both be set";
    } else if ((option_set(a->basic_auth.password) || option_set(a->basic_auth.password_file)) &&
               !option_set(a->basic_auth.username)) {
        where = &a->basic_auth;
        why = "basic_auth needs a username";
    }
    if (why) {
        host->diag(d, where, "%s%s", what, why);
        return PROFD_ERR;
    }
    if (option_set(a->no_proxy) && !option_set(a->proxy_url)) {
        host->diag(d, &a->no_proxy, "%sno_proxy needs proxy_url", what);
        return PROFD_ERR;
    }
    if (!proxy_url_valid(a->proxy_url)) {
        host->diag(d, &a->proxy_url, "%sproxy_url '%s' is not http://, https:// or socks5://",
                   what, a->proxy_url);
        return PROFD_ERR;
    }
    return validate_proxy_headers(host, d, a, what);
}

const char *client_auth_failure(CURL *h, CURLcode rc, char *buf, size_t len)
{
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_HTTP_CONNECTCODE, &status);
    if (status >= 300)
        snprintf(buf, len, "the proxy refused the tunnel: HTTP %ld", status);
    else
        snprintf(buf, len, "%s", curl_easy_strerror(rc));
    return buf;
}

struct curl_slist *client_auth_apply_proxy(const struct client_auth *a, CURL *h)
{
    char *proxy = option_set(a->proxy_url) ? proxy_url_for_curl(a->proxy_url) : NULL;
    if (proxy || !a->proxy_from_environment)
        curl_easy_setopt(h, CURLOPT_PROXY, proxy ? proxy : "");
    if (proxy)
        curl_easy_setopt(h, CURLOPT_NOPROXY, a->no_proxy ? a->no_proxy : "");
    free(proxy);
    const struct profd_str_list *values = a->proxy_connect_header.values;
    struct curl_slist *lines = NULL;
    for (size_t i = 0; i < a->proxy_connect_header.n; i++)
        for (size_t k = 0; k < values[i].n; k++)
            http_header_append(&lines, a->proxy_connect_header.keys[i], values[i].items[k],
                               strlen(values[i].items[k]));
    curl_easy_setopt(h, CURLOPT_PROXYHEADER, lines);
    return lines;
}
