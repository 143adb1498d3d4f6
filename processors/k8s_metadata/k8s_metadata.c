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
 *   `node_name` only, when set, as a node agent lists them), listed and
 *   then watched (k8s_watch.h) on the event loop's libcurl, the list's
 *   JSON read on the processor's own thread; the index records are
 *   looked up in keeps the pods (the watch keeps no copy of its own) and
 *   is changed a pod at a time as the watch tells of them (made again
 *   only from a new list). With
 *   `wait_for_metadata` (the default) the
 *   first list is made as profd starts, before any receiver does, so the
 *   first profiles are labeled too, and the watch goes on from it. With
 *   `node_labels` the nodes (node_name's alone) are listed and watched
 *   the same way, for their labels.
 * - `api_server` defaults to the cluster's own (KUBERNETES_SERVICE_HOST and
 *   _PORT, over TLS with the service account's CA); the token is read from
 *   `bearer_token_file` before each request, as tokens rotate. Outside the
 *   cluster, `kubeconfig_file` gives the server and credentials instead.
 * A failed list or watch is logged and counted, and listed again after
 * `retry_interval`; records keep going, labeled from the pods known.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/client_tls.h"
#include "../../lib/file_io.h"
#include "../../lib/grow.h"
#include "../../lib/k8s_api.h"
#include "../../lib/label_valid.h"
#include "../../lib/running_total.h"
#include "../../lib/k8s_watch.h"
#include "cgroup.h"
#include "pods.h"
#include "profd/plugin.h"

struct config {
    char *api_server;
    char *kubeconfig_file;
    char *bearer_token_file;
    struct client_tls tls;
    char *node_name;
    int64_t retry_interval;
    int64_t timeout;
    char *proc_root;
    char *pid_label;
    char *ip_label;
    bool pod_labels, pod_annotations, node_labels;
    bool wait_for_metadata;
};

static const struct profd_option options[] = {
    {"api_server", PROFD_OPT_STRING, offsetof(struct config, api_server), NULL,
     "the Kubernetes API's URL; empty: kubeconfig_file's, else the cluster's own "
     "(KUBERNETES_SERVICE_HOST/_PORT)"},
    {"kubeconfig_file", PROFD_OPT_STRING, offsetof(struct config, kubeconfig_file), NULL,
     "a kubeconfig whose current context gives the server and the credentials (an exec "
     "plugin's too; profd outside the cluster; bearer_token_file is then not read); not with "
     "api_server or tls"},
    {"bearer_token_file", PROFD_OPT_STRING, offsetof(struct config, bearer_token_file),
     K8S_SERVICE_ACCOUNT "/token", "token sent to the API, read before each list; missing: none"},
    {"tls", PROFD_OPT_OBJECT, offsetof(struct config, tls), NULL,
     "TLS to the API (in a cluster the service account's CA by default)", client_tls_options},
    {"node_name", PROFD_OPT_STRING, offsetof(struct config, node_name), NULL,
     "list only this node's pods (a node agent: ${env:NODE_NAME}); empty: every pod"},
    {"retry_interval", PROFD_OPT_DURATION, offsetof(struct config, retry_interval), "5s",
     "how long after a list, a watch or a kubeconfig's exec plugin failed they are tried again "
     "(between, a watch keeps the pods current)"},
    {"timeout", PROFD_OPT_DURATION, offsetof(struct config, timeout), "10s",
     "longest a list, or a kubeconfig's exec plugin, may take"},
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
    {"node_labels", PROFD_OPT_BOOL, offsetof(struct config, node_labels), "false",
     "also each label of the pod's node, as node_label_<name> (the nodes listed and watched "
     "too: node_name's alone when it is set)"},
    {"wait_for_metadata", PROFD_OPT_BOOL, offsetof(struct config, wait_for_metadata), "true",
     "list the pods once before profd starts taking profiles (for at most timeout)"},
    {0},
};

struct state {
    const struct profd_host *host;
    struct profd_component *self;
    const struct config *cfg;
    char *url;                 /* the pods' list */
    char *nodes_url;           /* the nodes' list with node_labels, else NULL */
    pthread_mutex_t mu;        /* index: changed on the loop's thread, read by records' */
    struct pod_index *index;   /* the pods last known, or NULL */
    struct k8s_access access;
    struct client_auth auth;   /* bearer_token_file, and the proxies the environment names */
    struct k8s_kubeconfig kubeconfig;   /* kubeconfig_file's context, when set */
    struct k8s_watch *watch, *nodes_watch;
    _Atomic size_t matched, unmatched, list_errors;
};

static int validate(const struct profd_host *host, struct profd_diag *d, const void *cfgp)
{
    const struct config *cfg = cfgp;
    int rc = PROFD_OK;
    if (cfg->retry_interval <= 0 || cfg->timeout <= 0) {
        host->diag(d, &cfg->retry_interval, "retry_interval and timeout must be more than 0");
        rc = PROFD_ERR;
    }
    const struct client_tls *tls = &cfg->tls;
    if (option_set(cfg->kubeconfig_file) &&
        (option_set(cfg->api_server) || tls->ca_file || tls->cert_file || tls->key_file ||
         tls->insecure_skip_verify || tls->server_name)) {
        host->diag(d, &cfg->kubeconfig_file, "kubeconfig_file gives the server and the "
                   "credentials: api_server and tls cannot be set with it");
        rc = PROFD_ERR;
    }
    if (client_tls_validate(host, d, tls, "tls: ") != PROFD_OK)
        rc = PROFD_ERR;
    return rc;
}

/* The URL of the API server's list of resource (pods, or nodes), of
 * node_name's alone when set (field the field naming a node); NULL when
 * there is no API server to ask. */
static char *list_url(const struct config *cfg, const struct k8s_access *access,
                      const char *resource, const char *field)
{
    char *base = k8s_api_base(access);
    if (!base)
        return NULL;
    char *node =
        option_set(cfg->node_name) ? must_asprintf("%s=%s", field, cfg->node_name) : NULL;
    char *url = k8s_api_list_url(base, resource, NULL, NULL, node);
    free(node);
    free(base);
    return url;
}

/* What of a node no record is labeled with, not kept (k8s_pod_trim). */
#define NODE_DROP K8S_DROP_ANNOTATIONS

/* What of a pod no record is labeled with, not kept (k8s_pod_trim). */
static unsigned pod_drop(const struct config *cfg)
{
    return K8S_DROP_CONTAINER_DETAILS | (cfg->pod_labels ? 0 : K8S_DROP_LABELS) |
           (cfg->pod_annotations ? 0 : K8S_DROP_ANNOTATIONS);
}

/* Logs and counts a failed list or watch (why names the URL). */
static void on_watch_failed(void *arg, const char *why)
{
    struct state *s = arg;
    s->host->log(s->self, PROFD_LOG_WARN, "listing or watching the API: %s; labeling from "
                 "what is known until a list works", why);
    running_total_add(s->host, s->self, &s->list_errors, 1, "profd_k8s_metadata_list_errors",
                      "Pod (and node) lists and watches of the Kubernetes API that failed.");
}

/* Sets the gauges of the pods and nodes known. */
static void count_known(struct state *s, size_t npods, size_t nnodes)
{
    s->host->gauge_set(s->self, "profd_k8s_metadata_pods", "Pods known.", "", (double)npods);
    if (s->nodes_url)
        s->host->gauge_set(s->self, "profd_k8s_metadata_nodes", "Nodes known (node_labels).", "",
                           (double)nnodes);
}

/* The index records are looked up in, made with no pods when there is
 * none yet (nodes listed before pods). Under s->mu. */
static struct pod_index *index_locked(struct state *s)
{
    if (!s->index) {
        struct k8s_pod_list none = {0};
        s->index = pod_index_of(&none);
    }
    return s->index;
}

/* After a change: the gauges, and a debug line naming what changed (an
 * object and how, or a list when object is NULL). */
static void known_changed(struct state *s, size_t npods, size_t nnodes, bool node,
                          const struct k8s_pod *object, const char *how)
{
    count_known(s, npods, nnodes);
    if (!object)
        s->host->log(s->self, PROFD_LOG_DEBUG, "%s listed: %zu pod(s) and %zu node(s) known",
                     node ? "nodes" : "pods", npods, nnodes);
    else
        s->host->log(s->self, PROFD_LOG_DEBUG, "%s %s%s%s %s: %zu pod(s) and %zu node(s) known",
                     node ? "node" : "pod", object->namespace, *object->namespace ? "/" : "",
                     object->name, how, npods, nnodes);
}

/* Puts ix (with no nodes unless it is the first) in place of the index
 * records are looked up in, with the nodes of the one before it. */
static void use_index(struct state *s, struct pod_index *ix)
{
    pthread_mutex_lock(&s->mu);
    struct pod_index *old = s->index;
    if (old)
        pod_index_move_nodes(ix, old);
    s->index = ix;
    size_t npods = ix->pods.n, nnodes = ix->nodes.n;
    pthread_mutex_unlock(&s->mu);
    pod_index_free(old);
    known_changed(s, npods, nnodes, false, NULL, NULL);
}

/*
 * On the loop's thread, as the watches tell of changes: the index keeps
 * the pods and nodes (the watches keep none of their own). A pods list
 * makes the index again, outside the lock, and is swapped in; a node
 * list, a pod or a node added, changed or deleted changes it in place.
 */
static void on_pods_listed(void *arg, struct k8s_pod_list *pods)
{
    use_index(arg, pod_index_of(pods));
}

static void on_nodes_listed(void *arg, struct k8s_pod_list *nodes)
{
    struct state *s = arg;
    pthread_mutex_lock(&s->mu);
    struct pod_index *ix = index_locked(s);
    pod_index_put_nodes(ix, nodes);
    size_t npods = ix->pods.n, nnodes = ix->nodes.n;
    pthread_mutex_unlock(&s->mu);
    known_changed(s, npods, nnodes, true, NULL, NULL);
}

/* put (a pod, or with node a node) put in the index, taken; or, put
 * NULL, the one of removed's UID removed. */
static void change(struct state *s, struct k8s_pod *put, const struct k8s_pod *removed,
                   bool node)
{
    pthread_mutex_lock(&s->mu);
    struct pod_index *ix = index_locked(s);
    const struct k8s_pod *now = NULL;
    if (put && node)
        now = pod_index_put_node(ix, put);
    else if (put)
        now = pod_index_put(ix, put);
    else if (node)
        pod_index_remove_node(ix, removed->uid);
    else
        pod_index_remove(ix, removed->uid);
    size_t npods = ix->pods.n, nnodes = ix->nodes.n;
    pthread_mutex_unlock(&s->mu);
    /* now, the index's, changes only on this thread */
    known_changed(s, npods, nnodes, node, now ? now : removed, now ? "changed" : "deleted");
}

static void on_pod_taken(void *arg, struct k8s_pod *pod)
{
    change(arg, pod, NULL, false);
}

static void on_node_taken(void *arg, struct k8s_pod *node)
{
    change(arg, node, NULL, true);
}

/* A watch whose owner keeps the pods tells changed of deletions alone. */
static void on_pod_deleted(void *arg, const struct k8s_pod *pod, bool deleted)
{
    (void)deleted;
    change(arg, NULL, pod, false);
}

static void on_node_deleted(void *arg, const struct k8s_pod *node, bool deleted)
{
    (void)deleted;
    change(arg, NULL, node, true);
}

/* Logs and counts the failure why of a list of url. */
static void list_failed(struct state *s, const char *url, const char *why)
{
    char line[1100];
    snprintf(line, sizeof(line), "%s: %s", url, why);
    on_watch_failed(s, line);
}

/* GETs url at once, waiting for the answer: its body (len bytes), or
 * NULL, the failure logged and counted. */
static char *get_now(struct state *s, const char *url, size_t *len)
{
    CURL *h = curl_easy_init();
    if (!h)
        return NULL;   /* the watch's list tells */
    struct k8s_response b = {0};
    char why[512];
    if (k8s_api_authorize(&s->access, why, sizeof(why)) < 0) {   /* at start: it may block */
        curl_easy_cleanup(h);
        list_failed(s, url, why);
        return NULL;
    }
    struct k8s_request request;
    bool ok = k8s_api_prepare(h, url, &s->access, &b, &request, why, sizeof(why)) &&
              k8s_api_succeeded(h, curl_easy_perform(h), &b, &s->access, why, sizeof(why));
    k8s_request_end(&request);
    curl_easy_cleanup(h);
    if (!ok) {
        list_failed(s, url, why);
        free(b.data);
        return NULL;
    }
    *len = b.len;
    return b.data;
}

/* Lists the pods (and nodes) at once, waiting for the answers, for the
 * first profiles to be labeled (wait_for_metadata). */
static void list_first(struct state *s)
{
    size_t len;
    char why[512];
    char *body = get_now(s, s->url, &len);
    struct pod_index *ix = body ? pod_index_parse(body, len, pod_drop(s->cfg), why, sizeof(why))
                                : NULL;
    if (body && !ix)
        list_failed(s, s->url, why);
    free(body);
    if (!ix)
        return;
    if (s->nodes_url && (body = get_now(s, s->nodes_url, &len))) {
        if (pod_index_set_nodes(ix, body, len, NODE_DROP, why, sizeof(why)) < 0)
            list_failed(s, s->nodes_url, why);   /* the watch lists them */
        free(body);
    }
    use_index(s, ix);
}

/* Whether process pid's cgroup names its container (id, "" none) or pod
 * (uid, "" none). */
static bool process_container(struct state *s, const char *pid, char id[CONTAINER_ID_SIZE],
                              char uid[POD_UID_SIZE])
{
    char path[4096];
    if (!*pid || strspn(pid, "0123456789") != strlen(pid))
        return false;
    snprintf(path, sizeof(path), "%s/%s/cgroup", s->cfg->proc_root, pid);
    size_t len;
    char *text = read_small_file(path, 1 << 16, &len);
    bool named = text && cgroup_container(text, len, id, uid);
    free(text);
    return named;
}

/* The pod of container id, else of pod UID uid (its container's name into
 * *container), or NULL. Under s->mu. */
static const struct k8s_pod *pod_of_container(struct state *s, const char *id, const char *uid,
                                              const char **container)
{
    const struct k8s_pod *pod = id[0] ? pod_index_container(s->index, id, container) : NULL;
    return pod || !uid[0] ? pod : pod_index_uid(s->index, uid);
}

/* The pod whose IP is the host of value: host:port, [v6]:port, or a bare
 * host (a v6 address with no port has several ':'); NULL when none. Under
 * s->mu. */
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
    const struct k8s_pod *node = s->cfg->node_labels ? pod_index_node(s->index, pod->node) : NULL;
    if (node)
        label_with_pairs(s, r, "node_label_", &node->labels);
}

