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

#define PODS_HELP "Pods a job's kubernetes_sd_configs know of."
#define SERVICES_HELP \
    "Services a job's kubernetes_sd_configs know of (roles service, endpointslice, endpoints)."

/* The watches of one resource: one a URL (a namespace). */
struct watch_set {
    char **urls;
    struct k8s_watch **watches;
    size_t n;
};

struct k8s_discovery {
    const struct profd_host *h;
    struct profd_component *self;
    const char *job_name;
    const struct kubernetes_sd_config *cfg;
    struct watch_set pods, services;   /* as the role needs them */
    struct watch_set endpoints;        /* role endpointslice's slices, role endpoints' */
    struct watch_set ingresses;        /* role ingress's */
    char *nodes_url;              /* role node, attach_metadata's node: the nodes, else NULL */
    struct k8s_watch *nodes;
    struct k8s_access access;
    struct client_auth auth;            /* the config's, which access points at */
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

/* Indexes the objects of every watch of set into *names. */
static size_t index_set(const struct watch_set *set, struct k8s_names *names)
{
    size_t n = 0;
    for (size_t i = 0; i < set->n; i++) {
        const struct k8s_pod_list *objects = k8s_watch_pods(set->watches[i]);
        k8s_names_add(names, objects);
        n += objects->n;
    }
    return n;
}

/* Sets the gauge name (help) to n, for a set the role has. */
static void count(struct k8s_discovery *d, const struct watch_set *set, const char *name,
                  const char *help, size_t n)
{
    if (set->n)
        d->h->gauge_set(d->self, name, help, d->gauge_labels, (double)n);
}

/* Roles endpointslice and endpoints: the groups of every EndpointSlice
 * (Endpoints object) into next. */
static void add_endpoints(struct k8s_discovery *d, struct k8s_groups *next,
                          const struct k8s_names *nodes)
{
    enum k8s_endpoints_role role =
        strcmp(d->cfg->role, "endpoints") ? K8S_ROLE_ENDPOINTSLICE : K8S_ROLE_ENDPOINTS;
    struct k8s_names pods = {0}, services = {0}, objects = {0};
    size_t npods = index_set(&d->pods, &pods), nservices = index_set(&d->services, &services);
    size_t nobjects = index_set(&d->endpoints, &objects);
    for (size_t i = 0; i < objects.n; i++)
        k8s_groups_add_endpoints(d->h, next, &d->groups, role, objects.objects[i], &services,
                                 &pods, d->nodes ? nodes : NULL);
    count(d, &d->services, "profd_scrape_k8s_services", SERVICES_HELP, nservices);
    if (role == K8S_ROLE_ENDPOINTS)
        count(d, &d->endpoints, "profd_scrape_k8s_endpoints",
              "Endpoints objects a job's kubernetes_sd_configs know of (role endpoints).",
              nobjects);
    else
        count(d, &d->endpoints, "profd_scrape_k8s_endpointslices",
              "EndpointSlices a job's kubernetes_sd_configs know of (role endpointslice).",
              nobjects);
    count(d, &d->pods, "profd_scrape_k8s_pods", PODS_HELP, npods);
    k8s_names_free(&pods);
    k8s_names_free(&services);
    k8s_names_free(&objects);
}

/* Roles service and ingress: the groups make makes of each object of set
 * into next; how many there are. */
static size_t add_objects(struct k8s_discovery *d, struct k8s_groups *next,
                          const struct watch_set *set, k8s_groups_maker make)
{
    size_t n = 0;
    for (size_t i = 0; i < set->n; i++) {
        const struct k8s_pod_list *objects = k8s_watch_pods(set->watches[i]);
        for (size_t k = 0; k < objects->n; k++)
            k8s_groups_add_object(d->h, next, &d->groups, &objects->pods[k], make);
        n += objects->n;
    }
    return n;
}

/* Role pod: the groups of every pod into next. */
static void add_pods(struct k8s_discovery *d, struct k8s_groups *next,
                     const struct k8s_names *nodes)
{
    size_t npods = 0;
    for (size_t i = 0; i < d->pods.n; i++) {
        const struct k8s_pod_list *pods = k8s_watch_pods(d->pods.watches[i]);
        for (size_t p = 0; p < pods->n; p++)
            k8s_groups_add_pod(d->h, next, &d->groups, &pods->pods[p],
                               k8s_named(nodes, "", pods->pods[p].node));
        npods += pods->n;
    }
    count(d, &d->pods, "profd_scrape_k8s_pods", PODS_HELP, npods);
}

static bool set_listed(const struct watch_set *set)
{
    for (size_t i = 0; i < set->n; i++)
        if (!k8s_watch_listed(set->watches[i]))
            return false;
    return true;
}

/* Whether every list d asks for came back once, as Prometheus waits for
 * them: no target is made without the labels of a list still to come. */
static bool all_listed(const struct k8s_discovery *d)
{
    return set_listed(&d->pods) && set_listed(&d->services) && set_listed(&d->endpoints) &&
           set_listed(&d->ingresses) &&
           (!d->nodes || k8s_watch_listed(d->nodes));
}

/* The targets of every watch's objects made again (those of objects that
 * did not change moved from the last build); the receiver told when they
 * are not what they were. Nothing before every list came back. */
static void rebuild(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct k8s_discovery *d = arg;
    if (!all_listed(d))
        return;   /* made when the last of them comes */
    int64_t started = monotonic_us();
    const struct k8s_pod_list *nodes = d->nodes ? k8s_watch_pods(d->nodes) : NULL;
    struct k8s_names names = {0};
    k8s_names_add(&names, nodes);
    struct k8s_groups next = {0};
    if (d->endpoints.n)
        add_endpoints(d, &next, &names);
    else if (d->pods.n)
        add_pods(d, &next, &names);
    else if (d->services.n)   /* role service */
        count(d, &d->services, "profd_scrape_k8s_services", SERVICES_HELP,
              add_objects(d, &next, &d->services, k8s_sd_service_groups));
    else if (d->ingresses.n)
        count(d, &d->ingresses, "profd_scrape_k8s_ingresses",
              "Ingresses a job's kubernetes_sd_configs know of (role ingress).",
              add_objects(d, &next, &d->ingresses, k8s_sd_ingress_groups));
    else if (nodes)   /* role node */
        k8s_groups_add_nodes(d->h, &next, nodes);
    k8s_names_free(&names);
    if (nodes)
        d->h->gauge_set(d->self, "profd_scrape_k8s_nodes",
                        "Nodes a job's kubernetes_sd_configs know of (role node, "
                        "attach_metadata).", d->gauge_labels, (double)nodes->n);
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
static void on_pods_changed(void *arg, const struct k8s_pod *pod, bool deleted)
{
    (void)pod;
    (void)deleted;
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
                    "Lists and watches of a job's kubernetes_sd_configs (pods, nodes, services, "
                    "endpointslices, endpoints, ingresses) that failed.",
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

/* A watch for each of urls (k8s_sd_urls'; set owns them from then on). */
static void watch_set_init(struct k8s_discovery *d, struct watch_set *set, char **urls,
                           const struct k8s_watch_hooks *hooks)
{
    *set = (struct watch_set){.urls = urls};
    while (urls[set->n])
        set->n++;
    set->watches = calloc(set->n + 1, sizeof(*set->watches));
    if (!set->watches)
        abort();
    for (size_t i = 0; i < set->n; i++)
        set->watches[i] = k8s_watch_new(d->h, d->self, urls[i], &d->access,
                                        d->cfg->retry_interval, hooks);
}

static int watch_set_start(struct watch_set *set)
{
    for (size_t i = 0; i < set->n; i++)
        if (k8s_watch_start(set->watches[i], NULL) < 0)
            return -1;
    return 0;
}

static void watch_set_free(struct watch_set *set)
{
    for (size_t i = 0; i < set->n; i++)
        k8s_watch_free(set->watches[i]);
    free(set->watches);
    k8s_sd_urls_free(set->urls);
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
    d->auth = cfg->auth;   /* in the cluster, without credentials: the service account's */
    if (in_cluster && !client_auth_credentials_set(&cfg->auth))
        d->auth.bearer_token_file = K8S_SERVICE_ACCOUNT "/token";
    d->access = (struct k8s_access){cfg->api_server, &d->auth, cfg->tls_config, cfg->timeout,
                                    from_kubeconfig ? &d->kubeconfig : NULL,
                                    .http_headers = &cfg->http_headers};
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
    if (oauth2_set(&cfg->auth.oauth2))
        d->access.oauth2 = oauth2_shared_new(&d->auth, &cfg->tls_config, cfg->timeout);
    d->h = h;
    d->self = self;
    d->job_name = job_name;
    d->cfg = cfg;
    d->changed = changed;
    d->arg = arg;
    struct k8s_watch_hooks hooks = {on_pods_changed, on_watch_failed, d};
    watch_set_init(d, &d->pods, k8s_sd_urls(cfg, base, own, "pods"), &hooks);
    watch_set_init(d, &d->services, k8s_sd_urls(cfg, base, own, "services"), &hooks);
    watch_set_init(d, &d->endpoints,
                   k8s_sd_urls(cfg, base, own,
                               strcmp(cfg->role, "endpoints") ? "endpointslices" : "endpoints"),
                   &hooks);
    watch_set_init(d, &d->ingresses, k8s_sd_urls(cfg, base, own, "ingresses"), &hooks);
    d->nodes_url = k8s_sd_nodes_url(cfg, base);
    free(base);
    free(own);
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
    if (watch_set_start(&d->pods) < 0 || watch_set_start(&d->services) < 0 ||
        watch_set_start(&d->endpoints) < 0 || watch_set_start(&d->ingresses) < 0)
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
    watch_set_free(&d->pods);
    watch_set_free(&d->services);
    watch_set_free(&d->endpoints);
    watch_set_free(&d->ingresses);
    k8s_watch_free(d->nodes);
    free(d->nodes_url);
    if (d->rebuild)
        event_free(d->rebuild);
    k8s_groups_clear(d->h, &d->groups);
    free(d->gauge_labels);
    k8s_kubeconfig_clear(&d->kubeconfig);
    oauth2_shared_free(d->access.oauth2);
    free(d);
}
