// SPDX-License-Identifier: Apache-2.0
/*
 * gRPC over libcurl: 5-byte framing, grpc-encoding, and the status from the
 * trailers, which libcurl hands to the header callback like headers. One
 * easy handle per client keeps its connection between calls.
 */
#include "rpc_client.h"

#include <curl/curl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "client_auth.h"
#include "client_credentials.h"
#include "grow.h"
#include "hex.h"
#include "grpc_frame.h"
#include "pb_reader.h"

#define MAX_RESPONSE (4 << 20)   /* OTLP's recommended response limit */

struct rpc_client {
    const struct profd_host *host;
    pthread_mutex_t mu;
    CURL *curl;
    struct curl_slist *headers;
    struct curl_slist *proxy_headers;   /* proxy_connect_header's */
    struct client_tls_route route;   /* for tls.server_name: the URL requested */
    char *url;                   /* without a trailing slash for gRPC */
    enum profd_rpc_protocol protocol;
    bool retry_408_5xx;
    char *compression;
    int64_t timeout;
    struct client_credentials *credentials;   /* or NULL */
};

/* What the callbacks collect during one call. */
struct call {
    struct rpc_result *res;
    bool grpc_status_seen, retry_info;
    char encoding[32];
    uint8_t *body;
    size_t len, cap;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

struct rpc_client *rpc_client_new(const struct profd_host *host, struct profd_component *self,
                                  const struct rpc_client_options *o)
{
    pthread_once(&curl_once, curl_init);
    struct rpc_client *c = must_malloc(sizeof(*c));
    memset(c, 0, sizeof(*c));
    c->host = host;
    pthread_mutex_init(&c->mu, NULL);
    c->curl = curl_easy_init();
    if (!c->curl) {
        host->log(self, PROFD_LOG_ERROR, "libcurl: cannot create a handle");
        rpc_client_free(c);
        return NULL;
    }
    c->protocol = o->protocol;
    c->retry_408_5xx = o->retry_408_5xx;
    c->url = must_asprintf("%s%s", strstr(o->url, "://") ? "" : "http://", o->url);
    if (c->protocol == PROFD_RPC_GRPC && c->url[0] && c->url[strlen(c->url) - 1] == '/')
        c->url[strlen(c->url) - 1] = '\0';
    client_tls_route(o->tls ? o->tls->server_name : NULL, c->url, &c->route);
    if (c->route.host_header)
        c->headers = curl_slist_append(c->headers, c->route.host_header);
    c->compression = must_asprintf("%s", o->compression ? o->compression : "");
    c->timeout = o->timeout;
    bool tls = strncmp(c->url, "https://", 8) == 0;
    CURL *h = c->curl;
    if (c->protocol == PROFD_RPC_GRPC) {
        curl_easy_setopt(h, CURLOPT_HTTP_VERSION,
                         tls ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
        /* libcurl before 8.0 fails every call after the first on a reused h2c
         * prior-knowledge connection ("Error in the HTTP2 framing layer",
         * curl issue 10634): there, each call opens its own connection */
        if (!tls && curl_version_info(CURLVERSION_NOW)->version_num < 0x080000)
            curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
        c->headers = curl_slist_append(c->headers, "content-type: application/grpc");
        c->headers = curl_slist_append(c->headers, "te: trailers");
        c->headers = curl_slist_append(c->headers, "grpc-accept-encoding: gzip,zstd,identity");
        if (*c->compression && strcasecmp(c->compression, "identity")) {
            char line[64];
            snprintf(line, sizeof(line), "grpc-encoding: %s", c->compression);
            c->headers = curl_slist_append(c->headers, line);
        }
    } else {
        char line[256];
        snprintf(line, sizeof(line), "Content-Type: %s",
                 o->content_type ? o->content_type : "application/x-protobuf");
        c->headers = curl_slist_append(c->headers, line);
        if (*c->compression && strcasecmp(c->compression, "identity")) {
            snprintf(line, sizeof(line), "Content-Encoding: %s", c->compression);
            c->headers = curl_slist_append(c->headers, line);
        }
        c->headers = curl_slist_append(c->headers, "Expect:");
    }
    for (const char *const *p = o->protocol_headers; p && *p; p++)
        c->headers = curl_slist_append(c->headers, *p);
    for (size_t i = 0; o->headers && i < o->headers->n; i++) {
        char *line = must_asprintf("%s: %s", o->headers->keys[i], o->headers->values[i]);
        c->headers = curl_slist_append(c->headers, line);
        free(line);
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, c->headers);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "profd/" PROFD_VERSION);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    client_tls_apply(h, o->tls);
    curl_easy_setopt(h, CURLOPT_CONNECT_TO, c->route.connect_to);
    if (o->auth) {
        c->credentials = client_credentials_new(o->auth, o->tls, o->timeout);
        c->proxy_headers = client_proxy_apply(&o->auth->proxy, h);
    }
    return c;
}

void rpc_client_free(struct rpc_client *c)
{
    if (!c)
        return;
    if (c->curl)
        curl_easy_cleanup(c->curl);
    curl_slist_free_all(c->headers);
    curl_slist_free_all(c->proxy_headers);
    client_tls_route_free(&c->route);
    pthread_mutex_destroy(&c->mu);
    free(c->url);
    free(c->compression);
    client_credentials_free(c->credentials);
    free(c);
}

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
    struct call *call = arg;
    size_t len = size * n;
    if (call->len + len > MAX_RESPONSE + 5)
        return 0;   /* aborts the transfer */
    call->body = grow_array(call->body, &call->cap, call->len + len, 1);
    memcpy(call->body + call->len, data, len);
    call->len += len;
    return len;
}

