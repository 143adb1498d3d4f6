// SPDX-License-Identifier: Apache-2.0
#include "http_discovery.h"

#include <curl/curl.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../lib/client_credentials.h"
#include "../../lib/grow.h"
#include "../../lib/http_client.h"
#include "../../lib/oauth2_shared.h"

/* The largest answer kept: target groups of a very large fleet. */
#define ANSWER_MAX (64u << 20)

/* An answer as it comes, NUL-terminated. */
struct listing {
    char *data;
    size_t len, cap;
};

struct http_discovery {
    const struct profd_host *h;
    struct profd_component *self;
    const char *job_name;
    const struct http_sd_config *cfg;
    void (*changed)(void *arg);
    void *arg;
    struct http_client *http;
    struct event *tick;
    struct client_credentials *credentials;   /* NULL with oauth2 */
    struct oauth2_shared *oauth2;             /* NULL without */
    bool fetching_token;                      /* on the aside thread */
    bool token_failed;
    char token_why[256];
    /* the request under way (easy NULL when none) */
    CURL *easy;
    struct curl_slist *headers;
    struct curl_slist *proxy_headers;   /* proxy_connect_header's */
    struct client_tls_route route;
    struct listing listing;
    char *unreadable;                 /* a secret file it could not read, or NULL */
    /* the last good answer's groups */
    struct profd_target_group *groups;
    size_t n;
    uint64_t *hashes;
    uint64_t failures;
    char *gauge_labels;
};

bool http_sd_content_type_ok(const char *type)
{
    static const char json[] = "application/json";
    if (!type || strncasecmp(type, json, sizeof(json) - 1))
        return false;
    const char *rest = type + sizeof(json) - 1;
    if (!*rest)
        return true;
    if (*rest++ != ';')
        return false;
    rest += strspn(rest, " \t");
    return !strcasecmp(rest, "charset=utf-8") || !strcasecmp(rest, "charset=\"utf-8\"");
}

static size_t on_listing(char *data, size_t size, size_t n, void *arg)
{
    struct listing *a = arg;
    size_t len = size * n;
    if (a->len + len > ANSWER_MAX)
        return 0;   /* the transfer fails: CURLE_WRITE_ERROR */
    if (a->len + len + 1 > a->cap)
        a->data = grow_array(a->data, &a->cap, a->len + len + 1, 1);
    memcpy(a->data + a->len, data, len);
    a->len += len;
    a->data[a->len] = '\0';
    return len;
}

/* Frees what the request under way holds. */
static void request_end(struct http_discovery *d)
{
    if (d->easy)
        curl_easy_cleanup(d->easy);
    d->easy = NULL;
    curl_slist_free_all(d->headers);
    curl_slist_free_all(d->proxy_headers);
    d->headers = d->proxy_headers = NULL;
    client_tls_route_free(&d->route);
    free(d->listing.data);
    d->listing = (struct listing){0};
    free(d->unreadable);
    d->unreadable = NULL;
}

/* Logs and counts a failed request (why says how), the targets kept. */
static void failed(struct http_discovery *d, const char *why)
{
    char unreadable[300] = "";
    if (d->unreadable)
        snprintf(unreadable, sizeof(unreadable), " (%s could not be read)", d->unreadable);
    d->h->log(d->self, PROFD_LOG_WARN, "job '%s': http_sd_configs %s: %s%s; keeping its "
              "%zu target group(s)", d->job_name, d->cfg->url, why, unreadable, d->n);
    d->h->gauge_set(d->self, "profd_scrape_http_sd_failures",
                    "Requests of a job's http_sd_configs that failed (no answer, not a 200, "
                    "not JSON, not target groups).",
                    d->gauge_labels, (double)++d->failures);
}

/* The groups an answer held become the targets, each given __meta_url;
 * the receiver is told when they changed. Takes groups. */
