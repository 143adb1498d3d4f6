// SPDX-License-Identifier: Apache-2.0
#include "k8s_discovery.h"

#include <curl/curl.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../lib/file_io.h"
#include "../../lib/grow.h"
#include "../../lib/k8s_api.h"
#include "http.h"
#include "k8s_sd.h"
#include "targets.h"

/* How long the server keeps a watch open (it ends it then; it is started
 * again from where it was), and how much longer the transfer may take. */
#define WATCH_SECONDS 300
#define WATCH_GRACE_MS 30000

/* Targets are made again this long after a change, so that a burst of
 * events makes them once. */
#define REBUILD_DELAY_US 100000

enum source_state { IDLE, LISTING, READING, WATCHING, WAITING };

/* One URL's pods: listed, then watched from the list's version. */
struct source {
    struct k8s_discovery *d;
    const char *url;
    enum source_state state;
    CURL *easy;
    struct curl_slist *headers;
    struct k8s_response body;     /* a list's JSON, or a watch's line not ended yet */
    struct k8s_pod_list pods;     /* what the source knows now */
    struct k8s_pod_list listed;   /* READING: the list as the receiver's thread reads it */
    bool relist;                  /* WATCHING: the watch's version is gone */
    bool rewatch;                 /* WAITING: watches, not lists, when retry fires */
    int64_t watch_started;        /* monotonic ns */
    bool failed;
    char why[1024];
    struct event *retry;          /* WAITING: lists again when it fires */
};

struct k8s_discovery {
    const struct profd_host *h;
    struct profd_component *self;
    const char *job_name;
    const struct kubernetes_sd_config *cfg;
    char **urls;
    struct source *sources;       /* one a URL */
    size_t nsources;
    struct k8s_access access;
    struct http_client *http;
    struct event *rebuild;
    void (*changed)(void *arg);
    void *arg;
    struct profd_target_group *groups;
    size_t ngroups;
    char *signature;
    size_t errors;
    char *gauge_labels;
};

static void start_list(struct source *src);
static void start_watch(struct source *src);

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void retry_in(struct source *src, int64_t ns, bool rewatch)
{
    src->state = WAITING;
    src->rewatch = rewatch;
    struct timeval tv = {ns / 1000000000, ns % 1000000000 / 1000};
    evtimer_add(src->retry, &tv);
}

/* Ends src's transfer, if any, and empties what it read. */
static void end_transfer(struct source *src)
{
    if (src->easy) {
        http_client_cancel(src->d->http, src->easy);
        curl_easy_cleanup(src->easy);
        src->easy = NULL;
    }
    curl_slist_free_all(src->headers);
    src->headers = NULL;
    free(src->body.data);
    src->body = (struct k8s_response){0};
}

/* A text that is the same for the same targets and labels. */
static char *groups_signature(const struct profd_target_group *g, size_t n)
{
    size_t len = 1, at = 0;
    for (size_t i = 0; i < n; i++) {
        len += strlen(g[i].targets.items[0]) + 1;
        for (size_t k = 0; k < g[i].labels.n; k++)
            len += strlen(g[i].labels.items[k].name) + strlen(g[i].labels.items[k].value) + 2;
    }
    char *sig = malloc(len);
    if (!sig)
        abort();
    for (size_t i = 0; i < n; i++) {
        at += (size_t)sprintf(sig + at, "%s\n", g[i].targets.items[0]);
        for (size_t k = 0; k < g[i].labels.n; k++)
            at += (size_t)sprintf(sig + at, "%s=%s\x1f", g[i].labels.items[k].name,
                                  g[i].labels.items[k].value);
    }
    sig[at] = '\0';
    return sig;
}

/* The targets of every source's pods made again; the receiver told when
 * they are not what they were. */
static void rebuild(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct k8s_discovery *d = arg;
    struct profd_target_group *groups = NULL;
    size_t n = 0, cap = 0, npods = 0;
    for (size_t i = 0; i < d->nsources; i++) {
        k8s_sd_groups(d->h, &d->sources[i].pods, &groups, &n, &cap);
        npods += d->sources[i].pods.n;
    }
    d->h->gauge_set(d->self, "profd_scrape_k8s_pods",
                    "Pods a job's kubernetes_sd_configs know of.", d->gauge_labels,
                    (double)npods);
    char *sig = groups_signature(groups, n);
    if (d->signature && !strcmp(sig, d->signature)) {
        d->h->sd_groups_free(groups, n);
        free(sig);
        return;
    }
    d->h->sd_groups_free(d->groups, d->ngroups);
    free(d->signature);
    d->groups = groups;
    d->ngroups = n;
    d->signature = sig;
    d->changed(d->arg);
}

static void rebuild_soon(struct k8s_discovery *d)
{
    struct timeval tv = {0, REBUILD_DELAY_US};
    if (!evtimer_pending(d->rebuild, NULL))
        evtimer_add(d->rebuild, &tv);
}

/* Logs and counts src's failure (src->why); lists again after
 * retry_interval. */