/* Percent-decodes a grpc-message value. */
static void percent_decode(const char *in, size_t len, char *out, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < len && o + 1 < n; i++) {
        int v = in[i] == '%' && i + 2 < len ? hex_byte(in + i + 1) : -1;
        if (v >= 0) {
            out[o++] = (char)v;
            i += 2;
        } else {
            out[o++] = in[i];
        }
    }
    out[o] = '\0';
}

/* A wait of seconds and nanos in ns: 0 when negative, INT64_MAX when it
 * would not fit (a server's number, not to be trusted). */
static int64_t wait_ns(int64_t seconds, int64_t nanos)
{
    if (seconds < 0 || nanos < 0 || nanos >= 1000000000)
        return 0;
    if (seconds >= INT64_MAX / 1000000000 - 1)
        return INT64_MAX;
    return seconds * 1000000000 + nanos;
}

/* Looks for a google.rpc.RetryInfo among the details of a base64
 * google.rpc.Status; its delay in ns, or -1 when there is none. */
static int64_t retry_info_delay(const char *b64, size_t len)
{
    char padded[1400];
    uint8_t raw[sizeof(padded) / 4 * 3];   /* what padded decodes to, at most */
    if (len > sizeof(padded) - 4)
        return -1;
    memcpy(padded, b64, len);
    while (len % 4)
        padded[len++] = '=';
    int n = EVP_DecodeBlock(raw, (const unsigned char *)padded, (int)len);
    if (n <= 0)
        return -1;
    static const char type[] = "type.googleapis.com/google.rpc.RetryInfo";
    /* Status{details = 3: Any{type_url = 1, value = 2: RetryInfo{retry_delay
     * = 1: Duration{seconds = 1, nanos = 2}}}} */
    struct pb_reader status, any, url, info, delay;
    struct pb_field f;
    const char *err;
    pb_reader_init(&status, raw, raw, (size_t)n);
    while (pb_next(&status, &f, &err) > 0) {
        if (f.number != 3 || f.wire != PB_LEN)
            continue;
        pb_reader_init(&any, raw, f.data, f.len);
        if (pb_find_len(any, 1, &url) && (size_t)(url.end - url.p) == sizeof(type) - 1 &&
            !memcmp(url.p, type, sizeof(type) - 1))
            return pb_find_len(any, 2, &info) && pb_find_len(info, 1, &delay)
                       ? wait_ns((int64_t)pb_find_varint(delay, 1),
                                 (int64_t)pb_find_varint(delay, 2))
                       : 0;
    }
    return -1;
}

static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
    struct call *call = arg;
    size_t len = size * n;
    while (len && (data[len - 1] == '\n' || data[len - 1] == '\r'))
        len--;
    const char *colon = memchr(data, ':', len);
    if (!colon)
        return size * n;
    size_t nlen = (size_t)(colon - data);
    const char *v = colon + 1;
    while (v < data + len && *v == ' ')
        v++;
    size_t vlen = (size_t)(data + len - v);
    char text[64];   /* a number's value, ended (libcurl's data is not) */
    snprintf(text, sizeof(text), "%.*s", (int)(vlen < sizeof(text) ? vlen : sizeof(text) - 1), v);
