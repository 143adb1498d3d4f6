// SPDX-License-Identifier: Apache-2.0
/*
 * processor k8s_metadata: the Kubernetes pod a profile came from, as
 * series labels namespace, pod, container and node (and, with pod_labels,
 * each pod label as pod_label_<name>; with pod_annotations, each
 * annotation as pod_annotation_<name>), labels a record has already kept.
 * - A record's process (the `pid_label`, "pid" as perf_data sets it) is
 *   found in its cgroup (`proc_root`/<pid>/cgroup, cgroup.h): the
 *   container's id, else the pod's UID. With `ip_label` (e.g. "instance"
 *   of a scrape), the host of that label's value is matched with the pods'
 *   IPs when the process says nothing.
 * - The pods come from the Kubernetes API: GET /api/v1/pods (of
 *   `node_name` only, when set, as a node agent lists them) every
 *   `resync_interval`, and sooner (at most once a second) when a
 *   container no list had shows up. The list runs on the processor's own
 *   thread; records are labeled from the last list that came back. With
 *   `wait_for_metadata` (the default) the first list is made as profd
 *   starts, before any receiver does, so the first profiles are labeled
 *   too.
 * - `api_server` defaults to the cluster's own (KUBERNETES_SERVICE_HOST and
 *   _PORT, over TLS with the service account's CA); the token is read from
 *   `bearer_token_file` before each list, as tokens rotate.
 * A failed list is logged and counted; records keep going, labeled from
 * the pods known.
 */
#include <curl/curl.h>
#include <event2/event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../lib/client_tls.h"
#include "../../lib/file_io.h"
#include "../../lib/grow.h"
#include "../../lib/k8s_api.h"
#include "../../lib/label_valid.h"
#include "../../lib/running_total.h"
#include "../../lib/tick.h"
#include "cgroup.h"
#include "pods.h"
#include "profd/plugin.h"

#define MIN_RELIST_NS 1000000000LL

struct config {
    char *api_server;
    char *bearer_token_file;
    struct client_tls tls;
    char *node_name;
    int64_t resync_interval;
    int64_t timeout;
    char *proc_root;
    char *pid_label;
    char *ip_label;
    bool pod_labels, pod_annotations;
    bool wait_for_metadata;
};

static const struct profd_option options[] = {
    {"api_server", PROFD_OPT_STRING, offsetof(struct config, api_server), NULL,
     "the Kubernetes API's URL; empty: the cluster's own (KUBERNETES_SERVICE_HOST/_PORT)"},
    {"bearer_token_file", PROFD_OPT_STRING, offsetof(struct config, bearer_token_file),
     K8S_SERVICE_ACCOUNT "/token", "token sent to the API, read before each list; missing: none"},
    {"tls", PROFD_OPT_OBJECT, offsetof(struct config, tls), NULL,
     "TLS to the API (in a cluster the service account's CA by default)", client_tls_options},
    {"node_name", PROFD_OPT_STRING, offsetof(struct config, node_name), NULL,
     "list only this node's pods (a node agent: ${env:NODE_NAME}); empty: every pod"},
    {"resync_interval", PROFD_OPT_DURATION, offsetof(struct config, resync_interval), "30s",
     "how often the pods are listed again"},
    {"timeout", PROFD_OPT_DURATION, offsetof(struct config, timeout), "10s",
     "longest a list may take"},
    {"proc_root", PROFD_OPT_STRING, offsetof(struct config, proc_root), "/proc",
     "where processes' cgroup files are (a host's /proc mounted elsewhere)"},
    {"pid_label", PROFD_OPT_STRING, offsetof(struct config, pid_label), "pid",
     "the series label holding a record's process id"},
    {"ip_label", PROFD_OPT_STRING, offsetof(struct config, ip_label), NULL,
     "a series label whose host (host:port) is matched with pod IPs; empty: none"},
    {"pod_labels", PROFD_OPT_BOOL, offsetof(struct config, pod_labels), "false",
     "also each pod label, as pod_label_<name>"},
    {"pod_annotations", PROFD_OPT_BOOL, offsetof(struct config, pod_annotations), "false",
     "also each pod annotation, as pod_annotation_<name>"},
    {"wait_for_metadata", PROFD_OPT_BOOL, offsetof(struct config, wait_for_metadata), "true",
     "list the pods once before profd starts taking profiles (for at most timeout)"},
    {0},
};

struct state {
    const struct profd_host *host;
    struct profd_component *self;
    const struct config *cfg;
    char *url;                 /* the list's */
    pthread_mutex_t mu;        /* what follows */
    struct pod_index *index;   /* the last list that came back, or NULL */
    bool listing, want_list;
    int64_t last_list;         /* monotonic ns a list last started, 0 never */
    struct event *tick;
    _Atomic size_t matched, unmatched, list_errors;
};

/* Whether an optional string option is set to something. */
static bool is_set(const char *option)
{
    return option && *option;
}

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int validate(const struct profd_host *host, struct profd_diag *d, const void *cfgp)
{
    const struct config *cfg = cfgp;
    if (cfg->resync_interval <= 0)
        host->diag(d, &cfg->resync_interval, "resync_interval must be more than 0");
    return PROFD_OK;
}