static void fail(struct source *src)
{
    struct k8s_discovery *d = src->d;
    d->h->log(d->self, PROFD_LOG_WARN, "job '%s': %s: %s; keeping its %zu target(s), listing "
              "again in %lld ms", d->job_name, src->url, src->why, d->ngroups,
              (long long)(d->cfg->retry_interval / 1000000));
    d->h->gauge_set(d->self, "profd_scrape_k8s_errors",
                    "Pod lists and watches of a job's kubernetes_sd_configs that failed.",
                    d->gauge_labels, (double)++d->errors);
    end_transfer(src);
    retry_in(src, d->cfg->retry_interval, false);
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct source *src = arg;
    if (src->rewatch)
        start_watch(src);
    else
        start_list(src);
}

/* Applies one watch event, a line of the stream; false when the stream
 * cannot be trusted from there on (src->why says why). */
static bool apply_event(struct source *src, const char *line, size_t len)
{
    struct k8s_watch_event ev;
    char why[256];
    if (k8s_watch_event_parse(line, len, &ev, why, sizeof(why)) < 0) {
        snprintf(src->why, sizeof(src->why), "the watch sent %s", why);
        return false;
    }
    bool ok = true;
    if (ev.type == K8S_ERROR) {
        snprintf(src->why, sizeof(src->why), "the watch ended with %ld: %.200s", ev.code,
                 ev.message);
        src->relist = ev.code == 410;   /* gone: list again at once */
        ok = false;
    } else {
        if (ev.type == K8S_ADDED || ev.type == K8S_MODIFIED)
            k8s_pod_list_put(&src->pods, &ev.pod);
        else if (ev.type == K8S_DELETED)
            k8s_pod_list_remove(&src->pods, ev.pod.uid);
        if (ev.type != K8S_BOOKMARK)
            rebuild_soon(src->d);
        if (*ev.resource_version) {
            free(src->pods.resource_version);
            src->pods.resource_version = ev.resource_version;
            ev.resource_version = NULL;
        }
    }
    k8s_watch_event_free(&ev);
    return ok;
}

/* A watch's bytes as they come: each whole line an event. */
static size_t on_watch_data(char *p, size_t size, size_t n, void *arg)
{
    struct source *src = arg;
    struct k8s_response *b = &src->body;
    if (src->failed || b->len + size * n > K8S_MAX_RESPONSE)
        return 0;   /* the transfer ends */
    b->data = grow_array(b->data, &b->cap, b->len + size * n + 1, 1);
    memcpy(b->data + b->len, p, size * n);
    b->len += size * n;
    size_t start = 0;
    for (char *nl; !src->failed && (nl = memchr(b->data + start, '\n', b->len - start));) {
        size_t end = (size_t)(nl - b->data);
        if (end > start && !apply_event(src, b->data + start, end - start))
            src->failed = true;
        start = end + 1;
    }
    memmove(b->data, b->data + start, b->len - start);
    b->len -= start;
    return src->failed ? 0 : size * n;
}

static void start_watch(struct source *src)
{
    struct k8s_discovery *d = src->d;
    char *url = must_asprintf("%s%cwatch=1&allowWatchBookmarks=true&timeoutSeconds=%d"
                              "&resourceVersion=%s", src->url, strchr(src->url, '?') ? '&' : '?',
                              WATCH_SECONDS, src->pods.resource_version);
    src->state = WATCHING;
    src->relist = src->failed = false;
    src->watch_started = monotonic_ns();
    if (!(src->easy = curl_easy_init())) {
        snprintf(src->why, sizeof(src->why), "libcurl cannot be set up");
        free(url);
        fail(src);
        return;
    }
    src->headers = k8s_api_prepare(src->easy, url, &d->access, &src->body);
    free(url);
    curl_easy_setopt(src->easy, CURLOPT_WRITEFUNCTION, on_watch_data);
    curl_easy_setopt(src->easy, CURLOPT_WRITEDATA, src);
    curl_easy_setopt(src->easy, CURLOPT_TIMEOUT_MS, (long)WATCH_SECONDS * 1000 + WATCH_GRACE_MS);
    curl_easy_setopt(src->easy, CURLOPT_PRIVATE, src);
    if (http_client_add(d->http, src->easy) < 0) {
        snprintf(src->why, sizeof(src->why), "libcurl cannot start a transfer");
        fail(src);
    }
}

/* On the receiver's own thread: the list's JSON read. */
static void read_list(void *arg)
{
    struct source *src = arg;
    char why[256];
    if (k8s_pod_list_parse(src->body.data, src->body.len, &src->listed, why, sizeof(why)) < 0) {
        snprintf(src->why, sizeof(src->why), "%s", why);
        src->failed = true;
    }
}

/* Back on the loop's thread: the list in place of what the source knew,
 * and a watch from its version. */
static void list_read(void *arg)
{
    struct source *src = arg;
    end_transfer(src);
    if (src->failed) {
        fail(src);
        return;
    }
    k8s_pod_list_free(&src->pods);
    src->pods = src->listed;
    src->listed = (struct k8s_pod_list){0};
    rebuild_soon(src->d);
    start_watch(src);
}