static void take(struct http_discovery *d, struct profd_target_group *groups, size_t n)
{
    uint64_t *hashes = must_malloc((n ? n : 1) * sizeof(*hashes));
    bool same = n == d->n;
    for (size_t i = 0; i < n; i++) {
        d->h->labels_set(&groups[i].labels, "__meta_url", d->cfg->url);
        hashes[i] = target_group_hash(&groups[i]);
        same = same && hashes[i] == d->hashes[i];
    }
    if (same) {
        d->h->sd_groups_free(groups, n);
        free(hashes);
        return;
    }
    d->h->sd_groups_free(d->groups, d->n);
    free(d->hashes);
    d->groups = groups;
    d->n = n;
    d->hashes = hashes;
    d->changed(d->arg);
}

/* Whether text starts as a JSON list does (after white space): an empty
 * answer, or any other value, is no list of target groups, however the
 * YAML reader behind sd_parse would take it. */
static bool starts_a_list(const char *text)
{
    return text[strspn(text, " \t\r\n")] == '[';
}

/* A request ended: its answer read, or its failure said. */
static void on_done(void *arg, CURL *easy, CURLcode result)
{
    struct http_discovery *d = arg;
    long status = 0;
    const char *type = NULL;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(easy, CURLINFO_CONTENT_TYPE, &type);
    char why[512];
    struct profd_target_group *groups = NULL;
    size_t n = 0;
    if (result == CURLE_WRITE_ERROR)
        snprintf(why, sizeof(why), "the answer is over 64 MiB");
    else if (result != CURLE_OK)
        client_proxy_failure(easy, result, why, sizeof(why));
    else if (status != 200)
        snprintf(why, sizeof(why), "HTTP status %ld: %.160s", status,
                 d->listing.data ? d->listing.data : "");
    else if (!http_sd_content_type_ok(type))
        snprintf(why, sizeof(why), "the answer's Content-Type is \"%s\", not application/json",
                 type ? type : "");
    else if (!starts_a_list(d->listing.data ? d->listing.data : ""))
        snprintf(why, sizeof(why), "the answer is not a JSON list of target groups: \"%.60s\"",
                 d->listing.data ? d->listing.data : "");
    else if (d->h->sd_parse("the answer", d->listing.data, &groups, &n, why, sizeof(why)) == 0)
        why[0] = '\0';
    if (why[0])
        failed(d, why);
    request_end(d);
    if (!why[0])
        take(d, groups, n);
}

/* The header saying how often the URL is asked, in seconds as Prometheus
 * writes them: "60", "0.25", no trailing zeros. */
static void refresh_header(int64_t every_ns, char *out, size_t outlen)
{
    int n = snprintf(out, outlen, "X-Prometheus-Refresh-Interval-Seconds: %lld.%09lld",
                     (long long)(every_ns / 1000000000), (long long)(every_ns % 1000000000));
    while (n > 0 && (size_t)n < outlen && out[n - 1] == '0')
        out[--n] = '\0';
    if (n > 0 && (size_t)n < outlen && out[n - 1] == '.')
        out[--n] = '\0';
}

/* Sets up and starts a request of the URL; fails it, unsent, when a
 * header file gives no value. */
