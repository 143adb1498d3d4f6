// SPDX-License-Identifier: Apache-2.0
/* The k8s_metadata processor's parts: a process's container and pod from
 * the cgroup paths the runtimes write, and the pods of a PodList looked up
 * by container id, UID and IP. Compiled in from the module sources. */
#include "check.h"

#include "../../lib/grow.c"
#include "../../lib/json_pull.c"
#include "../../lib/k8s_pods.c"
#include "../../lib/k8s_network.c"
#include "../../lib/key_map.c"
#include "../../processors/k8s_metadata/cgroup.c"
#include "../../processors/k8s_metadata/pods.c"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID "5f3c2a10-8b7d-4e21-9c3a-1d2e3f405162"
#define UID_ "5f3c2a10_8b7d_4e21_9c3a_1d2e3f405162"

TEST(the_runtimes_cgroup_paths_name_container_and_pod)
{
    static const struct {
        const char *text, *id, *uid;
    } cases[] = {
        /* cgroup v2, systemd driver, containerd */
        {"0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
         ".slice/cri-containerd-" ID ".scope\n", ID, UID},
        /* cgroup v1, cgroupfs driver, docker: the id in several hierarchies */
        {"12:pids:/kubepods/besteffort/pod" UID "/" ID "\n11:cpu,cpuacct:/kubepods/besteffort/pod"
         UID "/" ID "\n", ID, UID},
        /* CRI-O, upper-case hex read as lower */
        {"0::/kubepods.slice/kubepods-pod" UID_ ".slice/crio-0123456789ABCDEF0123456789ABCDEF"
         "0123456789ABCDEF0123456789ABCDEF.scope", ID, UID},
        /* docker outside Kubernetes: a container, no pod */
        {"0::/system.slice/docker-" ID ".scope\n", ID, ""},
        /* the pod's own slice, no container yet (its sandbox being made) */
        {"0::/kubepods.slice/kubepods-pod" UID_ ".slice\n", "", UID},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        char id[CONTAINER_ID_SIZE], uid[POD_UID_SIZE];
        CHECK(cgroup_container(cases[i].text, strlen(cases[i].text), id, uid));
        CHECK_STR(id, cases[i].id);
        CHECK_STR(uid, cases[i].uid);
    }
}

TEST(a_process_in_no_container_names_none)
{
    static const char *const texts[] = {
        "0::/init.scope\n",
        "0::/user.slice/user-1000.slice/session-2.scope\n",
        "0::/\n",
        "0::/system.slice/x-" ID "0.scope\n",   /* 65 hex digits: no id */
        "0::/kubepods/pod" UID "0/x\n",           /* longer than a UUID */
        "",
        "no colons at all",
    };
    for (size_t i = 0; i < sizeof(texts) / sizeof(*texts); i++) {
        char id[CONTAINER_ID_SIZE], uid[POD_UID_SIZE];
        CHECK(!cgroup_container(texts[i], strlen(texts[i]), id, uid));
        CHECK_STR(id, "");
        CHECK_STR(uid, "");
    }
}

static const char POD_LIST[] =
    "{\"kind\": \"PodList\", \"apiVersion\": \"v1\", \"items\": ["
    "{\"metadata\": {\"name\": \"web-1\", \"namespace\": \"shop\", \"uid\": \"" UID "\","
    "  \"labels\": {\"app\": \"web\", \"app.kubernetes.io/version\": \"2\"}},"
    " \"spec\": {\"nodeName\": \"node-a\"},"
    " \"status\": {\"podIP\": \"10.1.0.7\","
    "  \"podIPs\": [{\"ip\": \"10.1.0.7\"}, {\"ip\": \"fd00::7\"}],"
    "  \"initContainerStatuses\": [{\"name\": \"init\", \"containerID\": \"containerd://aaa\"}],"
    "  \"containerStatuses\": [{\"name\": \"app\", \"containerID\": \"containerd://" ID "\"},"
    "   {\"name\": \"waiting\"}]}},"
    "{\"metadata\": {\"name\": \"agent\", \"namespace\": \"kube-system\", \"uid\": \"u2\"},"
    " \"spec\": {\"nodeName\": \"node-a\", \"hostNetwork\": true},"
    " \"status\": {\"podIP\": \"192.168.1.5\"}},"
    "{\"metadata\": {\"name\": \"exporter\", \"namespace\": \"kube-system\", \"uid\": \"u3\"},"
    " \"spec\": {\"nodeName\": \"node-a\", \"hostNetwork\": true},"
    " \"status\": {\"podIP\": \"192.168.1.5\"}},"
    "{\"kind\": \"not a pod: no metadata\"}"
    "]}";