static void on_done(void *arg, CURL *easy, CURLcode result)
{
    struct source *src = arg;
    char why[512];
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    if (src->state == LISTING) {
        if (!k8s_api_succeeded(easy, result, &src->body, src->why, sizeof(src->why))) {
            fail(src);
            return;
        }
        src->state = READING;
        src->d->h->run_aside(src->d->self, read_list, list_read, src);
        return;
    }
    /* a watch: the server ended it, its version is gone, or it failed */
    bool gone = src->relist || status == 410;
    bool ended = !src->failed && result == CURLE_OK && status == 200;
    if (!src->failed && !k8s_api_succeeded(easy, result, &src->body, why, sizeof(why)))
        snprintf(src->why, sizeof(src->why), "the watch failed: %s", why);
    end_transfer(src);
    if (gone)
        src->d->h->log(src->d->self, PROFD_LOG_DEBUG, "job '%s': %s: the watch's version is "
                       "gone; listing again", src->d->job_name, src->url);
    if (gone)
        start_list(src);
    else if (ended && monotonic_ns() - src->watch_started < 1000000000)
        retry_in(src, 1000000000, true);   /* a server ending watches at once: not in a loop */
    else if (ended)
        start_watch(src);
    else
        fail(src);
}

static void start_list(struct source *src)
{
    struct k8s_discovery *d = src->d;
    src->state = LISTING;
    src->failed = false;
    if (!(src->easy = curl_easy_init())) {
        snprintf(src->why, sizeof(src->why), "libcurl cannot be set up");
        fail(src);
        return;
    }
    src->headers = k8s_api_prepare(src->easy, src->url, &d->access, &src->body);
    curl_easy_setopt(src->easy, CURLOPT_PRIVATE, src);
    if (http_client_add(d->http, src->easy) < 0) {
        snprintf(src->why, sizeof(src->why), "libcurl cannot start a transfer");
        fail(src);
    }
}

struct k8s_discovery *k8s_discovery_new(const struct profd_host *h, struct profd_component *self,
                                        const char *job_name,
                                        const struct kubernetes_sd_config *cfg,
                                        void (*changed)(void *arg), void *arg, char *why,
                                        size_t whylen)
{
    char *base = k8s_api_base(cfg->api_server);
    if (!base) {
        snprintf(why, whylen, "no api_server, and not in a Kubernetes pod "
                 "(KUBERNETES_SERVICE_HOST is not set)");
        return NULL;
    }
    char *own = NULL;
    if (cfg->namespaces.own_namespace &&
        !(own = read_secret(K8S_SERVICE_ACCOUNT "/namespace"))) {
        snprintf(why, whylen, "own_namespace: %s cannot be read",
                 K8S_SERVICE_ACCOUNT "/namespace");
        free(base);
        return NULL;
    }
    struct k8s_discovery *d = calloc(1, sizeof(*d));
    if (!d)
        abort();
    bool in_cluster = !cfg->api_server || !*cfg->api_server;
    *d = (struct k8s_discovery){
        .h = h, .self = self, .job_name = job_name, .cfg = cfg, .changed = changed, .arg = arg,
        .urls = k8s_sd_urls(cfg, base, own),
        .access = {cfg->api_server,
                   in_cluster && !(cfg->bearer_token_file && *cfg->bearer_token_file)
                       ? K8S_SERVICE_ACCOUNT "/token"
                       : cfg->bearer_token_file,
                   cfg->tls_config, cfg->timeout}};
    free(base);
    free(own);
    while (d->urls[d->nsources])
        d->nsources++;
    d->sources = calloc(d->nsources, sizeof(*d->sources));
    if (!d->sources)
        abort();
    for (size_t i = 0; i < d->nsources; i++)
        d->sources[i] = (struct source){.d = d, .url = d->urls[i]};
    char *job = escape_label_value(job_name);
    d->gauge_labels = must_asprintf("job=\"%s\"", job);
    free(job);
    return d;
}

int k8s_discovery_start(struct k8s_discovery *d)
{
    struct event_base *base = d->h->event_base(d->self);
    if (!(d->http = http_client_create(base, on_done)) ||
        !(d->rebuild = evtimer_new(base, rebuild, d)))
        return -1;
    for (size_t i = 0; i < d->nsources; i++)
        if (!(d->sources[i].retry = evtimer_new(base, on_retry, &d->sources[i])))
            return -1;
    for (size_t i = 0; i < d->nsources; i++)
        start_list(&d->sources[i]);
    return 0;
}

const struct profd_target_group *k8s_discovery_groups(const struct k8s_discovery *d, size_t *n)
{
    *n = d->ngroups;
    return d->groups;
}

void k8s_discovery_free(struct k8s_discovery *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->nsources; i++) {
        struct source *src = &d->sources[i];
        end_transfer(src);
        if (src->retry)
            event_free(src->retry);
        k8s_pod_list_free(&src->pods);
        k8s_pod_list_free(&src->listed);
    }
    http_client_destroy(d->http);
    if (d->rebuild)
        event_free(d->rebuild);
    d->h->sd_groups_free(d->groups, d->ngroups);
    free(d->signature);
    k8s_sd_urls_free(d->urls);
    free(d->sources);
    free(d->gauge_labels);
    free(d);
}
