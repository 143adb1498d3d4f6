// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: what profd reads of Kubernetes. The first byte picks
 * the reader (its value modulo 5): a process's cgroup file (0), as the
 * k8s_metadata processor reads it; a PodList from the Kubernetes API (1),
 * looked up by the ids, UIDs and IPs it names and made scrape targets as
 * the scrape receiver's kubernetes_sd_configs make them (its objects read
 * as pods, nodes, EndpointSlices, Endpoints, Services and Ingresses); the lines of a
 * watch (2), each event applied to a list of pods and to k8s_metadata's
 * index of them (as pods and as nodes), which must end up holding the
 * list's pods, and the list made targets; a kubeconfig file (3),
 * its current context read; or what an exec credential plugin prints (4),
 * its credential kept. The rest is the input. The exec plugin's reader is
 * static in lib/k8s_exec.c, which is included here for it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/labels.h"
#include "../../lib/k8s_exec.c"
#include "../../lib/k8s_kubeconfig.h"
#include "../../processors/k8s_metadata/cgroup.h"
#include "../../processors/k8s_metadata/pods.h"
#include "../../receivers/pprof_scrape/k8s_sd.h"

static const struct profd_host host = {
    .labels_set = profd_labels_set,
    .labels_get = profd_labels_get,
    .labels_copy = profd_labels_copy,
    .labels_clear = profd_labels_clear,
};

/* The scrape targets of pods, and of the same list read as nodes, as
 * EndpointSlices, Endpoints objects, Services and Ingresses: each an
 * address and the pod's or node's name, or the object's namespace. */
static void make_targets(const struct k8s_pod_list *pods)
{
    struct profd_target_group *groups = NULL;
    size_t n = 0, cap = 0;
    k8s_sd_groups(&host, pods, pods, &groups, &n, &cap);   /* the pods as nodes too */
    size_t npods = n;
    k8s_sd_node_groups(&host, pods, &groups, &n, &cap);    /* and as the node role's */
    size_t nnodes = n;
    struct k8s_names names = {0};   /* the objects as services, pods and nodes of slices */
    k8s_names_add(&names, pods);
    for (size_t i = 0; i < pods->n; i++) {   /* and each as the other roles' objects */
        for (int role = K8S_ROLE_ENDPOINTSLICE; role <= K8S_ROLE_ENDPOINTS; role++) {
            enum k8s_endpoints_role r = (enum k8s_endpoints_role)role;
            k8s_sd_endpoints_groups(&host, r, &pods->pods[i],
                                    k8s_sd_endpoints_service(r, &pods->pods[i], &names), &names,
                                    &names, &groups, &n, &cap);
        }
        k8s_sd_service_groups(&host, &pods->pods[i], &groups, &n, &cap);
        k8s_sd_ingress_groups(&host, &pods->pods[i], &groups, &n, &cap);
    }
    k8s_names_free(&names);
    for (size_t i = 0; i < n; i++) {
        const char *who = i < npods     ? "__meta_kubernetes_pod_name"
                          : i < nnodes ? "__meta_kubernetes_node_name"
                                       : "__meta_kubernetes_namespace";
        if (groups[i].targets.n != 1 || !*groups[i].targets.items[0] ||
            !profd_labels_get(&groups[i].labels, who))
            abort();   /* a target without its address, pod, node or namespace */
        free(groups[i].targets.items[0]);
        free(groups[i].targets.items);
        profd_labels_clear(&groups[i].labels);
    }
    free(groups);
}

/* The current context of a kubeconfig: read whole, or refused saying why. */
static void kubeconfig(const char *text, size_t len)
{
    struct k8s_kubeconfig kc;
    char why[256] = "";
    if (k8s_kubeconfig_parse("/fuzz/config", text, len, NULL, &kc, why, sizeof(why)) == 0) {
        if (!kc.server || !kc.namespace)
            abort();   /* read, yet without a server or namespace */
        for (size_t i = 0; kc.impersonation && kc.impersonation[i]; i++)
            if (strpbrk(kc.impersonation[i], "\r\n"))
                abort();   /* a header line that would be two */
        k8s_kubeconfig_clear(&kc);
    } else if (!*why || kc.server) {
        abort();   /* refused without saying why, or refused yet kept */
    }
}

/* Whether every pod of pods is in ix, by its UID and by each started
 * container's id, ix holding no other, and each node by its name. */
static bool index_holds(const struct pod_index *ix, const struct k8s_pod_list *pods)
{
    if (ix->pods.n != pods->n)
        return false;
    for (size_t i = 0; i < pods->n; i++) {
        const struct k8s_pod *p = &pods->pods[i];
        if (!pod_index_uid(ix, p->uid))
            return false;
        for (size_t k = 0; k < p->ncontainers; k++) {
            const char *sep = p->containers[k].id ? strstr(p->containers[k].id, "://") : NULL;
            const char *container;
            if (sep && sep[3] && !pod_index_container(ix, sep + 3, &container))
                return false;
        }
        for (size_t k = 0; k < p->nips; k++)
            pod_index_ip(ix, p->ips[k]);
        if (!pod_index_node(ix, p->name))
            return false;
    }
    return true;
}

