// SPDX-License-Identifier: Apache-2.0
/* A PodList read as the API writes one: pods' identity, addresses,
 * readiness, controller, labels and annotations, and their containers of
 * every kind with images, ports and the ids of their statuses. */
#include "check.h"

#include "../../lib/grow.c"
#include "../../lib/json_pull.c"
#include "../../lib/k8s_pods.c"
#include "../../lib/k8s_network.c"
#include "../../lib/key_map.c"

static const char POD_LIST[] =
    "{\"kind\": \"PodList\", \"apiVersion\": \"v1\", \"metadata\": {\"resourceVersion\": \"7\"},"
    " \"items\": ["
    "{\"metadata\": {\"name\": \"web-1\", \"namespace\": \"shop\", \"uid\": \"u1\","
    "  \"labels\": {\"app\": \"web\", \"n\": 3},"
    "  \"annotations\": {\"profiles.grafana.com/cpu.scrape\": \"true\"},"
    "  \"ownerReferences\": [{\"kind\": \"Node\", \"name\": \"n\"},"
    "   {\"kind\": \"ReplicaSet\", \"name\": \"web-7d\", \"controller\": true}]},"
    " \"spec\": {\"nodeName\": \"node-a\","
    "  \"initContainers\": [{\"name\": \"setup\", \"image\": \"busybox\"}],"
    "  \"containers\": [{\"name\": \"app\", \"image\": \"shop/web:2\","
    "    \"ports\": [{\"name\": \"http\", \"containerPort\": 8080, \"protocol\": \"TCP\"},"
    "     {\"containerPort\": 6060}, {\"containerPort\": 70000}]},"
    "   {\"name\": \"proxy\", \"image\": \"envoy\"}],"
    "  \"ephemeralContainers\": [{\"name\": \"debug\", \"image\": \"busybox\"}]},"
    " \"status\": {\"phase\": \"Running\", \"hostIP\": \"192.168.1.5\", \"podIP\": \"10.1.0.7\","
    "  \"podIPs\": [{\"ip\": \"10.1.0.7\"}, {\"ip\": \"fd00::7\"}],"
    "  \"conditions\": [{\"type\": \"Initialized\", \"status\": \"True\"},"
    "   {\"type\": \"Ready\", \"status\": \"False\"}],"
    "  \"initContainerStatuses\": [{\"name\": \"setup\", \"containerID\": \"containerd://aaa\"}],"
    "  \"containerStatuses\": [{\"name\": \"proxy\", \"containerID\": \"containerd://ccc\"},"
    "   {\"name\": \"app\", \"containerID\": \"containerd://bbb\"},"
    "   {\"name\": \"sidecar\", \"containerID\": \"cri-o://ddd\"}]}},"
    "{\"metadata\": {\"name\": \"pending\", \"namespace\": \"shop\", \"uid\": \"u2\"},"
    " \"status\": {\"phase\": \"Pending\"}},"
    "{\"metadata\": \"not an object\"}"
    "]}";

