// SPDX-License-Identifier: Apache-2.0
#include "k8s_discovery.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../lib/clock.h"
#include "../../lib/file_io.h"
#include "../../lib/grow.h"
#include "../../lib/k8s_api.h"
#include "../../lib/k8s_watch.h"
#include "k8s_groups.h"
#include "k8s_sd.h"
#include "targets.h"

/* Targets are made again this long after a change, so that a burst of
 * events makes them once; and no sooner after they were last made than
 * this many times as long as that took (the scrape list's too), so that
 * in a large cluster that changes all the time the event loop spends at
 * most a fifth of its time on it. */
#define REBUILD_DELAY_US 100000
#define REBUILD_SPACING 4

struct k8s_discovery {
    const struct profd_host *h;
    struct profd_component *self;
    const char *job_name;
    const struct kubernetes_sd_config *cfg;
    char **urls;
    struct k8s_watch **watches;   /* one a URL */
    size_t nwatches;
    char *nodes_url;              /* attach_metadata's node: the nodes, else NULL */
    struct k8s_watch *nodes;
    struct k8s_access access;
    struct k8s_kubeconfig kubeconfig;   /* kubeconfig_file's context, when set */
    struct event *rebuild;
    int64_t rebuild_not_before;   /* monotonic us */
    void (*changed)(void *arg);
    void *arg;
    struct k8s_groups groups;     /* the last build's */
    uint64_t signature;           /* of the groups, in order */
    bool built;                   /* groups and signature made once */
    size_t errors;
    char *gauge_labels;
};

static int64_t monotonic_us(void)
{
    return monotonic_ns() / 1000;
}

/* The targets of every watch's pods made again (those of pods that did
 * not change moved from the last build); the receiver told when they are
 * not what they were. */
static void rebuild(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct k8s_discovery *d = arg;
    int64_t started = monotonic_us();
    const struct k8s_pod_list *nodes = d->nodes ? k8s_watch_pods(d->nodes) : NULL;
    struct k8s_node_names names;
    k8s_node_names_init(&names, nodes);
    struct k8s_groups next = {0};
    size_t npods = 0;
    for (size_t i = 0; i < d->nwatches; i++) {
        const struct k8s_pod_list *pods = k8s_watch_pods(d->watches[i]);
        for (size_t p = 0; p < pods->n; p++)
            k8s_groups_add_pod(d->h, &next, &d->groups, &pods->pods[p],
                               k8s_node_named(&names, pods->pods[p].node));
        npods += pods->n;
    }
    k8s_node_names_free(&names);
    if (d->nwatches)
        d->h->gauge_set(d->self, "profd_scrape_k8s_pods",
                        "Pods a job's kubernetes_sd_configs know of.", d->gauge_labels,
                        (double)npods);
    if (nodes)
        d->h->gauge_set(d->self, "profd_scrape_k8s_nodes",
                        "Nodes a job's kubernetes_sd_configs know of (role node, "
                        "attach_metadata).", d->gauge_labels, (double)nodes->n);
    if (nodes && !d->nwatches)   /* role node */
        k8s_groups_add_nodes(d->h, &next, nodes);
    uint64_t sig = k8s_groups_signature(&next);
    bool changed = !d->built || sig != d->signature;
    k8s_groups_clear(d->h, &d->groups);   /* what was not moved on */
    d->groups = next;
    d->signature = sig;
    d->built = true;
    if (changed)
        d->changed(d->arg);
    int64_t ended = monotonic_us();
    d->rebuild_not_before = ended + REBUILD_SPACING * (ended - started);
}

/* A watch's pods (or nodes) changed: the targets made again soon. */
static void on_pods_changed(void *arg)
{
    struct k8s_discovery *d = arg;
    int64_t delay = d->rebuild_not_before - monotonic_us();
    if (delay < REBUILD_DELAY_US)
        delay = REBUILD_DELAY_US;
    struct timeval tv = {delay / 1000000, delay % 1000000};
    if (!evtimer_pending(d->rebuild, NULL))
        evtimer_add(d->rebuild, &tv);
}

/* Logs and counts a failed list or watch (why names the URL). */
static void on_watch_failed(void *arg, const char *why)
{
    struct k8s_discovery *d = arg;
    d->h->log(d->self, PROFD_LOG_WARN, "job '%s': %s; keeping its %zu target(s), listing "
              "again in %lld ms", d->job_name, why, d->groups.n,
              (long long)(d->cfg->retry_interval / 1000000));
    d->h->gauge_set(d->self, "profd_scrape_k8s_errors",
                    "Pod (and node) lists and watches of a job's kubernetes_sd_configs that "
                    "failed.",
                    d->gauge_labels, (double)++d->errors);
}