TEST(a_pod_list_looked_up_by_container_uid_and_ip)
{
    char why[256];
    struct pod_index *ix = pod_index_parse(POD_LIST, strlen(POD_LIST), 0, why, sizeof(why));
    CHECK(ix != NULL);
    if (!ix)
        return;
    CHECK_INT(ix->pods.n, 3);
    const char *container = NULL;
    const struct k8s_pod *p = pod_index_container(ix, ID, &container);
    CHECK(p && !strcmp(p->name, "web-1") && !strcmp(p->namespace, "shop") &&
          !strcmp(p->node, "node-a"));
    CHECK_STR(container, "app");
    CHECK(pod_index_container(ix, "aaa", &container) == p);
    CHECK_STR(container, "init");
    CHECK(pod_index_container(ix, "bbb", &container) == NULL);
    CHECK(pod_index_uid(ix, UID) == p);
    CHECK(pod_index_uid(ix, "u9") == NULL);
    CHECK(pod_index_ip(ix, "10.1.0.7") == p);
    CHECK(pod_index_ip(ix, "fd00::7") == p);
    CHECK(pod_index_ip(ix, "192.168.1.5") == NULL);   /* two host-network pods: neither */
    CHECK_INT(p->labels.n, 2);
    bool version = false;
    for (size_t i = 0; i < p->labels.n; i++)
        version |= !strcmp(p->labels.names[i], "app.kubernetes.io/version") &&
                   !strcmp(p->labels.values[i], "2");
    CHECK(version);
    pod_index_free(ix);
}

TEST(an_index_takes_the_pods_of_a_list)
{
    struct k8s_pod_list pods;
    char why[256];
    CHECK_INT(k8s_pod_list_parse(POD_LIST, strlen(POD_LIST), 0, &pods, why, sizeof(why)), 0);
    struct pod_index *ix = pod_index_of(&pods);
    CHECK(pods.n == 0 && pods.pods == NULL && pods.resource_version == NULL);   /* taken */
    k8s_pod_list_free(&pods);
    const char *container = NULL;
    const struct k8s_pod *p = pod_index_container(ix, ID, &container);
    CHECK(p && !strcmp(p->name, "web-1") && !strcmp(p->labels.values[0], "web"));
    CHECK_STR(container, "app");
    CHECK(pod_index_uid(ix, UID) == p);
    CHECK(pod_index_ip(ix, "fd00::7") == p);
    CHECK(pod_index_ip(ix, "192.168.1.5") == NULL);
    CHECK_INT(ix->pods.n, 3);
    pod_index_free(ix);
}

/* The watch event line applied to ix, as to its pods or (node) nodes,
 * as a watch whose owner keeps the pods hands them over. */
static void apply(struct pod_index *ix, const char *line, bool node)
{
    struct k8s_watch_event ev;
    char why[256];
    CHECK_INT(k8s_watch_event_parse(line, strlen(line), &ev, why, sizeof(why)), 0);
    if (ev.type == K8S_DELETED && node)
        pod_index_remove_node(ix, ev.pod.uid);
    else if (ev.type == K8S_DELETED)
        pod_index_remove(ix, ev.pod.uid);
    else if (node)
        pod_index_put_node(ix, &ev.pod);
    else
        pod_index_put(ix, &ev.pod);
    if (ev.type != K8S_DELETED)
        ev.pod = (struct k8s_pod){0};   /* the index's now */
    k8s_watch_event_free(&ev);
}

TEST(pods_changed_one_at_a_time)
{
    char why[256];
    struct pod_index *ix = pod_index_parse(POD_LIST, strlen(POD_LIST), 0, why, sizeof(why));
    /* web-1 modified: another container started in place of the first,
     * another IP */
    apply(ix, "{\"type\": \"MODIFIED\", \"object\": {\"metadata\": {\"name\": \"web-1\","
          " \"namespace\": \"shop\", \"uid\": \"" UID "\", \"resourceVersion\": \"9\"},"
          " \"status\": {\"podIP\": \"10.1.0.8\", \"containerStatuses\": [{\"name\":"
          " \"app\", \"containerID\": \"containerd://bbb\"}]}}}", false);
    const char *container = NULL;
    const struct k8s_pod *web = pod_index_container(ix, "bbb", &container);
    CHECK(web && !strcmp(web->resource_version, "9"));
    CHECK_STR(container, "app");
    CHECK(pod_index_container(ix, ID, &container) == NULL);
    CHECK(pod_index_container(ix, "aaa", &container) == NULL);
    CHECK(pod_index_ip(ix, "10.1.0.8") == web);
    CHECK(pod_index_ip(ix, "10.1.0.7") == NULL);
    CHECK(pod_index_uid(ix, UID) == web);
    /* one of the two host-network pods deleted: the IP is the other's */
    apply(ix, "{\"type\": \"DELETED\", \"object\": {\"metadata\": {\"name\": \"agent\","
          " \"namespace\": \"kube-system\", \"uid\": \"u2\"},"
          " \"status\": {\"podIP\": \"192.168.1.5\"}}}", false);
    CHECK(pod_index_uid(ix, "u2") == NULL);
    const struct k8s_pod *exporter = pod_index_ip(ix, "192.168.1.5");
    CHECK(exporter && !strcmp(exporter->name, "exporter"));
    CHECK(pod_index_uid(ix, "u3") == exporter);
    /* a pod added, sharing that IP again */
    apply(ix, "{\"type\": \"ADDED\", \"object\": {\"metadata\": {\"name\": \"agent-2\","
          " \"namespace\": \"kube-system\", \"uid\": \"u4\"},"
          " \"status\": {\"podIP\": \"192.168.1.5\"}}}", false);
    CHECK(pod_index_ip(ix, "192.168.1.5") == NULL);
    CHECK_INT(ix->pods.n, 3);
    CHECK(pod_index_uid(ix, "u4") != NULL);
    /* deleting what is not there changes nothing */
    apply(ix, "{\"type\": \"DELETED\", \"object\": {\"metadata\": {\"name\": \"agent\","
          " \"namespace\": \"kube-system\", \"uid\": \"u2\"}}}", false);
    CHECK_INT(ix->pods.n, 3);
    pod_index_free(ix);
}