TEST(a_pod_list_read_whole)
{
    struct k8s_pod_list l;
    char why[256];
    CHECK_INT(k8s_pod_list_parse(POD_LIST, strlen(POD_LIST), 0, &l, why, sizeof(why)), 0);
    CHECK_INT(l.n, 2);
    if (l.n != 2)
        return;
    const struct k8s_pod *p = &l.pods[0];
    CHECK_STR(p->namespace, "shop");
    CHECK_STR(p->name, "web-1");
    CHECK_STR(p->uid, "u1");
    CHECK_STR(p->node, "node-a");
    CHECK_STR(p->phase, "Running");
    CHECK_STR(p->host_ip, "192.168.1.5");
    CHECK_INT(p->nips, 2);
    CHECK_STR(p->ips[0], "10.1.0.7");
    CHECK_STR(p->ips[1], "fd00::7");
    CHECK_STR(p->ready, "false");
    CHECK_STR(p->controller_kind, "ReplicaSet");   /* the controlling owner, not the first */
    CHECK_STR(p->controller_name, "web-7d");
    CHECK_INT(p->labels.n, 1);   /* a label that is not a string is none */
    CHECK_STR(p->labels.names[0], "app");
    CHECK_STR(p->labels.values[0], "web");
    CHECK_INT(p->annotations.n, 1);
    CHECK_STR(p->annotations.names[0], "profiles.grafana.com/cpu.scrape");
    /* spec order, kind by kind; a status with no spec entry last of its kind */
    static const struct {
        const char *name, *image, *id;
        enum k8s_container_kind kind;
        size_t nports;
    } want[] = {
        {"app", "shop/web:2", "containerd://bbb", K8S_CONTAINER, 2},
        {"proxy", "envoy", "containerd://ccc", K8S_CONTAINER, 0},
        {"sidecar", "", "cri-o://ddd", K8S_CONTAINER, 0},
        {"setup", "busybox", "containerd://aaa", K8S_INIT_CONTAINER, 0},
        {"debug", "busybox", NULL, K8S_EPHEMERAL_CONTAINER, 0},
    };
    CHECK_INT(p->ncontainers, sizeof(want) / sizeof(*want));
    for (size_t i = 0; i < p->ncontainers && i < sizeof(want) / sizeof(*want); i++) {
        const struct k8s_container *c = &p->containers[i];
        CHECK_STR(c->name, want[i].name);
        CHECK_STR(c->image, want[i].image);
        CHECK(want[i].id ? c->id && !strcmp(c->id, want[i].id) : c->id == NULL);
        CHECK_INT(c->kind, want[i].kind);
        CHECK_INT(c->nports, want[i].nports);
    }
    const struct k8s_port *ports = p->containers[0].ports;
    CHECK(ports[0].number == 8080 && !strcmp(ports[0].name, "http") &&
          !strcmp(ports[0].protocol, "TCP"));
    /* no name, no protocol: the API's default; a port past 65535 left out */
    CHECK(ports[1].number == 6060 && !strcmp(ports[1].name, "") &&
          !strcmp(ports[1].protocol, "TCP"));
    const struct k8s_pod *q = &l.pods[1];
    CHECK_INT(q->nips, 0);
    CHECK_STR(q->ready, "unknown");
    CHECK(q->controller_kind == NULL);
    CHECK_INT(q->ncontainers, 0);
    k8s_pod_list_free(&l);
    CHECK_INT(l.n, 0);
}

/* A list is read an item at a time: its members in any order, items that
 * are not objects or have no metadata left out, and an item that breaks
 * JSON the whole list's error, its place said. */
TEST(a_list_read_item_by_item)
{
    struct k8s_pod_list l;
    char why[256];
    const char *list = "{\"items\": [7, \"x\", {\"spec\": {}}, {\"metadata\": {\"name\": \"a\"}}, "
                       "null, {\"metadata\": {\"name\": \"b\\u00e9\"}}], \"kind\": \"PodList\", "
                       "\"metadata\": {\"continue\": \"\", \"resourceVersion\": \"77\"}}";
    CHECK_INT(k8s_pod_list_parse(list, strlen(list), 0, &l, why, sizeof(why)), 0);
    CHECK_INT(l.n, 2);
    if (l.n == 2) {
        CHECK_STR(l.pods[0].name, "a");
        CHECK_STR(l.pods[1].name, "b\xc3\xa9");
    }
    CHECK_STR(l.resource_version, "77");
    k8s_pod_list_free(&l);
    const char *broken = "{\"items\": [{\"metadata\": {}},\n {\"metadata\": {\"name\": 1e}}]}";
    CHECK_INT(k8s_pod_list_parse(broken, strlen(broken), 0, &l, why, sizeof(why)), -1);
    CHECK_STR(why, "not JSON: expected a digit in an exponent at line 2, column 26");
    CHECK_INT(l.n, 0);
    const char *huge = "{\"items\": [{\"metadata\": {\"generation\": 99999999999999999999}}]}";
    CHECK_INT(k8s_pod_list_parse(huge, strlen(huge), 0, &l, why, sizeof(why)), -1);
    CHECK_CONTAINS(why, "not JSON: item 0: ");   /* jansson's refusal of the item */
}

