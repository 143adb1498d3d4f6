// SPDX-License-Identifier: Apache-2.0
#include "k8s_api.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_credentials.h"
#include "file_io.h"
#include "grow.h"
#include "http_headers.h"

char *k8s_api_base(const struct k8s_access *a)
{
    const char *api_server = option_set(a->api_server) ? a->api_server
                             : a->kubeconfig       ? a->kubeconfig->server
                                                   : NULL;
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    if (!option_set(api_server) && !option_set(host))
        return NULL;
    char *base = option_set(api_server) ? must_strdup(api_server)
                 : strchr(host, ':') ? must_asprintf("https://[%s]:%s", host, port ? port : "443")
                                     : must_asprintf("https://%s:%s", host, port ? port : "443");
    size_t n = strlen(base);
    while (n && base[n - 1] == '/')
        base[--n] = '\0';
    return base;
}

/* s escaped for a URL, malloc'd. */
static char *escaped(const char *s)
{
    char *e = curl_easy_escape(NULL, s, 0);   /* no handle needed */
    char *copy = must_asprintf("%s", e ? e : "");
    curl_free(e);
    return copy;
}

char *k8s_api_list_url(const char *base, const char *resource, const char *ns,
                       const char *label_selector, const char *field_selector)
{
    char *namespace = ns ? escaped(ns) : NULL;
    char *label = option_set(label_selector) ? escaped(label_selector) : NULL;
    char *field = option_set(field_selector) ? escaped(field_selector) : NULL;
    const char *group = !strcmp(resource, "endpointslices") ? "apis/discovery.k8s.io"
                        : !strcmp(resource, "ingresses")    ? "apis/networking.k8s.io"
                                                            : "api";
    char *url = must_asprintf("%s/%s/v1%s%s/%s%s%s%s%s%s", base, group,
                              namespace ? "/namespaces/" : "", namespace ? namespace : "", resource,
                              label ? "?labelSelector=" : "", label ? label : "",
                              field ? (label ? "&" : "?") : "", field ? "fieldSelector=" : "",
                              field ? field : "");
    free(namespace);
    free(label);
    free(field);
    return url;
}

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
    struct k8s_response *b = arg;
    if (b->len + size * n > K8S_MAX_RESPONSE)
        return 0;   /* too large: the transfer fails */
    b->data = grow_array(b->data, &b->cap, b->len + size * n + 1, 1);
    memcpy(b->data + b->len, p, size * n);
    b->len += size * n;
    b->data[b->len] = '\0';   /* an error's text is printed */
    return size * n;
}

/* Sets a PEM blob option (a CA, a client certificate or key) on h. */
static void set_pem(CURL *h, CURLoption option, char *pem)
{
    struct curl_blob blob = {pem, strlen(pem), CURL_BLOB_COPY};
    curl_easy_setopt(h, option, &blob);
}

/* Sets up h with the credential kc's exec plugin gave last (the caller
 * ran it: k8s_api_authorize). Returns its token, malloc'd, or NULL. */
static char *use_exec(CURL *h, struct k8s_exec *exec)
{
    char *token, *cert, *key;
    k8s_exec_credential(exec, &token, &cert, &key);
    if (cert && key) {
        set_pem(h, CURLOPT_SSLCERT_BLOB, cert);
        set_pem(h, CURLOPT_SSLKEY_BLOB, key);
    }
    free(cert);
    free(key);
    return token;
}

/* Sets up h with kc's credentials: its token (or token file, read now),
 * user and password, CA, client certificate and key, or its exec
 * plugin's. Returns the Authorization line of its token, malloc'd, or
 * NULL. */
static char *use_kubeconfig(CURL *h, const struct k8s_kubeconfig *kc)
{
    struct client_tls tls = {kc->ca_file, kc->cert_file, kc->key_file, kc->insecure_skip_verify};
    client_tls_apply(h, &tls);
    if (kc->ca_pem)
        set_pem(h, CURLOPT_CAINFO_BLOB, kc->ca_pem);
    if (kc->cert_pem)
        set_pem(h, CURLOPT_SSLCERT_BLOB, kc->cert_pem);
    if (kc->key_pem)
        set_pem(h, CURLOPT_SSLKEY_BLOB, kc->key_pem);
    if (kc->username) {
        curl_easy_setopt(h, CURLOPT_USERNAME, kc->username);
        curl_easy_setopt(h, CURLOPT_PASSWORD, kc->password ? kc->password : "");
    }
    char *token = kc->exec         ? use_exec(h, kc->exec)
                  : kc->token      ? must_strdup(kc->token)
                  : kc->token_file ? read_secret(kc->token_file)
                                   : NULL;
    char *line = token && *token ? must_asprintf("Authorization: Bearer %s", token) : NULL;
    free(token);
    return line;
}

