// SPDX-License-Identifier: Apache-2.0
/* A proxy URL from a config (a scrape job's proxy_url, a kubeconfig's
 * proxy-url) in the form libcurl takes. */
#ifndef PROFD_PROXY_URL_H
#define PROFD_PROXY_URL_H

#include <stdbool.h>
#include <string.h>

#include "grow.h"

/* url (http://, https:// or socks5://, the schemes Prometheus and kubectl
 * take) for CURLOPT_PROXY, malloc'd: socks5 as libcurl's socks5h, which
 * has the proxy resolve names as Go's SOCKS5 dialer does. NULL for any
 * other scheme. */
static inline char *proxy_url_for_curl(const char *url)
{
    if (!strncmp(url, "socks5://", 9))
        return must_asprintf("socks5h://%s", url + 9);
    if (!strncmp(url, "http://", 7) || !strncmp(url, "https://", 8))
        return must_strdup(url);
    return NULL;
}

/* Whether url, when set (not NULL or ""), is of a scheme a proxy may
 * have (proxy_url_for_curl takes it). */
static inline bool proxy_url_valid(const char *url)
{
    return !url || !*url || !strncmp(url, "socks5://", 9) || !strncmp(url, "http://", 7) ||
           !strncmp(url, "https://", 8);
}

#endif
