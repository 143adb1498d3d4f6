// SPDX-License-Identifier: Apache-2.0
#include "client_proxy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_headers.h"
#include "option_set.h"
#include "proxy_url.h"

bool client_proxy_given(const struct client_proxy *p)
{
    return option_set(p->proxy_url) || p->proxy_from_environment || p->proxy_connect_header.n;
}

/* Checks p's proxy_connect_header: names HTTP tokens, given once, values
 * without line breaks, and a proxy to send them to. */
static int validate_headers(const struct profd_host *host, struct profd_diag *d,
                            const struct client_proxy *p, const char *what)
{
    const struct profd_map *m = &p->proxy_connect_header;
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
    if (m->n && !option_set(p->proxy_url) && !p->proxy_from_environment) {
        host->diag(d, m, "%sproxy_connect_header needs proxy_url or proxy_from_environment",
                   what);
        return PROFD_ERR;
    }
    return PROFD_OK;
}

int client_proxy_validate(const struct profd_host *host, struct profd_diag *d,
                          const struct client_proxy *p, const char *what)
{
    if (option_set(p->no_proxy) && !option_set(p->proxy_url)) {
        host->diag(d, &p->no_proxy, "%sno_proxy needs proxy_url", what);
        return PROFD_ERR;
    }
    if (!proxy_url_valid(p->proxy_url)) {
        host->diag(d, &p->proxy_url, "%sproxy_url '%s' is not http://, https:// or socks5://",
                   what, p->proxy_url);
        return PROFD_ERR;
    }
    return validate_headers(host, d, p, what);
}

struct curl_slist *client_proxy_apply(const struct client_proxy *p, CURL *h)
{
    char *proxy = option_set(p->proxy_url) ? proxy_url_for_curl(p->proxy_url) : NULL;
    if (proxy || !p->proxy_from_environment)
        curl_easy_setopt(h, CURLOPT_PROXY, proxy ? proxy : "");
    if (proxy)
        curl_easy_setopt(h, CURLOPT_NOPROXY, p->no_proxy ? p->no_proxy : "");
    free(proxy);
    const struct profd_str_list *values = p->proxy_connect_header.values;
    struct curl_slist *lines = NULL;
    for (size_t i = 0; i < p->proxy_connect_header.n; i++)
        for (size_t k = 0; k < values[i].n; k++)
            http_header_append(&lines, p->proxy_connect_header.keys[i], values[i].items[k],
                               strlen(values[i].items[k]));
    curl_easy_setopt(h, CURLOPT_PROXYHEADER, lines);
    return lines;
}

const char *client_proxy_failure(CURL *h, CURLcode rc, char *buf, size_t len)
{
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_HTTP_CONNECTCODE, &status);
    if (status >= 300)
        snprintf(buf, len, "the proxy refused the tunnel: HTTP %ld", status);
    else
        snprintf(buf, len, "%s", curl_easy_strerror(rc));
    return buf;
}