#define IS(name) (nlen == sizeof(name) - 1 && strncasecmp(data, name, nlen) == 0)
    if (IS("grpc-status")) {
        call->res->grpc_status = atoi(text);
        call->grpc_status_seen = true;
    } else if (IS("grpc-message")) {
        percent_decode(v, vlen, call->res->message, sizeof(call->res->message));
    } else if (IS("grpc-encoding") && vlen < sizeof(call->encoding)) {
        memcpy(call->encoding, v, vlen);
        call->encoding[vlen] = '\0';
    } else if (IS("grpc-status-details-bin")) {
        int64_t d = retry_info_delay(v, vlen);
        if (d >= 0) {
            call->retry_info = true;
            call->res->retry_after = d;
        }
    } else if (IS("retry-after")) {
        char *end;
        long secs = strtol(text, &end, 10);
        if (*end) {   /* an HTTP-date */
            time_t when = curl_getdate(text, NULL);
            secs = when > 0 ? (long)(when - time(NULL)) : 0;
        }
        call->res->retry_after = wait_ns(secs, 0);
    }
#undef IS
    return size * n;
}

/* The gRPC code a response without grpc-status stands for. */
static int grpc_from_http(int status)
{
    switch (status) {
    case 400: return GRPC_INTERNAL;
    case 401: return GRPC_UNAUTHENTICATED;
    case 403: return GRPC_PERMISSION_DENIED;
    case 404: return GRPC_UNIMPLEMENTED;
    case 429: case 502: case 503: case 504: return GRPC_UNAVAILABLE;
    default: return GRPC_UNKNOWN;
    }
}

static bool grpc_retryable(int code, bool retry_info)
{
    return code == GRPC_CANCELLED || code == GRPC_DEADLINE_EXCEEDED || code == GRPC_ABORTED ||
           code == GRPC_OUT_OF_RANGE || code == GRPC_UNAVAILABLE || code == GRPC_DATA_LOSS ||
           (code == GRPC_RESOURCE_EXHAUSTED && retry_info);
}

/* Unframes (and decompresses) a gRPC response message into res->body. */
static int grpc_message(const struct rpc_client *c, struct call *call)
{
    struct rpc_result *res = call->res;
    char why[200];
    if (grpc_unframe(call->body, call->len, call->encoding, MAX_RESPONSE, c->host->decompress,
                     &res->body, &res->len, why, sizeof(why)) != GRPC_OK) {
        snprintf(res->message, sizeof(res->message), "response: %s", why);
        return PROFD_ERR;
    }
    return PROFD_OK;
}

static int finish_grpc(const struct rpc_client *c, struct call *call)
{
    struct rpc_result *res = call->res;
    if (!call->grpc_status_seen) {
        res->grpc_status = grpc_from_http(res->http_status);
        if (!res->message[0])
            snprintf(res->message, sizeof(res->message), "HTTP status %d without grpc-status",
                     res->http_status);
        return grpc_retryable(res->grpc_status, false) ? PROFD_ERETRY : PROFD_ERR;
    }
    if (res->grpc_status != 0) {
        if (!res->message[0])
            snprintf(res->message, sizeof(res->message), "gRPC status %d", res->grpc_status);
        return grpc_retryable(res->grpc_status, call->retry_info) ? PROFD_ERETRY : PROFD_ERR;
    }
    return grpc_message(c, call);
}

static int finish_http(const struct rpc_client *c, struct call *call)
{
    struct rpc_result *res = call->res;
    int s = res->http_status;
    if (s >= 200 && s < 300) {
        res->body = call->body;
        res->len = call->len;
        call->body = NULL;
        return PROFD_OK;
    }
    int shown = call->len < 160 ? (int)call->len : 160;   /* the server's own words */
    snprintf(res->message, sizeof(res->message), "HTTP status %d%s%.*s", s, shown ? ": " : "",
             shown, call->body ? (const char *)call->body : "");
    if (s == 429 || s == 502 || s == 503 || s == 504)
        return PROFD_ERETRY;
    return c->retry_408_5xx && (s == 408 || s >= 500) ? PROFD_ERETRY : PROFD_ERR;
}

/* The headers of one call: timeout's grpc-timeout, the token read from a
 * file or fetched (authorization), and header, when set, before the
 * client's own (which the list ends with, not owning them). */