static int consume(void *st, struct profd_batch *b)
{
    struct state *s = st;
    size_t matched = 0, unmatched = 0;
    for (size_t i = 0; i < b->nrecords; i++) {
        struct profd_record *r = b->records[i];
        const char *pid = s->host->record_label(r, s->cfg->pid_label);
        const char *address =
            option_set(s->cfg->ip_label) ? s->host->record_label(r, s->cfg->ip_label) : NULL;
        if (!pid && !address)
            continue;
        char id[CONTAINER_ID_SIZE], uid[POD_UID_SIZE];
        bool named = pid && process_container(s, pid, id, uid);   /* the file read unlocked */
        const char *container = NULL;
        pthread_mutex_lock(&s->mu);
        const struct k8s_pod *pod = named ? pod_of_container(s, id, uid, &container) : NULL;
        if (!pod && address)
            pod = pod_of_address(s, address);
        if (pod)   /* labeled while the pod cannot change */
            label_record(s, r, pod, container);
        pthread_mutex_unlock(&s->mu);
        matched += pod != NULL;
        unmatched += pod == NULL;
    }
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
    const struct config *c = cfg;
    struct state *s = calloc(1, sizeof(*s));
    if (!s)
        return PROFD_ERR;
    *s = (struct state){.host = host, .self = self, .cfg = cfg,
                        .auth = {.bearer_token_file = c->bearer_token_file,
                                 .proxy = {.proxy_from_environment = true}}};
    s->access = (struct k8s_access){c->api_server, &s->auth, c->tls, c->timeout, NULL};
    if (option_set(c->kubeconfig_file)) {
        char why[1024];
        if (k8s_kubeconfig_load(c->kubeconfig_file, NULL, &s->kubeconfig, why, sizeof(why)) < 0) {
            host->log(self, PROFD_LOG_ERROR, "kubeconfig_file: %s", why);
            free(s);
            return PROFD_ERR;
        }
        s->access.kubeconfig = &s->kubeconfig;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);   /* once per create: destroy ends it */
    pthread_mutex_init(&s->mu, NULL);
    s->url = list_url(cfg, &s->access, "pods", "spec.nodeName");
    if (c->node_labels)
        s->nodes_url = list_url(cfg, &s->access, "nodes", "metadata.name");
    *out = s;
    return PROFD_OK;
}

