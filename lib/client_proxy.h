// SPDX-License-Identifier: Apache-2.0
/* The proxy a client's requests go through, as Prometheus's proxy options
 * give it: proxy_url but for the hosts no_proxy names, else (with
 * proxy_from_environment) the one http_proxy and the like name, else
 * none; and the headers proxy_connect_header sends the proxy when it
 * opens a tunnel. A scrape job's, an exporter's, a discovery's, and an
 * oauth2 block's own for its token requests. */
#ifndef PROFD_LIB_CLIENT_PROXY_H
#define PROFD_LIB_CLIENT_PROXY_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>

#include "profd/options.h"
#include "profd/plugin.h"

struct client_proxy {
    char *proxy_url;
    char *no_proxy;                /* hosts proxy_url is not used for */
    bool proxy_from_environment;   /* with no proxy_url: http_proxy and the like */
    struct profd_map proxy_connect_header;   /* struct profd_str_list: what goes to the proxy */
};

static const struct profd_option client_proxy_header_value[] = {
    {"<name>", PROFD_OPT_STRING_LIST, 0, NULL, "the header's values, each sent as a line"},
    {0},
};

/* The option entries of a struct client_proxy that is member of type,
 * written flat among type's own; from_environment is
 * proxy_from_environment's default, "true" or "false". */
#define CLIENT_PROXY_OPTIONS(type, member, from_environment)                                   \
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

/* Whether p names a proxy or proxy headers at all (proxy_url,
 * proxy_from_environment or proxy_connect_header). */
bool client_proxy_given(const struct client_proxy *p);

/* Checks p: a proxy of a known scheme, no no_proxy without proxy_url,
 * proxy headers of HTTP names without line breaks and only with a proxy;
 * tells host's diagnostics d what is wrong (prefixed with what).
 * PROFD_OK or PROFD_ERR. */
int client_proxy_validate(const struct profd_host *host, struct profd_diag *d,
                          const struct client_proxy *p, const char *what);

/* Sets the proxy p says on handle h: proxy_url's but for the hosts
 * no_proxy names (the environment's no_proxy not read), else with
 * proxy_from_environment the one the http_proxy-style variables name (as
 * libcurl reads them, no_proxy too), else none; and the headers
 * proxy_connect_header gives the proxy. Returns the list of those
 * headers h now refers to, which the caller frees (curl_slist_free_all)
 * once h is cleaned up or told otherwise; NULL when there are none. */
struct curl_slist *client_proxy_apply(const struct client_proxy *p, CURL *h);

/* What a transfer on h that ended with rc (not CURLE_OK) failed of, for
 * a message, written into buf (len bytes), which it returns: the proxy's
 * refusal to open a tunnel, with the status it answered the CONNECT with
 * (407: it wants credentials, which proxy_connect_header or proxy_url's
 * user and password give), else libcurl's word for rc. */
const char *client_proxy_failure(CURL *h, CURLcode rc, char *buf, size_t len);

#endif