static struct curl_slist *call_headers(const struct rpc_client *c, const char *authorization,
                                       const char *header)
{
    struct curl_slist *own = NULL;
    if (c->protocol == PROFD_RPC_GRPC && c->timeout > 0) {
        char line[48];
        snprintf(line, sizeof(line), "grpc-timeout: %lldm", (long long)(c->timeout / 1000000));
        own = curl_slist_append(own, line);
    }
    if (authorization)
        own = curl_slist_append(own, authorization);
    if (header && *header)
        own = curl_slist_append(own, header);
    if (!own)
        return c->headers;
    struct curl_slist *last = own;
    while (last->next)
        last = last->next;
    last->next = c->headers;
    return own;
}

/* Frees what call_headers added, leaving the client's own. */
static void free_call_headers(const struct rpc_client *c, struct curl_slist *list)
{
    struct curl_slist *own = list == c->headers ? NULL : list;
    for (struct curl_slist *l = own; l; l = l->next)
        if (l->next == c->headers) {
            l->next = NULL;
            break;
        }
    curl_slist_free_all(own);
}

int rpc_client_call(struct rpc_client *c, const char *path, const char *header,
                    const uint8_t *body, size_t len, struct rpc_result *res)
{
    *res = (struct rpc_result){0};
    struct call call = {.res = res};
    uint8_t *payload = NULL;
    size_t plen = 0;
    bool compress = *c->compression && strcasecmp(c->compression, "identity");
    uint8_t *packed = NULL;
    size_t packed_len = len;
    if (compress && c->host->compress(c->compression, body, len, &packed, &packed_len) < 0) {
        snprintf(res->message, sizeof(res->message), "%s compression failed", c->compression);
        return PROFD_ERR;
    }
    const uint8_t *msg = compress ? packed : body;
    char *url = must_asprintf("%s%s", c->route.url ? c->route.url : c->url, path ? path : "");
    if (c->protocol == PROFD_RPC_GRPC) {
        plen = packed_len + 5;
        payload = must_malloc(plen);
        grpc_frame_prefix(payload, compress, packed_len);
        memcpy(payload + 5, msg, packed_len);
    }
    pthread_mutex_lock(&c->mu);
    CURL *h = c->curl;
    const char *authorization = NULL, *unreadable = NULL;
    struct oauth2_token *oauth2 =
        c->credentials ? client_credentials_oauth2(c->credentials) : NULL;
    if (oauth2 && !oauth2_token_header(oauth2, res->message, sizeof(res->message))) {
        pthread_mutex_unlock(&c->mu);
        res->grpc_status = GRPC_UNAUTHENTICATED;
        free(url);
        free(payload);
        free(packed);
        return PROFD_ERETRY;   /* the token endpoint may answer next time */
    }
    if (c->credentials)   /* unreadable: a path of the options', which outlive c */
        authorization = client_credentials_line(c->credentials, &unreadable);
    struct curl_slist *headers = call_headers(c, authorization, header);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, payload ? payload : msg);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(payload ? plen : packed_len));
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(c->timeout / 1000000));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &call);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &call);
    CURLcode rc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, c->headers);
    pthread_mutex_unlock(&c->mu);
    free_call_headers(c, headers);
    free(url);
    free(payload);
    free(packed);
    res->http_status = (int)status;
    int out;
    if (rc != CURLE_OK) {
        client_proxy_failure(h, rc, res->message, sizeof(res->message));
        res->grpc_status = GRPC_UNAVAILABLE;
        out = rc == CURLE_WRITE_ERROR ? PROFD_ERR : PROFD_ERETRY;
    } else {
        out = c->protocol == PROFD_RPC_GRPC ? finish_grpc(c, &call) : finish_http(c, &call);
    }
    if (out != PROFD_OK && unreadable) {   /* said with what the server answered */
        size_t used = strlen(res->message);
        snprintf(res->message + used, sizeof(res->message) - used, " (%s could not be read)",
                 unreadable);
    }
    free(call.body);
    return out;
}

int rpc_client_export(struct rpc_client *c, struct profd_component *self, const char *what,
                      const char *path, const char *header, const uint8_t *body, size_t len,
                      struct rpc_result *res)
{
    int rc = rpc_client_call(c, path, header, body, len, res);
    if (rc == PROFD_ERETRY && res->retry_after)
        c->host->retry_after(self, res->retry_after);
    if (rc != PROFD_OK)
        c->host->log(self, rc == PROFD_ERETRY ? PROFD_LOG_WARN : PROFD_LOG_ERROR,
                     "%s to %s failed%s: %s", what, c->url,
                     rc == PROFD_ERETRY ? " (will retry)" : "", res->message);
    return rc;
}
