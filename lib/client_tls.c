// SPDX-License-Identifier: Apache-2.0
#include "client_tls.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

static const char *const version_names[] = {"TLS10", "TLS11", "TLS12", "TLS13"};
#define NVERSIONS (sizeof(version_names) / sizeof(*version_names))

/* The index of a version name in version_names; unset gives fallback, an
 * unknown name -1. */
static int version_index(const char *name, int fallback)
{
    if (!name || !*name)
        return fallback;
    for (size_t i = 0; i < NVERSIONS; i++)
        if (!strcmp(name, version_names[i]))
            return (int)i;
    return -1;
}

#define MIN_DEFAULT 2   /* TLS12, Go's (and so Prometheus's) */
#define MAX_DEFAULT ((int)NVERSIONS - 1)

bool client_tls_given(const struct client_tls *t)
{
    return t->ca_file || t->cert_file || t->key_file || t->insecure_skip_verify ||
           t->server_name || t->max_version ||
           version_index(t->min_version, MIN_DEFAULT) != MIN_DEFAULT;
}

int client_tls_validate(const struct profd_host *host, struct profd_diag *d,
                        const struct client_tls *t, const char *what)
{
    int lo = version_index(t->min_version, MIN_DEFAULT);
    int hi = version_index(t->max_version, MAX_DEFAULT);
    int rc = PROFD_OK;
    if (lo < 0 || hi < 0) {
        const char *bad = lo < 0 ? t->min_version : t->max_version;
        host->diag(d, lo < 0 ? (const void *)&t->min_version : (const void *)&t->max_version,
                   "%sunknown TLS version '%s': TLS10, TLS11, TLS12 or TLS13", what, bad);
        rc = PROFD_ERR;
    } else if (lo > hi) {
        host->diag(d, &t->min_version, "%smin_version %s is above max_version %s", what,
                   version_names[lo], version_names[hi]);
        rc = PROFD_ERR;
    }
    if (t->server_name && (!*t->server_name || strpbrk(t->server_name, ":/?#@[] \t\r\n"))) {
        host->diag(d, &t->server_name, "%sserver_name '%s' is not a host name", what,
                   t->server_name);
        rc = PROFD_ERR;
    }
    return rc;
}

void client_tls_apply(void *easy, const struct client_tls *t)
{
    CURL *h = easy;
    if (!t)
        return;
    if (t->ca_file && *t->ca_file)
        curl_easy_setopt(h, CURLOPT_CAINFO, t->ca_file);
    if (t->cert_file && *t->cert_file)
        curl_easy_setopt(h, CURLOPT_SSLCERT, t->cert_file);
    if (t->key_file && *t->key_file)
        curl_easy_setopt(h, CURLOPT_SSLKEY, t->key_file);
    if (t->insecure_skip_verify) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    static const long lowest[NVERSIONS] = {CURL_SSLVERSION_TLSv1_0, CURL_SSLVERSION_TLSv1_1,
                                           CURL_SSLVERSION_TLSv1_2, CURL_SSLVERSION_TLSv1_3};
    static const long highest[NVERSIONS] = {
        CURL_SSLVERSION_MAX_TLSv1_0, CURL_SSLVERSION_MAX_TLSv1_1, CURL_SSLVERSION_MAX_TLSv1_2,
        CURL_SSLVERSION_MAX_DEFAULT};
    int lo = version_index(t->min_version, MIN_DEFAULT);
    int hi = version_index(t->max_version, MAX_DEFAULT);
    if (lo >= 0 && hi >= 0)   /* else refused by client_tls_validate */
        curl_easy_setopt(h, CURLOPT_SSLVERSION, lowest[lo] | highest[hi]);
}

void client_tls_route(const char *server_name, const char *url, struct client_tls_route *out)
{
    *out = (struct client_tls_route){0};
    CURLU *u = server_name && *server_name ? curl_url() : NULL;
    char *scheme = NULL, *host = NULL, *port = NULL, *given = NULL;
    if (u && !curl_url_set(u, CURLUPART_URL, url, 0) &&
        !curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) && !strcmp(scheme, "https") &&
        !curl_url_get(u, CURLUPART_HOST, &host, 0) &&
        !curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT)) {
        curl_url_get(u, CURLUPART_PORT, &given, 0);   /* none when url has the scheme's */
        /* url with its authority's host replaced, the rest as it was */
        const char *authority = strstr(url, "://") + 3;
        const char *rest = authority + strcspn(authority, "/?#");
        const char *at = memchr(authority, '@', (size_t)(rest - authority));
        const char *userinfo_end = at ? at + 1 : authority;
        out->url = must_asprintf("https://%.*s%s%s%s%s", (int)(userinfo_end - authority),
                                 authority, server_name, given ? ":" : "", given ? given : "",
                                 rest);
        char *to = must_asprintf("%s:%s:%s:%s", server_name, port, host, port);
        out->connect_to = curl_slist_append(NULL, to);
        free(to);
        out->host_header = must_asprintf("Host: %s%s%s", host, given ? ":" : "",
                                         given ? given : "");
    }
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_free(given);
    curl_url_cleanup(u);
}

void client_tls_route_apply(void *easy, const char *url, const struct client_tls_route *r)
{
    curl_easy_setopt(easy, CURLOPT_URL, r->url ? r->url : url);
    curl_easy_setopt(easy, CURLOPT_CONNECT_TO, r->connect_to);
}

void client_tls_route_free(struct client_tls_route *r)
{
    free(r->url);
    curl_slist_free_all(r->connect_to);
    free(r->host_header);
    *r = (struct client_tls_route){0};
}