/* Sets up h with a's TLS (the service account's CA for the cluster's own
 * server) and proxy, its headers for the proxy kept in req. Returns the
 * Authorization line to send, its secret files read now, malloc'd, or
 * NULL: none, or a file that cannot be read (outside a cluster, the
 * service account's token). */
static char *use_options(CURL *h, const struct k8s_access *a, struct k8s_request *req)
{
    struct client_tls tls = a->tls;
    if (!option_set(a->api_server) && !option_set(tls.ca_file))
        tls.ca_file = K8S_SERVICE_ACCOUNT "/ca.crt";
    client_tls_apply(h, &tls);
    if (!a->auth)
        return NULL;
    req->proxy_headers = client_proxy_apply(&a->auth->proxy, h);
    if (a->oauth2)
        return oauth2_shared_line(a->oauth2);
    struct client_credentials *c = client_credentials_new(a->auth, NULL, 0);
    const char *unreadable;
    const char *line = client_credentials_line(c, &unreadable);
    char *copy = line && !unreadable ? must_strdup(line) : NULL;
    client_credentials_free(c);
    return copy;
}

bool k8s_api_prepare(void *easy, const char *url, const struct k8s_access *a,
                     struct k8s_response *body, struct k8s_request *req, char *why,
                     size_t whylen)
{
    CURL *h = easy;
    const struct k8s_kubeconfig *kc = a->kubeconfig;
    *req = (struct k8s_request){.headers = curl_slist_append(NULL, "Accept: application/json")};
    char *authorization = kc ? use_kubeconfig(h, kc) : use_options(h, a, req);
    if (authorization)
        req->headers = curl_slist_append(req->headers, authorization);
    free(authorization);
    for (size_t i = 0; kc && kc->impersonation && kc->impersonation[i]; i++)
        req->headers = curl_slist_append(req->headers, kc->impersonation[i]);
    bool headers_made = kc || !a->http_headers ||
                        http_headers_append(a->http_headers, &req->headers, why, whylen);
    client_tls_route(kc ? kc->tls_server_name : a->tls.server_name, url, &req->route);
    if (req->route.host_header)
        req->headers = curl_slist_append(req->headers, req->route.host_header);
    client_tls_route_apply(h, url, &req->route);
    if (kc && kc->proxy_url)
        curl_easy_setopt(h, CURLOPT_PROXY, kc->proxy_url);
    if (!kc || !kc->disable_compression)
        curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, req->headers);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "profd");
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(a->timeout / 1000000));
    return headers_made;
}

void k8s_request_end(struct k8s_request *req)
{
    curl_slist_free_all(req->headers);
    curl_slist_free_all(req->proxy_headers);
    client_tls_route_free(&req->route);
    *req = (struct k8s_request){0};
}

/* Whether a's kubeconfig's exec plugin need not run. */
static bool exec_fresh(const struct k8s_access *a)
{
    return !a->kubeconfig || !a->kubeconfig->exec || k8s_exec_fresh(a->kubeconfig->exec);
}

bool k8s_api_authorized(const struct k8s_access *a)
{
    return exec_fresh(a) && (!a->oauth2 || oauth2_shared_fresh(a->oauth2));
}

int k8s_api_authorize(const struct k8s_access *a, char *why, size_t whylen)
{
    if (!exec_fresh(a))
        return k8s_exec_refresh(a->kubeconfig->exec, a->timeout, why, whylen);
    if (a->oauth2 && !oauth2_shared_fresh(a->oauth2))
        return oauth2_shared_refresh(a->oauth2, why, whylen);
    return 0;
}

bool k8s_api_succeeded(void *easy, int rc, const struct k8s_response *body,
                       const struct k8s_access *a, char *why, size_t whylen)
{
    long status = 0;
    curl_easy_getinfo((CURL *)easy, CURLINFO_RESPONSE_CODE, &status);
    if (status == 401 && a->kubeconfig && a->kubeconfig->exec)
        k8s_exec_forget(a->kubeconfig->exec);   /* refused: run the plugin again next time */
    if (rc == CURLE_WRITE_ERROR)
        snprintf(why, whylen, "the response is over 256 MiB");
    else if (rc != CURLE_OK)
        client_proxy_failure((CURL *)easy, (CURLcode)rc, why, whylen);
    else if (status != 200)
        snprintf(why, whylen, "HTTP %ld: %.200s", status, body->data ? body->data : "");
    return rc == CURLE_OK && status == 200;
}