/* The list's URL: the API server's /api/v1/pods, of node_name's only;
 * NULL when there is no API server to ask. */
static char *list_url(const struct config *cfg)
{
    char *base = k8s_api_base(cfg->api_server);
    if (!base)
        return NULL;
    char *url;
    if (is_set(cfg->node_name)) {
        char *node = curl_easy_escape(NULL, cfg->node_name, 0);   /* no handle needed */
        url = must_asprintf("%s/api/v1/pods?fieldSelector=spec.nodeName%%3D%s", base,
                            node ? node : "");
        curl_free(node);
    } else {
        url = must_asprintf("%s/api/v1/pods", base);
    }
    free(base);
    return url;
}

/* GETs the pod list into *b; false with why set. */
static bool get_pods(struct state *s, struct k8s_response *b, char *why, size_t whylen)
{
    CURL *h = curl_easy_init();
    if (!h) {
        snprintf(why, whylen, "libcurl cannot be set up");
        return false;
    }
    const struct config *cfg = s->cfg;
    struct k8s_access access = {cfg->api_server, cfg->bearer_token_file, cfg->tls, cfg->timeout};
    struct curl_slist *headers = k8s_api_prepare(h, s->url, &access, b);
    bool ok = k8s_api_succeeded(h, curl_easy_perform(h), b, why, whylen);
    curl_slist_free_all(headers);
    curl_easy_cleanup(h);
    return ok;
}

/* On the processor's own thread: lists the pods and, when that worked,
 * puts them in place of the last list's. */
static void list_pods(void *arg)
{
    struct state *s = arg;
    struct k8s_response b = {0};
    char why[512];
    struct pod_index *ix = get_pods(s, &b, why, sizeof(why))
                               ? pod_index_parse(b.data, b.len, why, sizeof(why))
                               : NULL;
    free(b.data);
    if (!ix) {
        s->host->log(s->self, PROFD_LOG_WARN, "listing the pods from %s: %s", s->url, why);
        running_total_add(s->host, s->self, &s->list_errors, 1, "profd_k8s_metadata_list_errors",
                          "Pod lists from the Kubernetes API that failed.");
        return;
    }
    size_t npods = ix->list.n;
    pthread_mutex_lock(&s->mu);
    struct pod_index *old = s->index;
    s->index = ix;
    pthread_mutex_unlock(&s->mu);
    pod_index_free(old);
    s->host->gauge_set(s->self, "profd_k8s_metadata_pods", "Pods the last list had.", "",
                       (double)npods);
}

static void list_done(void *arg)
{
    struct state *s = arg;
    pthread_mutex_lock(&s->mu);
    s->listing = false;
    pthread_mutex_unlock(&s->mu);
}

/* On the loop's thread: lists the pods when it is time, or when a record
 * met a container no list had and the last list is a second old. */
static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct state *s = arg;
    int64_t now = monotonic_ns();
    pthread_mutex_lock(&s->mu);
    int64_t age = now - s->last_list;
    bool due = !s->listing && (!s->last_list || age >= s->cfg->resync_interval ||
                               (s->want_list && age >= MIN_RELIST_NS));
    if (due) {
        s->listing = true;
        s->want_list = false;
        s->last_list = now;
    }
    pthread_mutex_unlock(&s->mu);
    if (due)
        s->host->run_aside(s->self, list_pods, list_done, s);
}

/* The pod of process pid (its container's name into *container), or
 * NULL; sets *unknown when its cgroup names a container no list had. */
static const struct k8s_pod *pod_of_pid(struct state *s, const char *pid, const char **container,
                                    bool *unknown)
{
    char path[4096], id[CONTAINER_ID_SIZE], uid[POD_UID_SIZE];
    if (!*pid || strspn(pid, "0123456789") != strlen(pid))
        return NULL;
    snprintf(path, sizeof(path), "%s/%s/cgroup", s->cfg->proc_root, pid);
    size_t len;
    char *text = read_small_file(path, 1 << 16, &len);
    bool named = text && cgroup_container(text, len, id, uid);
    free(text);
    if (!named)
        return NULL;
    const struct k8s_pod *pod = id[0] ? pod_index_container(s->index, id, container) : NULL;
    if (!pod && uid[0])
        pod = pod_index_uid(s->index, uid);
    if (!pod)
        *unknown = true;
    return pod;
}

/* The pod whose IP is the host of value: host:port, [v6]:port, or a bare
 * host (a v6 address with no port has several ':'); NULL when none. */
static const struct k8s_pod *pod_of_address(struct state *s, const char *value)
{
    const char *start = value, *end = NULL;
    if (*value == '[') {
        start = value + 1;
        end = strchr(start, ']');
    } else if (strchr(value, ':') == strrchr(value, ':')) {
        end = strchr(value, ':');
    }
    size_t n = end ? (size_t)(end - start) : strlen(start);
    char host[256];
    if (n >= sizeof(host))
        return NULL;
    memcpy(host, start, n);
    host[n] = '\0';
    return pod_index_ip(s->index, host);
}