static void send_request(struct http_discovery *d)
{
    const struct http_sd_config *cfg = d->cfg;
    if (!(d->easy = curl_easy_init())) {
        failed(d, "libcurl cannot be set up");
        return;
    }
    CURL *e = d->easy;
    char header[80];
    refresh_header(cfg->refresh_interval, header, sizeof(header));
    d->headers = curl_slist_append(NULL, "Accept: application/json");
    d->headers = curl_slist_append(d->headers, header);
    char *line = d->oauth2 ? oauth2_shared_line(d->oauth2) : NULL;
    const char *unreadable = NULL;
    const char *secret = d->oauth2 ? line : client_credentials_line(d->credentials, &unreadable);
    if (secret)
        d->headers = curl_slist_append(d->headers, secret);
    free(line);
    d->unreadable = must_strdup_or_null(unreadable);
    char why[300];
    if (!http_headers_append(&cfg->http_headers, &d->headers, why, sizeof(why))) {
        failed(d, why);
        request_end(d);
        return;
    }
    client_tls_route(cfg->tls_config.server_name, cfg->url, &d->route);
    if (d->route.host_header)
        d->headers = curl_slist_append(d->headers, d->route.host_header);
    client_tls_route_apply(e, cfg->url, &d->route);
    client_tls_apply(e, &cfg->tls_config);
    d->proxy_headers = client_proxy_apply(&cfg->auth.proxy, e);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, d->headers);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_listing);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &d->listing);
    curl_easy_setopt(e, CURLOPT_PRIVATE, d);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "profd");
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(e, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(cfg->refresh_interval / 1000000));
    if (http_client_add(d->http, e) < 0 && d->easy) {
        failed(d, "libcurl cannot start a transfer");
        request_end(d);
    }
}

/* On the receiver's aside thread: the oauth2 token fetched. */
static void fetch_token(void *arg)
{
    struct http_discovery *d = arg;
    d->token_failed = oauth2_shared_refresh(d->oauth2, d->token_why, sizeof(d->token_why)) < 0;
}

/* Back on the loop's thread: the request the token was fetched for. */
static void token_fetched(void *arg)
{
    struct http_discovery *d = arg;
    d->fetching_token = false;
    if (d->token_failed)
        failed(d, d->token_why);
    else
        send_request(d);
}

/* Asks the URL, once the oauth2 token is at hand when there is one;
 * nothing while the last request, or its token, is under way. */
static void ask(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct http_discovery *d = arg;
    if (d->easy || d->fetching_token)
        return;
    if (d->oauth2 && !oauth2_shared_fresh(d->oauth2)) {
        d->fetching_token = true;
        d->h->run_aside(d->self, fetch_token, token_fetched, d);
        return;
    }
    send_request(d);
}

struct http_discovery *http_discovery_new(const struct profd_host *h, struct profd_component *self,
                                          const char *job_name, const struct http_sd_config *cfg,
                                          void (*changed)(void *arg), void *arg)
{
    struct http_discovery *d = must_malloc(sizeof(*d));
    *d = (struct http_discovery){.h = h, .self = self, .job_name = job_name, .cfg = cfg,
                                 .changed = changed, .arg = arg};
    if (oauth2_set(&cfg->auth.oauth2))
        d->oauth2 = oauth2_shared_new(&cfg->auth, &cfg->tls_config, cfg->refresh_interval);
    else
        d->credentials = client_credentials_new(&cfg->auth, &cfg->tls_config, 0);
    char *job = escape_label_value(job_name);
    d->gauge_labels = must_asprintf("job=\"%s\"", job);
    free(job);
    return d;
}

int http_discovery_start(struct http_discovery *d)
{
    struct event_base *base = d->h->event_base(d->self);
    if (!(d->http = http_client_create(base, on_done)) ||
        !(d->tick = event_new(base, -1, EV_PERSIST, ask, d)))
        return -1;
    int64_t every = d->cfg->refresh_interval;
    struct timeval tv = {every / 1000000000, (every % 1000000000) / 1000};
    event_add(d->tick, &tv);
    ask(-1, 0, d);
    return 0;
}

struct found_groups http_discovery_found(const struct http_discovery *d)
{
    return (struct found_groups){d->groups, d->n, d->hashes};
}

void http_discovery_free(struct http_discovery *d)
{
    if (!d)
        return;
    if (d->tick)
        event_free(d->tick);
    if (d->easy)
        http_client_cancel(d->http, d->easy);
    request_end(d);
    http_client_destroy(d->http);
    client_credentials_free(d->credentials);
    oauth2_shared_free(d->oauth2);
    d->h->sd_groups_free(d->groups, d->n);
    free(d->hashes);
    free(d->gauge_labels);
    free(d);
}
