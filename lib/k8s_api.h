// SPDX-License-Identifier: Apache-2.0
/*
 * Requests to the Kubernetes API with libcurl, as the modules that read it
 * make them (the k8s_metadata processor, the scrape receiver's
 * kubernetes_sd_configs): the server's URL (the cluster's own unless one
 * is configured), the credentials read again before each request, TLS
 * (the service account's CA in the cluster), a kubeconfig's proxy and
 * impersonation, and the JSON body kept up to a bound.
 */
#ifndef PROFD_LIB_K8S_API_H
#define PROFD_LIB_K8S_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client_auth.h"
#include "client_tls.h"
#include "k8s_kubeconfig.h"
#include "oauth2_shared.h"
#include "option_set.h"

/* Where a pod finds its service account's token, CA and namespace. */
#define K8S_SERVICE_ACCOUNT "/var/run/secrets/kubernetes.io/serviceaccount"

/* The largest response a request keeps: a cluster's whole pod list. */
#define K8S_MAX_RESPONSE (256u << 20)

struct k8s_access {
    const char *api_server;          /* NULL or "": the kubeconfig's, else the cluster's own */
    /* the credentials (a bearer token, authorization or basic auth; an
     * oauth2 token comes from oauth2 below) and proxy, or NULL: none, and
     * the proxies the environment names */
    const struct client_auth *auth;
    struct client_tls tls;           /* the CA unset in the cluster: the service account's */
    int64_t timeout;                 /* nanoseconds a request may take */
    /* NULL, or a kubeconfig's context, whose server and credentials are
     * then used instead of auth and tls */
    const struct k8s_kubeconfig *kubeconfig;
    /* NULL, or the token of auth's oauth2, which k8s_api_authorize fetches
     * when due and requests send */
    struct oauth2_shared *oauth2;
    /* NULL, or the headers (a map of struct http_header, lib/http_headers.h)
     * every request sends besides its own; not with a kubeconfig */
    const struct profd_map *http_headers;
};

/* A response's body as it comes, NUL-terminated. */
struct k8s_response {
    char *data;
    size_t len, cap;
};

/*
 * The API's base URL without a trailing '/': a's api_server, else its
 * kubeconfig's server, else the cluster's
 * (https://KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT), else NULL (not
 * in a pod and none configured). malloc'd.
 */
char *k8s_api_base(const struct k8s_access *a);

/*
 * The URL of a list of resource ("pods", "nodes", "services", "endpoints"
 * under /api/v1; "endpointslices" under /apis/discovery.k8s.io/v1;
 * "ingresses" under /apis/networking.k8s.io/v1) under base:
 * those of namespace ns (NULL: of every namespace, or a resource without one), as
 * label_selector and field_selector (NULL or "": none) select them, each
 * escaped for the URL. malloc'd.
 */
char *k8s_api_list_url(const char *base, const char *resource, const char *ns,
                       const char *label_selector, const char *field_selector);

/* Whether a's credentials are at hand: false when a kubeconfig's exec
 * plugin has to run first, or an oauth2 token be fetched
 * (k8s_api_authorize). */
bool k8s_api_authorized(const struct k8s_access *a);

/* Runs a's kubeconfig's exec plugin when its credential is missing or
 * expired, or fetches its oauth2 token when due: blocks (for at most a's
 * timeout). 0, or -1 with why. */
int k8s_api_authorize(const struct k8s_access *a, char *why, size_t whylen);

/* The lists a request's transfer reads until it is over. */
struct k8s_request {
    struct curl_slist *headers;
    struct curl_slist *proxy_headers;   /* proxy_connect_header's */
    struct client_tls_route route;   /* for a tls-server-name (or tls_config.server_name) */
};

/*
 * Sets up easy (a CURL *) to GET url as a (authorized), its body into
 * *body (which the caller frees), what the transfer reads into *req
 * (k8s_request_end frees it once the transfer is over). With a
 * kubeconfig's tls-server-name (or tls_config's server_name), an https
 * url's host becomes that name,
 * libcurl connecting to the url's host still: the name is the one the
 * certificate is checked against and SNI says, the Host header keeps the
 * url's, as kubectl has them. False, with why set, when a header file of
 * a's http_headers gives no value: the request is not to be sent (*req
 * still to be ended).
 */
bool k8s_api_prepare(void *easy, const char *url, const struct k8s_access *a,
                     struct k8s_response *body, struct k8s_request *req, char *why,
                     size_t whylen);

/* Frees what k8s_api_prepare made for a request, and empties *req. */
void k8s_request_end(struct k8s_request *req);

/*
 * Whether easy's finished transfer (libcurl's result rc, a CURLcode) as a
 * is a 200; else false with why saying what failed: libcurl's error, a
 * body over K8S_MAX_RESPONSE, or the status and the start of the body. A
 * 401 forgets the exec plugin's credential, for the next request to ask
 * it again.
 */
bool k8s_api_succeeded(void *easy, int rc, const struct k8s_response *body,
                       const struct k8s_access *a, char *why, size_t whylen);

#endif