TEST(a_pod_trimmed_of_what_its_reader_does_not_need)
{
    struct k8s_pod_list l;
    char why[256];
    CHECK_INT(k8s_pod_list_parse(POD_LIST, strlen(POD_LIST), 0, &l, why, sizeof(why)), 0);
    struct k8s_pod *p = &l.pods[0];
    k8s_pod_trim(p, K8S_DROP_ANNOTATIONS);
    CHECK_INT(p->annotations.n, 0);
    CHECK_INT(p->labels.n, 1);   /* (a number is no label) */
    CHECK_STR(p->containers[0].image, "shop/web:2");
    k8s_pod_trim(p, K8S_DROP_LABELS | K8S_DROP_CONTAINER_DETAILS);
    CHECK_INT(p->labels.n, 0);
    CHECK(p->labels.names == NULL && p->annotations.values == NULL);
    for (size_t k = 0; k < p->ncontainers; k++)
        CHECK(!p->containers[k].image && !p->containers[k].ports && !p->containers[k].nports);
    /* what stays: identity, addresses, containers' names and ids */
    CHECK_STR(p->name, "web-1");
    CHECK_STR(p->ips[1], "fd00::7");
    CHECK_STR(p->containers[0].name, "app");
    CHECK_STR(p->containers[0].id, "containerd://bbb");
    k8s_pod_list_free(&l);
    /* trimmed as the list is read: every item, the same way */
    unsigned drop = K8S_DROP_ANNOTATIONS | K8S_DROP_CONTAINER_DETAILS;
    CHECK_INT(k8s_pod_list_parse(POD_LIST, strlen(POD_LIST), drop, &l, why, sizeof(why)), 0);
    CHECK(l.n >= 2);
    for (size_t i = 0; i < l.n; i++) {
        CHECK_INT(l.pods[i].annotations.n, 0);
        for (size_t k = 0; k < l.pods[i].ncontainers; k++)
            CHECK(!l.pods[i].containers[k].image && !l.pods[i].containers[k].nports);
    }
    CHECK_INT(l.pods[0].labels.n, 1);
    CHECK_STR(l.pods[0].containers[0].id, "containerd://bbb");
    k8s_pod_list_free(&l);
}

TEST(what_is_not_a_pod_list_says_so)
{
    struct k8s_pod_list l;
    char why[256];
    const char *status = "{\"kind\": \"Status\", \"code\": 403}";
    CHECK_INT(k8s_pod_list_parse(status, strlen(status), 0, &l, why, sizeof(why)), -1);
    CHECK_STR(why, "not a list of objects (kind \"Status\", no items)");
    CHECK_INT(k8s_pod_list_parse("{\"items\": [", 11, 0, &l, why, sizeof(why)), -1);
    CHECK_STR(why, "not JSON: unexpected end of the document at line 1, column 12");
    CHECK_INT(l.n, 0);
}

TEST(watch_events_kept_in_a_list)
{
    static const char *const lines[] = {
        "{\"type\": \"ADDED\", \"object\": {\"metadata\": {\"name\": \"a\", \"uid\": \"u1\","
        " \"resourceVersion\": \"11\"}, \"status\": {\"podIP\": \"10.0.0.1\"}}}",
        "{\"type\": \"ADDED\", \"object\": {\"metadata\": {\"name\": \"b\", \"uid\": \"u2\","
        " \"resourceVersion\": \"12\"}}}",
        "{\"type\": \"MODIFIED\", \"object\": {\"metadata\": {\"name\": \"a\", \"uid\": \"u1\","
        " \"resourceVersion\": \"13\"}, \"status\": {\"podIP\": \"10.0.0.2\"}}}",
        "{\"type\": \"BOOKMARK\", \"object\": {\"kind\": \"Pod\", \"metadata\": "
        "{\"resourceVersion\": \"14\"}}}",
        "{\"type\": \"DELETED\", \"object\": {\"metadata\": {\"name\": \"b\", \"uid\": \"u2\","
        " \"resourceVersion\": \"15\"}}}",
    };
    static const char *const versions[] = {"11", "12", "13", "14", "15"};
    struct k8s_pod_list l = {0};
    char why[256];
    for (size_t i = 0; i < sizeof(lines) / sizeof(*lines); i++) {
        struct k8s_watch_event ev;
        CHECK_INT(k8s_watch_event_parse(lines[i], strlen(lines[i]), &ev, why, sizeof(why)), 0);
        CHECK_STR(ev.resource_version, versions[i]);
        if (ev.type == K8S_ADDED || ev.type == K8S_MODIFIED)
            k8s_pod_list_put(&l, &ev.pod);
        else if (ev.type == K8S_DELETED)
            CHECK(k8s_pod_list_remove(&l, ev.pod.uid));
        else
            CHECK_INT(ev.type, K8S_BOOKMARK);
        k8s_watch_event_free(&ev);
    }
    CHECK_INT(l.n, 1);   /* a, changed in place; b gone */
    CHECK_STR(l.pods[0].name, "a");
    CHECK_STR(l.pods[0].ips[0], "10.0.0.2");
    CHECK(!k8s_pod_list_remove(&l, "u2"));
    k8s_pod_list_free(&l);
}