static int start(void *st)
{
    struct state *s = st;
    if (!s->url) {
        s->host->log(s->self, PROFD_LOG_ERROR, "no api_server or kubeconfig_file, and not in "
                     "a Kubernetes pod (KUBERNETES_SERVICE_HOST is not set): records pass "
                     "unlabeled");
        return PROFD_OK;
    }
    if (s->cfg->wait_for_metadata)   /* before the receivers start */
        list_first(s);
    struct k8s_watch_hooks hooks = {.changed = on_pod_deleted, .failed = on_watch_failed,
                                    .arg = s, .drop = pod_drop(s->cfg),
                                    .take_list = on_pods_listed, .take = on_pod_taken};
    struct k8s_watch_hooks node_hooks = {.changed = on_node_deleted, .failed = on_watch_failed,
                                         .arg = s, .drop = NODE_DROP,
                                         .take_list = on_nodes_listed, .take = on_node_taken};
    s->watch = k8s_watch_new(s->host, s->self, s->url, &s->access, s->cfg->retry_interval,
                             &hooks);
    if (s->nodes_url)
        s->nodes_watch = k8s_watch_new(s->host, s->self, s->nodes_url, &s->access,
                                       s->cfg->retry_interval, &node_hooks);
    /* the watches go on from the first lists, when there were some */
    const char *pods_version = s->index ? s->index->pods.resource_version : NULL;
    const char *nodes_version = s->index ? s->index->nodes.resource_version : NULL;
    return k8s_watch_start(s->watch, pods_version) < 0 ||
                   (s->nodes_watch && k8s_watch_start(s->nodes_watch, nodes_version) < 0)
               ? PROFD_ERR
               : PROFD_OK;
}

static int stop(void *st)
{
    struct state *s = st;
    k8s_watch_free(s->watch);
    k8s_watch_free(s->nodes_watch);
    s->watch = s->nodes_watch = NULL;
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
    free(s->nodes_url);
    k8s_kubeconfig_clear(&s->kubeconfig);
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
