// SPDX-License-Identifier: Apache-2.0
#include "k8s_discovery.h"

#include <curl/curl.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/file_io.h"
#include "../../lib/grow.h"
#include "../../lib/k8s_api.h"
#include "../../lib/tick.h"
#include "http.h"
#include "k8s_sd.h"
#include "targets.h"

/* One URL's list in flight. */
struct list_call {
    struct k8s_discovery *d;
    CURL *easy;
    struct curl_slist *headers;
    struct k8s_response body;
};

struct k8s_discovery {
    const struct profd_host *h;
    struct profd_component *self;
    const char *job_name;
    const struct kubernetes_sd_config *cfg;
    char **urls;
    size_t nurls;
    struct http_client *http;
    struct event *tick;
    void (*changed)(void *arg);
    void *arg;
    /* A list: its transfers on the loop's thread, then its reading on the
     * receiver's own (when they all worked). */
    struct list_call *calls;   /* nurls of them */
    size_t running;            /* transfers not finished */
    bool listing;              /* from the first transfer to the list's end */
    bool failed;
    char why[1024];
    /* What the last list that worked made, and what this one makes. */
    struct profd_target_group *groups, *next;
    size_t ngroups, nnext, npods;
    char *signature, *next_signature;
    size_t errors;
    char *gauge_labels;
};

static void free_calls(struct k8s_discovery *d)
{
    for (size_t i = 0; i < d->nurls; i++) {
        struct list_call *c = &d->calls[i];
        if (c->easy) {
            http_client_cancel(d->http, c->easy);
            curl_easy_cleanup(c->easy);
        }
        curl_slist_free_all(c->headers);
        free(c->body.data);
        *c = (struct list_call){.d = d};
    }
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

/* On the receiver's own thread: the lists read and made targets. */
static void read_lists(void *arg)
{
    struct k8s_discovery *d = arg;
    size_t cap = 0;
    d->npods = 0;
    for (size_t i = 0; i < d->nurls && !d->failed; i++) {
        struct k8s_pod_list pods;
        char why[256];
        if (k8s_pod_list_parse(d->calls[i].body.data, d->calls[i].body.len, &pods, why,
                               sizeof(why)) < 0) {
            snprintf(d->why, sizeof(d->why), "%s: %s", d->urls[i], why);
            d->failed = true;
            break;
        }
        d->npods += pods.n;
        k8s_sd_groups(d->h, &pods, &d->next, &d->nnext, &cap);
        k8s_pod_list_free(&pods);
    }
    if (!d->failed)
        d->next_signature = groups_signature(d->next, d->nnext);
}

/* Back on the loop's thread: the new targets in place, or the failure
 * told. */
static void lists_read(void *arg)
{
    struct k8s_discovery *d = arg;
    bool changed = false;
    if (d->failed) {
        d->h->log(d->self, PROFD_LOG_WARN, "job '%s': listing the pods: %s; keeping its %zu "
                  "target(s)", d->job_name, d->why, d->ngroups);
        d->h->gauge_set(d->self, "profd_scrape_k8s_list_errors",
                        "Pod lists of a job's kubernetes_sd_configs that failed.",
                        d->gauge_labels, (double)++d->errors);
    } else {
        d->h->gauge_set(d->self, "profd_scrape_k8s_pods",
                        "Pods the last list of a job's kubernetes_sd_configs had.",
                        d->gauge_labels, (double)d->npods);
        changed = !d->signature || strcmp(d->signature, d->next_signature) != 0;
    }
    if (changed) {
        d->h->sd_groups_free(d->groups, d->ngroups);
        free(d->signature);
        d->groups = d->next;
        d->ngroups = d->nnext;
        d->signature = d->next_signature;
    } else {
        d->h->sd_groups_free(d->next, d->nnext);
        free(d->next_signature);
    }
    d->next = NULL;
    d->nnext = 0;
    d->next_signature = NULL;
    free_calls(d);
    d->listing = false;
    if (changed)
        d->changed(d->arg);
}

static void on_list_done(void *arg, CURL *easy, CURLcode result)
{
    struct list_call *c = arg;
    struct k8s_discovery *d = c->d;
    char why[256];
    if (!d->failed && !k8s_api_succeeded(easy, result, &c->body, why, sizeof(why))) {
        snprintf(d->why, sizeof(d->why), "%s: %s", d->urls[c - d->calls], why);
        d->failed = true;
    }
    if (--d->running > 0)
        return;
    if (d->failed)
        lists_read(d);
    else
        d->h->run_aside(d->self, read_lists, lists_read, d);
}

/* Starts a list of every URL unless one is still going. */
static void list_pods(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct k8s_discovery *d = arg;
    if (d->listing)
        return;
    d->listing = true;
    d->failed = false;
    d->running = d->nurls;
    struct k8s_access access = {d->cfg->api_server, d->cfg->bearer_token_file,
                                d->cfg->tls_config, d->cfg->timeout};
    if (!d->cfg->api_server || !*d->cfg->api_server)
        access.bearer_token_file = d->cfg->bearer_token_file && *d->cfg->bearer_token_file
                                       ? d->cfg->bearer_token_file
                                       : K8S_SERVICE_ACCOUNT "/token";
    for (size_t i = 0; i < d->nurls; i++) {
        struct list_call *c = &d->calls[i];
        if (!(c->easy = curl_easy_init())) {
            snprintf(d->why, sizeof(d->why), "libcurl cannot be set up");
            d->failed = true;
            on_list_done(c, NULL, CURLE_FAILED_INIT);
            continue;
        }
        c->headers = k8s_api_prepare(c->easy, d->urls[i], &access, &c->body);
        curl_easy_setopt(c->easy, CURLOPT_PRIVATE, c);
        if (http_client_add(d->http, c->easy) < 0) {
            snprintf(d->why, sizeof(d->why), "libcurl cannot start a transfer");
            d->failed = true;
            on_list_done(c, c->easy, CURLE_FAILED_INIT);
        }
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
    *d = (struct k8s_discovery){.h = h, .self = self, .job_name = job_name, .cfg = cfg,
                                .changed = changed, .arg = arg,
                                .urls = k8s_sd_urls(cfg, base, own)};
    free(base);
    free(own);
    while (d->urls[d->nurls])
        d->nurls++;
    d->calls = calloc(d->nurls, sizeof(*d->calls));
    if (!d->calls)
        abort();
    for (size_t i = 0; i < d->nurls; i++)
        d->calls[i].d = d;
    char *job = escape_label_value(job_name);
    d->gauge_labels = must_asprintf("job=\"%s\"", job);
    free(job);
    return d;
}

int k8s_discovery_start(struct k8s_discovery *d)
{
    if (!(d->http = http_client_create(d->h->event_base(d->self), on_list_done)) ||
        !(d->tick = tick_start(d->h, d->self, d->cfg->refresh_interval, list_pods, d)))
        return -1;
    list_pods(-1, 0, d);
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
    tick_stop(&d->tick);
    free_calls(d);
    http_client_destroy(d->http);
    d->h->sd_groups_free(d->groups, d->ngroups);
    free(d->signature);
    k8s_sd_urls_free(d->urls);
    free(d->calls);
    free(d->gauge_labels);
    free(d);
}