/* A pod of UID u<i>, named n<i> at version v. */
static struct k8s_pod numbered_pod(size_t i, const char *v)
{
    char uid[32], name[32];
    snprintf(uid, sizeof(uid), "u%zu", i);
    snprintf(name, sizeof(name), "n%zu", i);
    return (struct k8s_pod){.uid = must_strdup(uid), .name = must_strdup(name),
                            .resource_version = must_strdup(v)};
}

TEST(list_put_and_remove_by_uid)
{
    /* a parsed list's pods, then puts and removals in any order: each
     * pod once, found by its UID */
    static const char LIST[] = "{\"kind\": \"PodList\", \"items\": ["
                               "{\"metadata\": {\"uid\": \"u0\", \"name\": \"n0\"}},"
                               "{\"metadata\": {\"uid\": \"u1\", \"name\": \"n1\"}}]}";
    struct k8s_pod_list l;
    char why[256];
    CHECK_INT(k8s_pod_list_parse(LIST, strlen(LIST), 0, &l, why, sizeof(why)), 0);
    enum { PODS = 500 };
    static bool in[PODS];
    in[0] = in[1] = true;
    for (size_t i = 2; i < PODS; i++) {   /* the list appended to */
        struct k8s_pod p = numbered_pod(i, "1");
        k8s_pod_list_put(&l, &p);
        in[i] = true;
    }
    for (size_t i = 0; i < PODS; i += 3) {   /* removed, from anywhere in it */
        char uid[32];
        snprintf(uid, sizeof(uid), "u%zu", i);
        CHECK(k8s_pod_list_remove(&l, uid));
        CHECK(!k8s_pod_list_remove(&l, uid));
        in[i] = false;
    }
    for (size_t i = 0; i < PODS; i += 2) {   /* changed in place, or added again */
        struct k8s_pod p = numbered_pod(i, "2");
        k8s_pod_list_put(&l, &p);
        in[i] = true;
    }
    size_t want = 0;
    for (size_t i = 0; i < PODS; i++)
        want += in[i];
    CHECK_INT(l.n, want);
    static size_t seen[PODS];
    for (size_t k = 0; k < l.n; k++) {
        size_t i = strtoul(l.pods[k].uid + 1, NULL, 10);
        CHECK(i < PODS && in[i]);
        CHECK_INT(++seen[i], 1);
        char name[32];
        snprintf(name, sizeof(name), "n%zu", i);
        CHECK_STR(l.pods[k].name, name);
        CHECK_STR(l.pods[k].resource_version ? l.pods[k].resource_version : "",
                  i % 2 == 0 ? "2" : i < 2 ? "" : "1");
    }
    k8s_pod_list_free(&l);
}

TEST(watch_errors_and_bad_lines)
{
    struct k8s_watch_event ev;
    char why[256];
    const char *gone = "{\"type\": \"ERROR\", \"object\": {\"kind\": \"Status\", \"code\": 410,"
                       " \"message\": \"too old resource version: 5 (9)\"}}";
    CHECK_INT(k8s_watch_event_parse(gone, strlen(gone), &ev, why, sizeof(why)), 0);
    CHECK_INT(ev.type, K8S_ERROR);
    CHECK_INT(ev.code, 410);
    CHECK_STR(ev.message, "too old resource version: 5 (9)");
    k8s_watch_event_free(&ev);
    static const char *const bad[][2] = {
        {"{\"type\": \"RENAMED\", \"object\": {}}", "a watch event of type \"RENAMED\""},
        {"{\"object\": {}}", "a watch event of type \"(none)\""},
        {"{\"type\": \"ADDED\", \"object\": {\"kind\": \"Pod\"}}",
         "ADDED event without an object's metadata"},
        {"{\"type\": ", "not JSON: unexpected token near end of file at column 9"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        CHECK_INT(k8s_watch_event_parse(bad[i][0], strlen(bad[i][0]), &ev, why, sizeof(why)), -1);
        CHECK_STR(why, bad[i][1]);
        k8s_watch_event_free(&ev);
    }
}

RUN_TESTS()