/* The event line (len bytes) applied to ix, as k8s_metadata applies what
 * its watches hand over: to its pods, or with node, to its nodes. */
static void apply_to_index(struct pod_index *ix, const char *line, size_t len, bool node)
{
    struct k8s_watch_event ev;
    char why[256];
    if (k8s_watch_event_parse(line, len, &ev, why, sizeof(why)) < 0)
        return;
    if (ev.type == K8S_DELETED && node)
        pod_index_remove_node(ix, ev.pod.uid);
    else if (ev.type == K8S_DELETED)
        pod_index_remove(ix, ev.pod.uid);
    else if ((ev.type == K8S_ADDED || ev.type == K8S_MODIFIED) && node)
        pod_index_put_node(ix, &ev.pod);
    else if (ev.type == K8S_ADDED || ev.type == K8S_MODIFIED)
        pod_index_put(ix, &ev.pod);
    if (ev.type == K8S_ADDED || ev.type == K8S_MODIFIED)
        ev.pod = (struct k8s_pod){0};   /* the index's now */
    k8s_watch_event_free(&ev);
}

/* Each line of text an event applied to a list of pods, as a watch does,
 * and to an index of them (as pods and as nodes), as k8s_metadata does. */
static void watch(const char *text, size_t len)
{
    struct k8s_pod_list pods = {0};
    struct pod_index *ix = pod_index_of(&pods);
    const char *end = text + len;
    while (text < end) {
        const char *nl = memchr(text, '\n', (size_t)(end - text));
        const char *stop = nl ? nl : end;
        struct k8s_watch_event ev;
        char why[256] = "";
        if (k8s_watch_event_parse(text, (size_t)(stop - text), &ev, why, sizeof(why)) == 0) {
            apply_to_index(ix, text, (size_t)(stop - text), false);
            apply_to_index(ix, text, (size_t)(stop - text), true);
            if (ev.type == K8S_DELETED)
                k8s_pod_list_remove(&pods, ev.pod.uid);
            else if (ev.type != K8S_BOOKMARK && ev.type != K8S_ERROR)
                k8s_pod_list_put(&pods, &ev.pod);
        } else if (!*why) {
            abort();   /* refused without saying why */
        }
        k8s_watch_event_free(&ev);
        text = nl ? nl + 1 : end;
    }
    make_targets(&pods);
    if (!index_holds(ix, &pods))
        abort();   /* the index, changed event by event, is not the list */
    pod_index_free(ix);
    k8s_pod_list_free(&pods);
}

/* text as an exec plugin's output: its credential kept, or refused
 * saying why with none kept. */
static void exec_output(const char *text, size_t len)
{
    char *argv[] = {"plugin", NULL}, *env[] = {NULL};
    struct k8s_exec *e = k8s_exec_new(argv, env, "client.authentication.k8s.io/v1", false,
                                      "https://k8s.example", NULL);
    char why[256] = "";
    int rc = keep_credential(e, text, len, why, sizeof(why));
    char *token, *cert, *key;
    k8s_exec_credential(e, &token, &cert, &key);
    if (rc == 0 ? !token && !(cert && key) : !*why || token || cert || key)
        abort();   /* kept without a credential, or refused without why or yet kept */
    free(token);
    free(cert);
    free(key);
    k8s_exec_free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    if (len == 0)
        return 0;
    const char *text = (const char *)data + 1;
    if (data[0] % 5 == 4) {
        exec_output(text, len - 1);
        return 0;
    }
    if (data[0] % 5 == 3) {
        kubeconfig(text, len - 1);
        return 0;
    }
    if (data[0] % 5 == 2) {
        watch(text, len - 1);
        return 0;
    }
    if (data[0] % 5 == 0) {
        char id[CONTAINER_ID_SIZE], uid[POD_UID_SIZE];
        if (cgroup_container(text, len - 1, id, uid) && strlen(id) + strlen(uid) == 0)
            abort();   /* found, yet named nothing */
        return 0;
    }
    char why[256];
    struct pod_index *ix = pod_index_parse(text, len - 1, 0, why, sizeof(why));
    struct k8s_pod_list pods, nodes;
    if (ix && (k8s_pod_list_parse(text, len - 1, 0, &pods, why, sizeof(why)) < 0 ||
               k8s_pod_list_parse(text, len - 1, 0, &nodes, why, sizeof(why)) < 0))
        abort();   /* the same list read otherwise */
    if (ix) {
        pod_index_put_nodes(ix, &nodes);   /* the same objects as nodes, as a list hands them */
        if (!index_holds(ix, &pods))
            abort();   /* a pod or node the index lost */
        make_targets(&pods);
        pod_index_free(ix);
        for (size_t i = 0; i < pods.n; i++)   /* what k8s_metadata keeps of them, indexed */
            k8s_pod_trim(&pods.pods[i], K8S_DROP_LABELS | K8S_DROP_ANNOTATIONS |
                                            K8S_DROP_CONTAINER_DETAILS);
        pod_index_free(pod_index_of(&pods));
        k8s_pod_list_free(&pods);
    }
    return 0;
}