/* Sets name = value on r unless r has name already. */
static void label_unless_set(struct state *s, struct profd_record *r, const char *name,
                             const char *value)
{
    if (*value && !s->host->record_label(r, name))
        s->host->record_set_label(r, name, value);
}

/* Sets prefix<name> = value for each pair, the name made a valid label
 * name (app.kubernetes.io/name: pod_label_app_kubernetes_io_name). */
static void label_with_pairs(struct state *s, struct profd_record *r, const char *prefix,
                             const struct k8s_pairs *pairs)
{
    for (size_t i = 0; i < pairs->n; i++) {
        char name[256], valid[256];
        snprintf(name, sizeof(name), "%s%s", prefix, pairs->names[i]);
        label_valid_name(name, false, sizeof(valid) - 1, valid);
        label_unless_set(s, r, valid, pairs->values[i]);
    }
}

static void label_record(struct state *s, struct profd_record *r, const struct k8s_pod *pod,
                         const char *container)
{
    label_unless_set(s, r, "namespace", pod->namespace);
    label_unless_set(s, r, "pod", pod->name);
    label_unless_set(s, r, "node", pod->node);
    if (container)
        label_unless_set(s, r, "container", container);
    if (s->cfg->pod_labels)
        label_with_pairs(s, r, "pod_label_", &pod->labels);
    if (s->cfg->pod_annotations)
        label_with_pairs(s, r, "pod_annotation_", &pod->annotations);
}

static int consume(void *st, struct profd_batch *b)
{
    struct state *s = st;
    size_t matched = 0, unmatched = 0;
    bool unknown = false;
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < b->nrecords; i++) {
        struct profd_record *r = b->records[i];
        const char *pid = s->host->record_label(r, s->cfg->pid_label);
        const char *address = is_set(s->cfg->ip_label) ? s->host->record_label(r, s->cfg->ip_label)
                                                : NULL;
        if (!pid && !address)
            continue;
        const char *container = NULL;
        const struct k8s_pod *pod = pid ? pod_of_pid(s, pid, &container, &unknown) : NULL;
        if (!pod && address)
            pod = pod_of_address(s, address);
        if (pod)
            label_record(s, r, pod, container);
        matched += pod != NULL;
        unmatched += pod == NULL;
    }
    s->want_list |= unknown;
    pthread_mutex_unlock(&s->mu);
    running_total_add(s->host, s->self, &s->matched, matched,
                      "profd_k8s_metadata_matched_records", "Records given their pod's labels.");
    running_total_add(s->host, s->self, &s->unmatched, unmatched,
                      "profd_k8s_metadata_unmatched_records",
                      "Records with a process or address that no listed pod has.");
    return s->host->emit(s->self, b);
}

static int create(const struct profd_host *host, struct profd_component *self, const void *cfg,
                  void **out)
{
    struct state *s = calloc(1, sizeof(*s));
    if (!s)
        return PROFD_ERR;
    curl_global_init(CURL_GLOBAL_DEFAULT);   /* once per create: destroy ends it */
    *s = (struct state){.host = host, .self = self, .cfg = cfg, .url = list_url(cfg)};
    pthread_mutex_init(&s->mu, NULL);
    *out = s;
    return PROFD_OK;
}

static int start(void *st)
{
    struct state *s = st;
    if (!s->url) {
        s->host->log(s->self, PROFD_LOG_ERROR, "no api_server, and not in a Kubernetes pod "
                     "(KUBERNETES_SERVICE_HOST is not set): records pass unlabeled");
        return PROFD_OK;
    }
    int64_t every = s->cfg->resync_interval < MIN_RELIST_NS ? s->cfg->resync_interval
                                                            : MIN_RELIST_NS;
    if (!(s->tick = tick_start(s->host, s->self, every, on_tick, s)))
        return PROFD_ERR;
    if (s->cfg->wait_for_metadata) {   /* before the receivers start */
        s->last_list = monotonic_ns();
        list_pods(s);
    } else {
        on_tick(-1, 0, s);   /* the first list at once, on the processor's thread */
    }
    return PROFD_OK;
}

static int stop(void *st)
{
    struct state *s = st;
    tick_stop(&s->tick);
    return PROFD_OK;
}

static void destroy(void *st)
{
    struct state *s = st;
    if (!s)
        return;
    pod_index_free(s->index);
    pthread_mutex_destroy(&s->mu);
    free(s->url);
    free(s);
    curl_global_cleanup();
}

static const struct profd_plugin plugin = {
    PROFD_PLUGIN_HEADER,
    .kind = PROFD_PROCESSOR,
    .type = "k8s_metadata",
    .description = "the Kubernetes pod a profile came from (by process cgroup or pod IP), "
                   "as namespace, pod, container and node labels",
    .options = options,
    .config_size = sizeof(struct config),
    .flags = PROFD_PLUGIN_MUTATES,
    .validate = validate,
    .create = create,
    .start = start,
    .consume = consume,
    .shutdown = stop,
    .destroy = destroy,
};

PROFD_PLUGIN_DEFINE(plugin)