/* The namespace profd runs in, malloc'd: the kubeconfig context's, else
 * the service account's; NULL, with why, when it cannot be known. */
static char *own_namespace(const struct k8s_kubeconfig *kc, char *why, size_t whylen)
{
    const char *file = K8S_SERVICE_ACCOUNT "/namespace";
    char *own = kc ? must_strdup(kc->namespace) : read_secret(file);
    if (!own)
        snprintf(why, whylen, "own_namespace: %s cannot be read", file);
    return own;
}

struct k8s_discovery *k8s_discovery_new(const struct profd_host *h, struct profd_component *self,
                                        const char *job_name,
                                        const struct kubernetes_sd_config *cfg,
                                        void (*changed)(void *arg), void *arg, char *why,
                                        size_t whylen)
{
    struct k8s_discovery *d = calloc(1, sizeof(*d));
    if (!d)
        abort();
    bool from_kubeconfig = option_set(cfg->kubeconfig_file);
    if (from_kubeconfig &&
        k8s_kubeconfig_load(cfg->kubeconfig_file, NULL, &d->kubeconfig, why, whylen) < 0) {
        free(d);
        return NULL;
    }
    bool in_cluster = !option_set(cfg->api_server) && !from_kubeconfig;
    d->access = (struct k8s_access){
        cfg->api_server,
        in_cluster && !option_set(cfg->bearer_token_file) ? K8S_SERVICE_ACCOUNT "/token"
                                                      : cfg->bearer_token_file,
        cfg->tls_config, cfg->timeout, from_kubeconfig ? &d->kubeconfig : NULL};
    char *base = k8s_api_base(&d->access), *own = NULL;
    if (!base)
        snprintf(why, whylen, "no api_server or kubeconfig_file, and not in a Kubernetes pod "
                 "(KUBERNETES_SERVICE_HOST is not set)");
    /* nodes are in no namespace: role node's own_namespace is moot */
    bool own_asked = cfg->namespaces.own_namespace && strcmp(cfg->role, "node") != 0;
    if (base && own_asked)
        own = own_namespace(d->access.kubeconfig, why, whylen);
    if (!base || (own_asked && !own)) {
        free(base);
        k8s_kubeconfig_clear(&d->kubeconfig);
        free(d);
        return NULL;
    }
    d->h = h;
    d->self = self;
    d->job_name = job_name;
    d->cfg = cfg;
    d->changed = changed;
    d->arg = arg;
    d->urls = k8s_sd_urls(cfg, base, own);
    d->nodes_url = k8s_sd_nodes_url(cfg, base);
    free(base);
    free(own);
    while (d->urls[d->nwatches])
        d->nwatches++;
    d->watches = calloc(d->nwatches + 1, sizeof(*d->watches));   /* none for role node */
    if (!d->watches)
        abort();
    struct k8s_watch_hooks hooks = {on_pods_changed, on_watch_failed, d};
    for (size_t i = 0; i < d->nwatches; i++)
        d->watches[i] = k8s_watch_new(h, self, d->urls[i], &d->access, cfg->retry_interval,
                                      &hooks);
    if (d->nodes_url)
        d->nodes = k8s_watch_new(h, self, d->nodes_url, &d->access, cfg->retry_interval, &hooks);
    char *job = escape_label_value(job_name);
    d->gauge_labels = must_asprintf("job=\"%s\"", job);
    free(job);
    return d;
}

int k8s_discovery_start(struct k8s_discovery *d)
{
    if (!(d->rebuild = evtimer_new(d->h->event_base(d->self), rebuild, d)))
        return -1;
    for (size_t i = 0; i < d->nwatches; i++)
        if (k8s_watch_start(d->watches[i], NULL) < 0)
            return -1;
    return d->nodes ? k8s_watch_start(d->nodes, NULL) : 0;
}

struct found_groups k8s_discovery_found(const struct k8s_discovery *d)
{
    return (struct found_groups){d->groups.groups, d->groups.n, d->groups.hashes};
}

void k8s_discovery_free(struct k8s_discovery *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->nwatches; i++)
        k8s_watch_free(d->watches[i]);
    k8s_watch_free(d->nodes);
    free(d->nodes_url);
    if (d->rebuild)
        event_free(d->rebuild);
    k8s_groups_clear(d->h, &d->groups);
    k8s_sd_urls_free(d->urls);
    free(d->watches);
    free(d->gauge_labels);
    k8s_kubeconfig_clear(&d->kubeconfig);
    free(d);
}