TEST(nodes_by_name_listed_or_moved)
{
    static const char NODES[] =
        "{\"kind\": \"NodeList\", \"metadata\": {\"resourceVersion\": \"4\"}, \"items\": ["
        "{\"metadata\": {\"name\": \"node-a\", \"uid\": \"n1\", \"labels\": {\"zone\": \"a\"}}},"
        "{\"metadata\": {\"name\": \"node-b\", \"uid\": \"n2\"}}]}";
    char why[256];
    struct pod_index *ix = pod_index_parse(POD_LIST, strlen(POD_LIST), 0, why, sizeof(why));
    CHECK(pod_index_node(ix, "node-a") == NULL);   /* no nodes yet */
    CHECK_INT(pod_index_set_nodes(ix, NODES, strlen(NODES), 0, why, sizeof(why)), 0);
    const struct k8s_pod *a = pod_index_node(ix, "node-a");
    CHECK(a && !strcmp(a->labels.values[0], "a"));
    CHECK(pod_index_node(ix, "node-c") == NULL);
    CHECK_STR(ix->nodes.resource_version, "4");   /* where its watch goes on from */
    CHECK_INT(pod_index_set_nodes(ix, "[]", 2, 0, why, sizeof(why)), -1);   /* the nodes kept */
    /* a pods list made again: the new index takes the old one's nodes */
    struct k8s_pod_list pods;
    CHECK_INT(k8s_pod_list_parse(POD_LIST, strlen(POD_LIST), 0, &pods, why, sizeof(why)), 0);
    struct pod_index *next = pod_index_of(&pods);
    pod_index_move_nodes(next, ix);
    CHECK(pod_index_node(ix, "node-a") == NULL && ix->nodes.n == 0);
    pod_index_free(ix);
    CHECK(pod_index_node(next, "node-b") != NULL);
    CHECK(pod_index_node(next, NULL) == NULL);   /* a pod not yet on a node */
    /* nodes changed one at a time: node-a's labels, node-b gone, node-c */
    apply(next, "{\"type\": \"MODIFIED\", \"object\": {\"metadata\": {\"name\": \"node-a\","
          " \"uid\": \"n1\", \"labels\": {\"zone\": \"b\"}}}}", true);
    apply(next, "{\"type\": \"DELETED\", \"object\": {\"metadata\": {\"name\": \"node-b\","
          " \"uid\": \"n2\"}}}", true);
    apply(next, "{\"type\": \"ADDED\", \"object\": {\"metadata\": {\"name\": \"node-c\","
          " \"uid\": \"n3\"}}}", true);
    a = pod_index_node(next, "node-a");
    CHECK(a && !strcmp(a->labels.values[0], "b"));
    CHECK(pod_index_node(next, "node-b") == NULL);
    CHECK(pod_index_node(next, "node-c") != NULL);
    /* a node list in place of the nodes */
    struct k8s_pod_list nodes;
    CHECK_INT(k8s_pod_list_parse(NODES, strlen(NODES), 0, &nodes, why, sizeof(why)), 0);
    pod_index_put_nodes(next, &nodes);
    CHECK(nodes.n == 0 && nodes.pods == NULL);   /* taken */
    CHECK(pod_index_node(next, "node-b") != NULL && pod_index_node(next, "node-c") == NULL);
    a = pod_index_node(next, "node-a");
    CHECK(a && !strcmp(a->labels.values[0], "a"));
    pod_index_free(next);
}

TEST(what_is_not_a_pod_list_is_an_error)
{
    char why[256];
    CHECK(pod_index_parse("{\"kind\": \"Status\", \"code\": 403}", 31, 0, why, sizeof(why)) == NULL);
    CHECK_STR(why, "not a list of objects (kind \"Status\", no items)");
    CHECK(pod_index_parse("{\"items\": [", 11, 0, why, sizeof(why)) == NULL);
    CHECK_CONTAINS(why, "not JSON: ");
    pod_index_free(NULL);
}

RUN_TESTS()
