// SPDX-License-Identifier: Apache-2.0
/* kubernetes_sd_configs, roles pod, node, endpointslice, endpoints,
 * service and ingress: the URLs the objects are listed from, the targets and __meta_kubernetes_* labels they make,
 * as Prometheus makes them, and a pod's groups kept from one build to the
 * next while it does not change. Compiled in from the module sources. */
#include "check.h"

#include "../../core/graph.h"
#include "../../core/labels.h"
#include "../../core/sd_file.h"
#include "../../lib/client_auth.c"
#include "../../lib/client_proxy.c"
#include "../../lib/http_headers.c"
#include "../../lib/client_credentials.c"
#include "../../lib/client_tls.c"
#include "../../lib/file_io.c"
#include "../../lib/grow.c"
#include "../../lib/k8s_api.c"
#include "../../lib/k8s_exec.c"
#include "../../lib/k8s_kubeconfig.c"
#include "../../lib/oauth2_shared.c"
#include "../../lib/json_pull.c"
#include "../../lib/k8s_pods.c"
#include "../../lib/oauth2_token.c"
#include "../../lib/k8s_network.c"
#include "../../lib/key_map.c"
#include "../../lib/label_valid.c"
#include "../../receivers/pprof_scrape/k8s_groups.c"
#include "../../receivers/pprof_scrape/k8s_sd.c"
#include "../../receivers/pprof_scrape/k8s_sd_endpoints.c"
#include "../../receivers/pprof_scrape/k8s_sd_ingress.c"
#include "../../receivers/pprof_scrape/k8s_sd_service.c"
#include "../../receivers/pprof_scrape/targets.c"

static const struct profd_host *const h = &profd_host_services;

TEST(urls_by_namespace_and_selector)
{
    struct k8s_selector sel = {"pod", "app=web,tier!=db", "spec.nodeName=node-a"};
    struct kubernetes_sd_config cfg = {.role = "pod", .selectors = {1, &sel}};
    char **urls = k8s_sd_urls(&cfg, "https://api:6443", NULL, "pods");
    CHECK_STR(urls[0], "https://api:6443/api/v1/pods?labelSelector=app%3Dweb%2Ctier%21%3Ddb"
                       "&fieldSelector=spec.nodeName%3Dnode-a");
    CHECK(urls[1] == NULL);
    k8s_sd_urls_free(urls);
    char *names[] = {"shop", "a b"};
    struct kubernetes_sd_config ns = {.role = "pod",
                                      .namespaces = {true, {2, names}}};
    urls = k8s_sd_urls(&ns, "http://127.0.0.1:1", "profd-ns", "pods");
    CHECK_STR(urls[0], "http://127.0.0.1:1/api/v1/namespaces/shop/pods");
    CHECK_STR(urls[1], "http://127.0.0.1:1/api/v1/namespaces/a%20b/pods");
    CHECK_STR(urls[2], "http://127.0.0.1:1/api/v1/namespaces/profd-ns/pods");
    CHECK(urls[3] == NULL);
    k8s_sd_urls_free(urls);
}

TEST(the_nodes_url_only_with_attach_metadata_and_its_own_selector)
{
    struct k8s_selector sel[] = {{"pod", NULL, "spec.nodeName=node-a"},
                                 {"node", "zone=a", "metadata.name=node-a"}};
    struct kubernetes_sd_config cfg = {.role = "pod", .selectors = {2, sel}};
    CHECK(k8s_sd_nodes_url(&cfg, "https://api") == NULL);
    cfg.attach_metadata.node = true;
    char *url = k8s_sd_nodes_url(&cfg, "https://api");
    CHECK_STR(url, "https://api/api/v1/nodes?labelSelector=zone%3Da"
                   "&fieldSelector=metadata.name%3Dnode-a");
    free(url);
    char **urls = k8s_sd_urls(&cfg, "https://api", NULL, "pods");   /* the pod selector */
    CHECK_STR(urls[0], "https://api/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a");
    k8s_sd_urls_free(urls);
    cfg.selectors.n = 0;
    url = k8s_sd_nodes_url(&cfg, "https://api");
    CHECK_STR(url, "https://api/api/v1/nodes");
    free(url);
}

static const char POD_LIST[] =
    "{\"kind\": \"PodList\", \"items\": ["
    "{\"metadata\": {\"name\": \"web-1\", \"namespace\": \"shop\", \"uid\": \"u1\","
    "  \"labels\": {\"app.kubernetes.io/name\": \"web\"},"
    "  \"annotations\": {\"profiles.grafana.com/cpu.port\": \"6060\"},"
    "  \"ownerReferences\": [{\"kind\": \"ReplicaSet\", \"name\": \"web-7d\", \"controller\": true}]},"
    " \"spec\": {\"nodeName\": \"node-a\","
    "  \"initContainers\": [{\"name\": \"setup\", \"image\": \"busybox\"}],"
    "  \"containers\": [{\"name\": \"app\", \"image\": \"shop/web:2\","
    "    \"ports\": [{\"name\": \"http\", \"containerPort\": 8080},"
    "     {\"name\": \"dns\", \"containerPort\": 53, \"protocol\": \"UDP\"}]}],"
    "  \"ephemeralContainers\": [{\"name\": \"debug\", \"image\": \"busybox\"}]},"
    " \"status\": {\"phase\": \"Running\", \"hostIP\": \"192.168.1.5\", \"podIP\": \"10.1.0.7\","
    "  \"conditions\": [{\"type\": \"Ready\", \"status\": \"True\"}],"
    "  \"containerStatuses\": [{\"name\": \"app\", \"containerID\": \"containerd://bbb\"}]}},"
    "{\"metadata\": {\"name\": \"v6\", \"namespace\": \"shop\", \"uid\": \"u2\"},"
    " \"spec\": {\"containers\": [{\"name\": \"c\", \"ports\": [{\"containerPort\": 6060}]}]},"
    " \"status\": {\"podIP\": \"fd00::9\"}},"
    "{\"metadata\": {\"name\": \"pending\", \"namespace\": \"shop\", \"uid\": \"u3\"},"
    " \"spec\": {\"containers\": [{\"name\": \"c\", \"ports\": [{\"containerPort\": 6060}]}]},"
    " \"status\": {\"phase\": \"Pending\"}}"
    "]}";

static const char *label(const struct profd_target_group *g, const char *name)
{
    const char *v = profd_labels_get(&g->labels, name);
    return v ? v : "(none)";
}

/* The labels of web-1's target at its app container's port http. */
static const char *const WEB1_HTTP[][2] = {
    {"__meta_kubernetes_namespace", "shop"},
    {"__meta_kubernetes_pod_name", "web-1"},
    {"__meta_kubernetes_pod_ip", "10.1.0.7"},
    {"__meta_kubernetes_pod_uid", "u1"},
    {"__meta_kubernetes_pod_node_name", "node-a"},
    {"__meta_kubernetes_pod_host_ip", "192.168.1.5"},
    {"__meta_kubernetes_pod_phase", "Running"},
    {"__meta_kubernetes_pod_ready", "true"},
    {"__meta_kubernetes_pod_controller_kind", "ReplicaSet"},
    {"__meta_kubernetes_pod_controller_name", "web-7d"},
    {"__meta_kubernetes_pod_label_app_kubernetes_io_name", "web"},
    {"__meta_kubernetes_pod_labelpresent_app_kubernetes_io_name", "true"},
    {"__meta_kubernetes_pod_annotation_profiles_grafana_com_cpu_port", "6060"},
    {"__meta_kubernetes_pod_annotationpresent_profiles_grafana_com_cpu_port", "true"},
    {"__meta_kubernetes_pod_container_name", "app"},
    {"__meta_kubernetes_pod_container_image", "shop/web:2"},
    {"__meta_kubernetes_pod_container_init", "false"},
    {"__meta_kubernetes_pod_container_id", "containerd://bbb"},
    {"__meta_kubernetes_pod_container_port_name", "http"},
    {"__meta_kubernetes_pod_container_port_number", "8080"},
    {"__meta_kubernetes_pod_container_port_protocol", "TCP"},
};

/* Checks that g has each of the n labels of want. */
static void check_labels(const struct profd_target_group *g, const char *const want[][2],
                         size_t n)
{
    for (size_t i = 0; i < n; i++)
        CHECK_STR(label(g, want[i][0]), want[i][1]);
}

TEST(a_target_for_each_container_port)
{
    struct k8s_pod_list pods;
    char why[256];
    CHECK_INT(k8s_pod_list_parse(POD_LIST, strlen(POD_LIST), 0, &pods, why, sizeof(why)), 0);
    struct profd_target_group *g = NULL;
    size_t n = 0, cap = 0;
    k8s_sd_groups(h, &pods, NULL, &g, &n, &cap);
    k8s_pod_list_free(&pods);
    /* app's two ports, the init container (no port: the pod IP alone), the
     * v6 pod's port; not the ephemeral container, not the pod with no IP */
    CHECK_INT(n, 4);
    if (n != 4)
        return;
    CHECK_STR(g[0].targets.items[0], "10.1.0.7:8080");
    CHECK_STR(g[1].targets.items[0], "10.1.0.7:53");
    CHECK_STR(g[2].targets.items[0], "10.1.0.7");
    CHECK_STR(g[3].targets.items[0], "[fd00::9]:6060");
    check_labels(&g[0], WEB1_HTTP, sizeof(WEB1_HTTP) / sizeof(*WEB1_HTTP));
    CHECK_INT(g[0].labels.n, sizeof(WEB1_HTTP) / sizeof(*WEB1_HTTP));
    CHECK_STR(label(&g[1], "__meta_kubernetes_pod_container_port_protocol"), "UDP");
    CHECK_STR(label(&g[2], "__meta_kubernetes_pod_container_name"), "setup");
    CHECK_STR(label(&g[2], "__meta_kubernetes_pod_container_init"), "true");
    CHECK_STR(label(&g[2], "__meta_kubernetes_pod_container_port_number"), "(none)");
    CHECK_STR(label(&g[2], "__meta_kubernetes_pod_container_id"), "(none)");   /* not started */
    CHECK_STR(label(&g[3], "__meta_kubernetes_pod_ready"), "unknown");
    CHECK_STR(label(&g[3], "__meta_kubernetes_pod_controller_kind"), "(none)");
    profd_sd_groups_free(g, n);
}

TEST(a_pods_node_labels_and_annotations_with_attach_metadata)
{
    static const char NODE_LIST[] =
        "{\"kind\": \"NodeList\", \"metadata\": {\"resourceVersion\": \"9\"}, \"items\": ["
        "{\"metadata\": {\"name\": \"node-b\", \"uid\": \"n2\", \"labels\": {\"zone\": \"b\"}}},"
        "{\"metadata\": {\"name\": \"node-a\", \"uid\": \"n1\","
        "  \"labels\": {\"topology.kubernetes.io/zone\": \"eu-1a\"},"
        "  \"annotations\": {\"node.alpha.kubernetes.io/ttl\": \"0\"}},"
        " \"spec\": {\"podCIDR\": \"10.1.0.0/24\"}, \"status\": {\"capacity\": {\"cpu\": \"4\"}}}"
        "]}";
    struct k8s_pod_list pods, nodes;
    char why[256];
    CHECK_INT(k8s_pod_list_parse(POD_LIST, strlen(POD_LIST), 0, &pods, why, sizeof(why)), 0);
    CHECK_INT(k8s_pod_list_parse(NODE_LIST, strlen(NODE_LIST), 0, &nodes, why, sizeof(why)), 0);
    struct profd_target_group *g = NULL;
    size_t n = 0, cap = 0;
    k8s_sd_groups(h, &pods, &nodes, &g, &n, &cap);
    CHECK_INT(n, 4);
    if (n == 4) {
        CHECK_STR(label(&g[0], "__meta_kubernetes_node_name"), "node-a");
        CHECK_STR(label(&g[0], "__meta_kubernetes_node_label_topology_kubernetes_io_zone"),
                  "eu-1a");
        CHECK_STR(label(&g[0], "__meta_kubernetes_node_labelpresent_topology_kubernetes_io_zone"),
                  "true");
        CHECK_STR(label(&g[0], "__meta_kubernetes_node_annotation_node_alpha_kubernetes_io_ttl"),
                  "0");
        CHECK_STR(label(&g[0],
                        "__meta_kubernetes_node_annotationpresent_node_alpha_kubernetes_io_ttl"),
                  "true");
        CHECK_STR(label(&g[0], "__meta_kubernetes_node_label_zone"), "(none)");   /* node-b's */
        CHECK_STR(label(&g[3], "__meta_kubernetes_node_name"), "(none)");   /* v6: no node */
    }
    profd_sd_groups_free(g, n);
    k8s_pod_list_free(&pods);
    k8s_pod_list_free(&nodes);
}

/* Nodes as the API lists them: one with every kind of address, one with a
 * hostname alone, one with none. */
static const char NODES[] =
    "{\"kind\": \"NodeList\", \"items\": ["
    "{\"metadata\": {\"name\": \"node-a\", \"uid\": \"n1\","
    "  \"labels\": {\"kubernetes.io/os\": \"linux\"}},"
    " \"spec\": {\"providerID\": \"aws:///eu-1a/i-0abc\"},"
    " \"status\": {\"addresses\": [{\"type\": \"Hostname\", \"address\": \"ip-10-0-0-5\"},"
    "   {\"type\": \"ExternalIP\", \"address\": \"203.0.113.5\"},"
    "   {\"type\": \"InternalIP\", \"address\": \"10.0.0.5\"},"
    "   {\"type\": \"InternalIP\", \"address\": \"fd00::5\"}],"
    "  \"daemonEndpoints\": {\"kubeletEndpoint\": {\"Port\": 10250}}}},"
    "{\"metadata\": {\"name\": \"node-b\", \"uid\": \"n2\"},"
    " \"status\": {\"addresses\": [{\"type\": \"Hostname\", \"address\": \"node-b.local\"}]}},"
    "{\"metadata\": {\"name\": \"node-c\", \"uid\": \"n3\"}, \"status\": {}}"
    "]}";

TEST(the_node_role_a_target_per_node_at_its_kubelet)
{
    struct k8s_pod_list nodes;
    char why[256];
    CHECK_INT(k8s_pod_list_parse(NODES, strlen(NODES), 0, &nodes, why, sizeof(why)), 0);
    CHECK_INT(nodes.n, 3);
    CHECK_STR(nodes.pods[0].provider_id, "aws:///eu-1a/i-0abc");
    CHECK_INT(nodes.pods[0].addresses.n, 4);
    CHECK_INT(nodes.pods[0].kubelet_port, 10250);
    struct profd_target_group *g = NULL;
    size_t n = 0, cap = 0;
    k8s_sd_node_groups(h, &nodes, &g, &n, &cap);
    k8s_pod_list_free(&nodes);
    CHECK_INT(n, 2);   /* node-c has no address */
    if (n != 2)
        return;
    CHECK_STR(g[0].targets.items[0], "10.0.0.5:10250");   /* InternalIP before the others */
    static const char *const want[][2] = {
        {"instance", "node-a"},
        {"__meta_kubernetes_node_name", "node-a"},
        {"__meta_kubernetes_node_provider_id", "aws:///eu-1a/i-0abc"},
        {"__meta_kubernetes_node_label_kubernetes_io_os", "linux"},
        {"__meta_kubernetes_node_labelpresent_kubernetes_io_os", "true"},
        {"__meta_kubernetes_node_address_Hostname", "ip-10-0-0-5"},
        {"__meta_kubernetes_node_address_ExternalIP", "203.0.113.5"},
        {"__meta_kubernetes_node_address_InternalIP", "10.0.0.5"},   /* the first of its type */
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++)
        CHECK_STR(label(&g[0], want[i][0]), want[i][1]);
    CHECK_INT(g[0].labels.n, sizeof(want) / sizeof(*want));
    CHECK_STR(g[1].targets.items[0], "node-b.local:0");   /* no kubelet port: 0, as Prometheus */
    CHECK_STR(label(&g[1], "__meta_kubernetes_node_provider_id"), "");
    profd_sd_groups_free(g, n);

    struct kubernetes_sd_config cfg = {.role = "node"};
    char **urls = k8s_sd_urls(&cfg, "https://api", NULL, "pods");
    CHECK(urls[0] == NULL);   /* no pods */
    k8s_sd_urls_free(urls);
    char *url = k8s_sd_nodes_url(&cfg, "https://api");
    CHECK_STR(url, "https://api/api/v1/nodes");
    free(url);
}

/* The pods of POD_LIST (three: web-1 and v6 make groups, pending none),
 * each at resourceVersion version but the one named bumped. */
static void pods_at(struct k8s_pod_list *pods, const char *version, const char *bumped)
{
    char why[256];
    CHECK_INT(k8s_pod_list_parse(POD_LIST, strlen(POD_LIST), 0, pods, why, sizeof(why)), 0);
    for (size_t i = 0; i < pods->n; i++) {
        free(pods->pods[i].resource_version);
        pods->pods[i].resource_version =
            strdup(bumped && !strcmp(pods->pods[i].name, bumped) ? "99" : version);
    }
}

/* A build of pods (each twice when twice, each with node), from last. */
static void build(struct k8s_groups *next, struct k8s_groups *last,
                  const struct k8s_pod_list *pods, bool twice, const struct k8s_pod *node)
{
    *next = (struct k8s_groups){0};
    for (size_t i = 0; i < pods->n; i++)
        for (int k = 0; k < 1 + twice; k++)
            k8s_groups_add_pod(h, next, last, &pods->pods[i], node);
}

TEST(a_pods_groups_move_to_the_next_build_while_it_does_not_change)
{
    struct k8s_pod_list pods;
    struct k8s_groups first, second, third, fourth;
    pods_at(&pods, "5", NULL);
    build(&first, NULL, &pods, false, NULL);
    CHECK_INT(first.n, 4);   /* web-1's three, v6's one */
    CHECK_INT(first.nmade, 3);
    char *web_target = first.groups[0].targets.items[0];
    char *v6_target = first.groups[3].targets.items[0];
    k8s_pod_list_free(&pods);

    pods_at(&pods, "5", "v6");   /* v6 changed, web-1 did not */
    build(&second, &first, &pods, false, NULL);
    CHECK_INT(second.n, 4);
    CHECK(second.groups[0].targets.items[0] == web_target);   /* moved, not made again */
    CHECK(second.groups[3].targets.items[0] != v6_target);
    CHECK(first.groups[0].targets.items == NULL);   /* left empty where it was */
    for (size_t i = 0; i < second.n; i++)
        CHECK(second.hashes[i] == target_group_hash(&second.groups[i]));
    uint64_t sig = k8s_groups_signature(&second);
    k8s_groups_clear(h, &first);
    k8s_pod_list_free(&pods);

    /* the same pods again: every group moved, the signature the same */
    pods_at(&pods, "5", "v6");
    build(&third, &second, &pods, false, NULL);
    CHECK(k8s_groups_signature(&third) == sig);
    CHECK(third.groups[0].targets.items[0] == web_target);
    k8s_groups_clear(h, &second);
    k8s_pod_list_free(&pods);

    /* a pod listed twice (two namespaces' lists naming one) makes its own
     * the second time; a pod without a version is always made again */
    pods_at(&pods, "5", "v6");
    free(pods.pods[1].resource_version);
    pods.pods[1].resource_version = strdup("");
    build(&fourth, &third, &pods, true, NULL);
    CHECK_INT(fourth.n, 8);
    CHECK(fourth.groups[0].targets.items[0] == web_target);
    CHECK(fourth.groups[3].targets.items[0] != web_target);
    CHECK_STR(fourth.groups[3].targets.items[0], "10.1.0.7:8080");
    CHECK(fourth.hashes[3] == fourth.hashes[0]);
    k8s_groups_clear(h, &third);
    k8s_pod_list_free(&pods);

    /* with a node's labels: made again when the node's version changes */
    struct k8s_pod node = {.name = "node-a", .uid = "n1", .resource_version = "7"};
    struct k8s_groups fifth, sixth;
    pods_at(&pods, "5", NULL);
    build(&fifth, &fourth, &pods, false, &node);
    CHECK(fifth.groups[0].targets.items[0] != web_target);   /* with a node now */
    web_target = fifth.groups[0].targets.items[0];
    node.resource_version = "8";
    build(&sixth, &fifth, &pods, false, &node);
    CHECK(sixth.groups[0].targets.items[0] != web_target);
    k8s_groups_clear(h, &fourth);
    k8s_groups_clear(h, &fifth);
    k8s_groups_clear(h, &sixth);
    k8s_pod_list_free(&pods);
}

TEST(role_endpointslice_lists_slices_services_and_pods_with_their_selectors)
{
    struct k8s_selector sel[] = {{"endpointslice", "app=web", NULL},
                                 {"service", NULL, "metadata.name=web"},
                                 {"pod", NULL, "spec.nodeName=node-a"}};
    char *names[] = {"shop"};
    struct kubernetes_sd_config cfg = {.role = "endpointslice", .selectors = {3, sel},
                                       .namespaces = {false, {1, names}}};
    char **urls = k8s_sd_urls(&cfg, "https://api", NULL, "endpointslices");
    CHECK_STR(urls[0], "https://api/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices"
                       "?labelSelector=app%3Dweb");
    CHECK(urls[1] == NULL);
    k8s_sd_urls_free(urls);
    urls = k8s_sd_urls(&cfg, "https://api", NULL, "services");
    CHECK_STR(urls[0], "https://api/api/v1/namespaces/shop/services"
                       "?fieldSelector=metadata.name%3Dweb");
    k8s_sd_urls_free(urls);
    urls = k8s_sd_urls(&cfg, "https://api", NULL, "pods");
    CHECK_STR(urls[0], "https://api/api/v1/namespaces/shop/pods"
                       "?fieldSelector=spec.nodeName%3Dnode-a");
    k8s_sd_urls_free(urls);
    cfg.role = "pod";   /* no services or slices for role pod */
    urls = k8s_sd_urls(&cfg, "https://api", NULL, "services");
    CHECK(urls[0] == NULL);
    k8s_sd_urls_free(urls);
}

/* A slice of service web in shop: an endpoint that is pod web-1 (of
 * POD_LIST), one with an empty targetRef and what the API leaves out
 * left out, one that is node node-a; at one port. */
static const char SLICES[] =
    "{\"kind\": \"EndpointSliceList\", \"items\": ["
    "{\"metadata\": {\"name\": \"web-x1\", \"namespace\": \"shop\", \"uid\": \"s1\","
    "  \"resourceVersion\": \"3\","
    "  \"labels\": {\"kubernetes.io/service-name\": \"web\"},"
    "  \"annotations\": {\"test.annotation\": \"t\"}},"
    " \"addressType\": \"IPv4\","
    " \"ports\": [{\"name\": \"http\", \"port\": 8080, \"protocol\": \"TCP\","
    "   \"appProtocol\": \"http\"}],"
    " \"endpoints\": ["
    "  {\"addresses\": [\"10.1.0.7\"], \"nodeName\": \"node-a\", \"zone\": \"eu-1a\","
    "   \"conditions\": {\"ready\": true, \"serving\": true, \"terminating\": false},"
    "   \"targetRef\": {\"kind\": \"Pod\", \"name\": \"web-1\", \"namespace\": \"shop\"}},"
    "  {\"addresses\": [\"10.9.9.9\"], \"hostname\": \"h2\", \"conditions\": {\"ready\": false},"
    "   \"targetRef\": {}, \"deprecatedTopology\": {\"topology.kubernetes.io/zone\": \"x\"}},"
    "  {\"addresses\": [\"10.0.0.5\"], \"conditions\": {},"
    "   \"targetRef\": {\"kind\": \"Node\", \"name\": \"node-a\"}}]},"
    "{\"metadata\": {\"name\": \"v6\", \"namespace\": \"shop\", \"uid\": \"s2\"},"
    " \"addressType\": \"IPv6\", \"ports\": [{}], \"endpoints\": [{\"addresses\": [\"fd00::9\"]}]}"
    "]}";

static const char SERVICES[] =
    "{\"kind\": \"ServiceList\", \"items\": ["
    "{\"metadata\": {\"name\": \"web\", \"namespace\": \"shop\", \"uid\": \"v1\","
    "  \"resourceVersion\": \"4\", \"labels\": {\"app\": \"web\"}},"
    " \"spec\": {\"clusterIP\": \"10.96.0.10\", \"ports\": [{\"port\": 80}]}}]}";

/* What a list reads into, kept as a watch keeps it. */
static void listed(const char *json, struct k8s_pod_list *out)
{
    char why[256];
    CHECK_INT(k8s_pod_list_parse(json, strlen(json), 0, out, why, sizeof(why)), 0);
}

/* What the objects of an endpoints role are made targets with: the lists
 * as a watch keeps them, and their indexes. */
struct endpoints_fixture {
    struct k8s_pod_list objects, services, pods, nodes;
    struct k8s_names by_service, by_pod, by_node;
};

/* The objects of objects_json, with SERVICES, POD_LIST and node node-a. */
static void fixture_init(struct endpoints_fixture *f, const char *objects_json)
{
    *f = (struct endpoints_fixture){0};
    listed(objects_json, &f->objects);
    listed(SERVICES, &f->services);
    listed(POD_LIST, &f->pods);
    listed("{\"items\": [{\"metadata\": {\"name\": \"node-a\", \"uid\": \"n1\","
           " \"labels\": {\"zone\": \"a\"}}}]}", &f->nodes);
    k8s_names_add(&f->by_service, &f->services);
    k8s_names_add(&f->by_pod, &f->pods);
    k8s_names_add(&f->by_node, &f->nodes);
}

static void fixture_free(struct endpoints_fixture *f)
{
    k8s_names_free(&f->by_service);
    k8s_names_free(&f->by_pod);
    k8s_names_free(&f->by_node);
    k8s_pod_list_free(&f->objects);
    k8s_pod_list_free(&f->services);
    k8s_pod_list_free(&f->pods);
    k8s_pod_list_free(&f->nodes);
}

/* The groups of obj of role, its service found among services, into *g
 * (n of them, room for cap). */
static void endpoints_groups(enum k8s_endpoints_role role, const struct k8s_pod *obj,
                             const struct k8s_names *services, const struct k8s_names *pods,
                             const struct k8s_names *nodes, struct profd_target_group **g,
                             size_t *n, size_t *cap)
{
    k8s_sd_endpoints_groups(h, role, obj, k8s_sd_endpoints_service(role, obj, services), pods,
                            nodes, g, n, cap);
}

/* Checks that g is web-1's endpoint at http, with the labels of want (the
 * role's, the namespace among them), the pod's but its container's id
 * (role pod's alone, as in Prometheus), and its node's (node-a of the
 * fixture), and no others. */
static void check_web1_endpoint(const struct profd_target_group *g,
                                const char *const want[][2], size_t n)
{
    static const char *const node[][2] = {
        {"__meta_kubernetes_node_name", "node-a"},
        {"__meta_kubernetes_node_label_zone", "a"},
        {"__meta_kubernetes_node_labelpresent_zone", "true"},
    };
    static const char id[] = "__meta_kubernetes_pod_container_id";
    size_t pod_labels = sizeof(WEB1_HTTP) / sizeof(*WEB1_HTTP);
    CHECK_STR(g->targets.items[0], "10.1.0.7:8080");
    check_labels(g, want, n);
    for (size_t i = 0; i < pod_labels; i++)
        if (strcmp(WEB1_HTTP[i][0], id))
            CHECK_STR(label(g, WEB1_HTTP[i][0]), WEB1_HTTP[i][1]);
    CHECK_STR(label(g, id), "(none)");
    check_labels(g, node, sizeof(node) / sizeof(*node));
    /* the namespace counted once, the id not at all */
    CHECK_INT(g->labels.n, n + pod_labels - 2 + sizeof(node) / sizeof(*node));
}

TEST(role_endpointslice_a_target_per_address_and_port_with_service_pod_and_node_labels)
{
    struct endpoints_fixture f;
    fixture_init(&f, SLICES);
    const struct k8s_pod_list *slices = &f.objects;
    CHECK_INT(slices->pods[0].nendpoints, 3);
    CHECK_INT(slices->pods[1].ports[0].number, 0);   /* a port without a number */
    CHECK_STR(slices->pods[1].ports[0].protocol, "TCP");   /* as the API defaults */
    struct profd_target_group *g = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < slices->n; i++)
        endpoints_groups(K8S_ROLE_ENDPOINTSLICE, &slices->pods[i], &f.by_service, &f.by_pod,
                         &f.by_node, &g, &n, &cap);
    /* three endpoints at 8080, web-1's port 53 that the slice does not
     * cover, the v6 slice's address alone */
    CHECK_INT(n, 5);
    if (n == 5) {
        static const char *const want[][2] = {
            {"__meta_kubernetes_namespace", "shop"},
            {"__meta_kubernetes_endpointslice_name", "web-x1"},
            {"__meta_kubernetes_endpointslice_address_type", "IPv4"},
            {"__meta_kubernetes_endpointslice_label_kubernetes_io_service_name", "web"},
            {"__meta_kubernetes_endpointslice_labelpresent_kubernetes_io_service_name", "true"},
            {"__meta_kubernetes_endpointslice_annotation_test_annotation", "t"},
            {"__meta_kubernetes_endpointslice_annotationpresent_test_annotation", "true"},
            {"__meta_kubernetes_service_name", "web"},
            {"__meta_kubernetes_service_label_app", "web"},
            {"__meta_kubernetes_service_labelpresent_app", "true"},
            {"__meta_kubernetes_endpointslice_port_name", "http"},
            {"__meta_kubernetes_endpointslice_port_protocol", "TCP"},
            {"__meta_kubernetes_endpointslice_port", "8080"},
            {"__meta_kubernetes_endpointslice_port_app_protocol", "http"},
            {"__meta_kubernetes_endpointslice_endpoint_conditions_ready", "true"},
            {"__meta_kubernetes_endpointslice_endpoint_conditions_serving", "true"},
            {"__meta_kubernetes_endpointslice_endpoint_conditions_terminating", "false"},
            {"__meta_kubernetes_endpointslice_address_target_kind", "Pod"},
            {"__meta_kubernetes_endpointslice_address_target_name", "web-1"},
            {"__meta_kubernetes_endpointslice_endpoint_node_name", "node-a"},
            {"__meta_kubernetes_endpointslice_endpoint_zone", "eu-1a"},
        };
        check_web1_endpoint(&g[0], want, sizeof(want) / sizeof(*want));

        CHECK_STR(g[1].targets.items[0], "10.9.9.9:8080");
        CHECK_STR(label(&g[1], "__meta_kubernetes_endpointslice_endpoint_conditions_ready"),
                  "false");
        CHECK_STR(label(&g[1], "__meta_kubernetes_endpointslice_endpoint_conditions_serving"),
                  "(none)");   /* left out: unknown */
        CHECK_STR(label(&g[1], "__meta_kubernetes_endpointslice_endpoint_hostname"), "h2");
        CHECK_STR(label(&g[1], "__meta_kubernetes_endpointslice_address_target_kind"), "");
        CHECK_STR(label(&g[1], "__meta_kubernetes_endpointslice_address_target_name"), "");
        CHECK_STR(label(&g[1], "__meta_kubernetes_endpointslice_endpoint_topology_"
                               "topology_kubernetes_io_zone"), "x");
        CHECK_STR(label(&g[1], "__meta_kubernetes_endpointslice_endpoint_topology_present_"
                               "topology_kubernetes_io_zone"), "true");
        CHECK_STR(label(&g[1], "__meta_kubernetes_node_name"), "(none)");
        CHECK_STR(label(&g[1], "__meta_kubernetes_pod_name"), "(none)");

        CHECK_STR(g[2].targets.items[0], "10.0.0.5:8080");   /* a node: its labels */
        CHECK_STR(label(&g[2], "__meta_kubernetes_node_label_zone"), "a");
        CHECK_STR(label(&g[2], "__meta_kubernetes_endpointslice_endpoint_node_name"), "(none)");

        CHECK_STR(g[3].targets.items[0], "10.1.0.7:53");   /* web-1's other port */
        CHECK_STR(label(&g[3], "__meta_kubernetes_pod_container_port_name"), "dns");
        CHECK_STR(label(&g[3], "__meta_kubernetes_pod_container_port_protocol"), "UDP");
        CHECK_STR(label(&g[3], "__meta_kubernetes_service_name"), "web");
        CHECK_STR(label(&g[3], "__meta_kubernetes_endpointslice_port"), "(none)");
        CHECK_STR(label(&g[3], "__meta_kubernetes_node_name"), "(none)");

        CHECK_STR(g[4].targets.items[0], "fd00::9");   /* no port number: the address alone */
        CHECK_STR(label(&g[4], "__meta_kubernetes_endpointslice_address_type"), "IPv6");
        CHECK_STR(label(&g[4], "__meta_kubernetes_service_name"), "(none)");   /* none named */
        CHECK_STR(label(&g[4], "__meta_kubernetes_endpointslice_port_name"), "");
    }
    profd_sd_groups_free(g, n);

    /* without attach_metadata's nodes, and with the service gone */
    struct k8s_names none = {0};
    g = NULL, n = 0, cap = 0;
    endpoints_groups(K8S_ROLE_ENDPOINTSLICE, &slices->pods[0], &none, &f.by_pod, NULL, &g, &n,
                     &cap);
    CHECK_INT(n, 4);
    if (n == 4) {
        CHECK_STR(label(&g[0], "__meta_kubernetes_node_name"), "(none)");
        CHECK_STR(label(&g[0], "__meta_kubernetes_service_name"), "(none)");
        CHECK_STR(label(&g[0], "__meta_kubernetes_pod_name"), "web-1");
    }
    profd_sd_groups_free(g, n);
    fixture_free(&f);
}

/* A sidecar (an init container that keeps running) serves a port as a
 * container does: a slice's port is found on it, and its ports the slice
 * does not cover are targets too, with pod_container_init "true". */
TEST(role_endpointslice_sidecar_ports_as_prometheus_finds_them)
{
    struct k8s_pod_list pods, slices;
    struct k8s_names by_pod = {0};
    listed("{\"items\": [{\"metadata\": {\"name\": \"side-1\", \"namespace\": \"shop\"},"
           " \"spec\": {\"containers\": [{\"name\": \"app\","
           "    \"ports\": [{\"containerPort\": 8080}]}],"
           "  \"initContainers\": [{\"name\": \"proxy\", \"restartPolicy\": \"Always\","
           "   \"ports\": [{\"name\": \"admin\", \"containerPort\": 9901}]}]},"
           " \"status\": {\"podIP\": \"10.2.0.1\","
           "  \"initContainerStatuses\": [{\"name\": \"proxy\", \"containerID\": \"c://p\"}]}}]}",
           &pods);
    listed("{\"items\": [{\"metadata\": {\"name\": \"side\", \"namespace\": \"shop\"},"
           " \"addressType\": \"IPv4\", \"ports\": [{\"name\": \"admin\", \"port\": 9901}],"
           " \"endpoints\": [{\"addresses\": [\"10.2.0.1\"], \"targetRef\": {\"kind\": \"Pod\","
           "   \"name\": \"side-1\", \"namespace\": \"shop\"}}]}]}",
           &slices);
    k8s_names_add(&by_pod, &pods);
    struct k8s_names none = {0};
    struct profd_target_group *g = NULL;
    size_t n = 0, cap = 0;
    endpoints_groups(K8S_ROLE_ENDPOINTSLICE, &slices.pods[0], &none, &by_pod, NULL, &g, &n,
                     &cap);
    CHECK_INT(n, 2);
    if (n == 2) {
        CHECK_STR(g[0].targets.items[0], "10.2.0.1:9901");
        CHECK_STR(label(&g[0], "__meta_kubernetes_pod_container_name"), "proxy");
        CHECK_STR(label(&g[0], "__meta_kubernetes_pod_container_init"), "true");
        CHECK_STR(label(&g[0], "__meta_kubernetes_pod_container_port_name"), "admin");
        CHECK_STR(label(&g[0], "__meta_kubernetes_pod_container_id"), "(none)");
        CHECK_STR(g[1].targets.items[0], "10.2.0.1:8080");   /* app's, uncovered */
        CHECK_STR(label(&g[1], "__meta_kubernetes_pod_container_name"), "app");
        CHECK_STR(label(&g[1], "__meta_kubernetes_pod_container_init"), "false");
    }
    profd_sd_groups_free(g, n);
    k8s_names_free(&by_pod);
    k8s_pod_list_free(&pods);
    k8s_pod_list_free(&slices);
}

/* An Endpoints object of service web: a subset of web-1 (ready) and a
 * pod not listed (not ready) at http, and a subset of node-a's address
 * at metrics. */
static const char ENDPOINTS[] =
    "{\"kind\": \"EndpointsList\", \"items\": ["
    "{\"metadata\": {\"name\": \"web\", \"namespace\": \"shop\", \"uid\": \"e1\","
    "  \"labels\": {\"app\": \"web\"}},"
    " \"subsets\": ["
    "  {\"addresses\": [{\"ip\": \"10.1.0.7\", \"nodeName\": \"node-a\", \"hostname\": \"w1\","
    "     \"targetRef\": {\"kind\": \"Pod\", \"name\": \"web-1\", \"namespace\": \"shop\"}}],"
    "   \"notReadyAddresses\": [{\"ip\": \"10.1.0.8\","
    "     \"targetRef\": {\"kind\": \"Pod\", \"name\": \"web-9\", \"namespace\": \"shop\"}}],"
    "   \"ports\": [{\"name\": \"http\", \"port\": 8080, \"protocol\": \"TCP\"}]},"
    "  {\"addresses\": [{\"ip\": \"10.0.0.5\", \"hostname\": \"\","
    "     \"targetRef\": {\"kind\": \"Node\", \"name\": \"node-a\"}}],"
    "   \"ports\": [{\"name\": \"metrics\", \"port\": 10250}]}]}"
    "]}";

TEST(role_endpoints_a_target_per_address_and_port_of_each_subset)
{
    struct k8s_selector sel = {"endpoints", "app=web", NULL};
    struct kubernetes_sd_config cfg = {.role = "endpoints", .selectors = {1, &sel}};
    char **urls = k8s_sd_urls(&cfg, "https://api", NULL, "endpoints");
    CHECK_STR(urls[0], "https://api/api/v1/endpoints?labelSelector=app%3Dweb");
    k8s_sd_urls_free(urls);
    urls = k8s_sd_urls(&cfg, "https://api", NULL, "endpointslices");
    CHECK(urls[0] == NULL);   /* not role endpoints' */
    k8s_sd_urls_free(urls);

    struct endpoints_fixture f;
    fixture_init(&f, ENDPOINTS);
    struct profd_target_group *g = NULL;
    size_t n = 0, cap = 0;
    endpoints_groups(K8S_ROLE_ENDPOINTS, &f.objects.pods[0], &f.by_service, &f.by_pod, &f.by_node,
                     &g, &n, &cap);
    /* each address at its own subset's port; web-1's port 53 uncovered */
    CHECK_INT(n, 4);
    if (n == 4) {
        static const char *const want[][2] = {
            {"__meta_kubernetes_namespace", "shop"},
            {"__meta_kubernetes_endpoints_name", "web"},
            {"__meta_kubernetes_endpoints_label_app", "web"},
            {"__meta_kubernetes_endpoints_labelpresent_app", "true"},
            {"__meta_kubernetes_service_name", "web"},   /* named as the Endpoints object */
            {"__meta_kubernetes_service_label_app", "web"},
            {"__meta_kubernetes_service_labelpresent_app", "true"},
            {"__meta_kubernetes_endpoint_port_name", "http"},
            {"__meta_kubernetes_endpoint_port_protocol", "TCP"},
            {"__meta_kubernetes_endpoint_ready", "true"},
            {"__meta_kubernetes_endpoint_address_target_kind", "Pod"},
            {"__meta_kubernetes_endpoint_address_target_name", "web-1"},
            {"__meta_kubernetes_endpoint_node_name", "node-a"},
            {"__meta_kubernetes_endpoint_hostname", "w1"},
        };
        check_web1_endpoint(&g[0], want, sizeof(want) / sizeof(*want));
        CHECK_STR(g[1].targets.items[0], "10.1.0.8:8080");
        CHECK_STR(label(&g[1], "__meta_kubernetes_endpoint_ready"), "false");
        CHECK_STR(label(&g[1], "__meta_kubernetes_pod_name"), "(none)");   /* not listed */
        CHECK_STR(g[2].targets.items[0], "10.0.0.5:10250");   /* the second subset's port */
        CHECK_STR(label(&g[2], "__meta_kubernetes_endpoint_port_name"), "metrics");
        CHECK_STR(label(&g[2], "__meta_kubernetes_endpoint_hostname"), "(none)");   /* "" */
        CHECK_STR(label(&g[2], "__meta_kubernetes_node_name"), "node-a");   /* its targetRef */
        CHECK_STR(g[3].targets.items[0], "10.1.0.7:53");
        CHECK_STR(label(&g[3], "__meta_kubernetes_endpoint_ready"), "(none)");
    }
    profd_sd_groups_free(g, n);
    fixture_free(&f);
}

/* An Endpoints object's targets come port by port, each with every
 * address of its subset (ready, then not), as Prometheus lists them; a
 * slice's endpoint by endpoint. */
TEST(role_endpoints_targets_in_prometheus_order)
{
    struct k8s_pod_list objects;
    listed("{\"items\": [{\"metadata\": {\"name\": \"two\", \"namespace\": \"shop\"},"
           " \"subsets\": [{\"addresses\": [{\"ip\": \"10.0.0.1\"}],"
           "  \"notReadyAddresses\": [{\"ip\": \"10.0.0.2\"}],"
           "  \"ports\": [{\"name\": \"a\", \"port\": 1}, {\"name\": \"b\", \"port\": 2}]}]}]}",
           &objects);
    struct k8s_names none = {0};
    struct profd_target_group *g = NULL;
    size_t n = 0, cap = 0;
    endpoints_groups(K8S_ROLE_ENDPOINTS, &objects.pods[0], &none, &none, NULL, &g, &n, &cap);
    static const char *const want[] = {"10.0.0.1:1", "10.0.0.2:1", "10.0.0.1:2", "10.0.0.2:2"};
    CHECK_INT(n, 4);
    for (size_t i = 0; i < n && i < 4; i++)
        CHECK_STR(g[i].targets.items[0], want[i]);
    profd_sd_groups_free(g, n);
    k8s_pod_list_free(&objects);
}

TEST(role_service_a_target_per_port_at_its_dns_name)
{
    struct kubernetes_sd_config cfg = {.role = "service", .attach_metadata = {true}};
    char **urls = k8s_sd_urls(&cfg, "https://api", NULL, "services");
    CHECK_STR(urls[0], "https://api/api/v1/services");
    k8s_sd_urls_free(urls);
    urls = k8s_sd_urls(&cfg, "https://api", NULL, "pods");
    CHECK(urls[0] == NULL);
    k8s_sd_urls_free(urls);
    CHECK(k8s_sd_nodes_url(&cfg, "https://api") == NULL);   /* no nodes for role service */
    struct k8s_pod_list services;
    listed("{\"items\": ["
           "{\"metadata\": {\"name\": \"web\", \"namespace\": \"shop\", \"uid\": \"v1\","
           "  \"labels\": {\"app\": \"web\"}},"
           " \"spec\": {\"type\": \"LoadBalancer\", \"clusterIP\": \"10.96.0.10\","
           "  \"loadBalancerIP\": \"203.0.113.9\", \"ports\": [{\"name\": \"http\", \"port\": 80},"
           "  {\"name\": \"dns\", \"port\": 53, \"protocol\": \"UDP\"}]}},"
           "{\"metadata\": {\"name\": \"db\", \"namespace\": \"shop\", \"uid\": \"v2\"},"
           " \"spec\": {\"type\": \"ExternalName\", \"externalName\": \"db.example.com\","
           "  \"ports\": [{\"port\": 5432}]}}]}", &services);
    struct profd_target_group *g = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < services.n; i++)
        k8s_sd_service_groups(h, &services.pods[i], &g, &n, &cap);
    CHECK_INT(n, 3);
    if (n == 3) {
        CHECK_STR(g[0].targets.items[0], "web.shop.svc:80");
        static const char *const want[][2] = {
            {"__meta_kubernetes_namespace", "shop"},
            {"__meta_kubernetes_service_name", "web"},
            {"__meta_kubernetes_service_label_app", "web"},
            {"__meta_kubernetes_service_labelpresent_app", "true"},
            {"__meta_kubernetes_service_type", "LoadBalancer"},
            {"__meta_kubernetes_service_cluster_ip", "10.96.0.10"},
            {"__meta_kubernetes_service_loadbalancer_ip", "203.0.113.9"},
            {"__meta_kubernetes_service_port_name", "http"},
            {"__meta_kubernetes_service_port_number", "80"},
            {"__meta_kubernetes_service_port_protocol", "TCP"},
        };
        check_labels(&g[0], want, sizeof(want) / sizeof(*want));
        CHECK_INT(g[0].labels.n, sizeof(want) / sizeof(*want));
        CHECK_STR(g[1].targets.items[0], "web.shop.svc:53");
        CHECK_STR(label(&g[1], "__meta_kubernetes_service_port_protocol"), "UDP");
        CHECK_STR(g[2].targets.items[0], "db.shop.svc:5432");
        CHECK_STR(label(&g[2], "__meta_kubernetes_service_external_name"), "db.example.com");
        CHECK_STR(label(&g[2], "__meta_kubernetes_service_cluster_ip"), "(none)");
        CHECK_STR(label(&g[2], "__meta_kubernetes_service_loadbalancer_ip"), "(none)");
        CHECK_STR(label(&g[2], "__meta_kubernetes_service_port_name"), "");
    }
    profd_sd_groups_free(g, n);
    k8s_pod_list_free(&services);
}

TEST(role_ingress_a_target_per_host_and_path_https_where_tls_names_the_host)
{
    struct kubernetes_sd_config cfg = {.role = "ingress"};
    char **urls = k8s_sd_urls(&cfg, "https://api", NULL, "ingresses");
    CHECK_STR(urls[0], "https://api/apis/networking.k8s.io/v1/ingresses");
    k8s_sd_urls_free(urls);
    struct k8s_pod_list ingresses;
    listed("{\"items\": [{\"metadata\": {\"name\": \"front\", \"namespace\": \"shop\","
           "  \"uid\": \"i1\", \"annotations\": {\"a.b/c\": \"d\"}},"
           " \"spec\": {\"ingressClassName\": \"nginx\","
           "  \"tls\": [{\"hosts\": [\"shop.example.com\"]}, {\"hosts\": [\"*.api.example.com\"]}],"
           "  \"rules\": [{\"host\": \"shop.example.com\", \"http\": {\"paths\": ["
           "     {\"path\": \"/cart\"}, {\"pathType\": \"Prefix\"}]}},"
           "   {\"host\": \"v1.api.example.com\"},"
           "   {\"host\": \"x.v1.api.example.com\", \"http\": {\"paths\": [{\"path\": \"/\"}]}},"
           "   {\"http\": {\"paths\": [{\"path\": \"/nohost\"}]}}]}}]}", &ingresses);
    struct profd_target_group *g = NULL;
    size_t n = 0, cap = 0;
    k8s_sd_ingress_groups(h, &ingresses.pods[0], &g, &n, &cap);
    CHECK_INT(n, 4);   /* two paths, a rule without http ("/"), a deeper host; none hostless */
    if (n == 4) {
        CHECK_STR(g[0].targets.items[0], "shop.example.com");
        static const char *const want[][2] = {
            {"__meta_kubernetes_namespace", "shop"},
            {"__meta_kubernetes_ingress_name", "front"},
            {"__meta_kubernetes_ingress_class_name", "nginx"},
            {"__meta_kubernetes_ingress_annotation_a_b_c", "d"},
            {"__meta_kubernetes_ingress_annotationpresent_a_b_c", "true"},
            {"__meta_kubernetes_ingress_scheme", "https"},
            {"__meta_kubernetes_ingress_host", "shop.example.com"},
            {"__meta_kubernetes_ingress_path", "/cart"},
        };
        check_labels(&g[0], want, sizeof(want) / sizeof(*want));
        CHECK_INT(g[0].labels.n, sizeof(want) / sizeof(*want));
        CHECK_STR(label(&g[1], "__meta_kubernetes_ingress_path"), "/");   /* none given */
        CHECK_STR(g[2].targets.items[0], "v1.api.example.com");
        CHECK_STR(label(&g[2], "__meta_kubernetes_ingress_scheme"), "https");   /* wildcard */
        CHECK_STR(label(&g[2], "__meta_kubernetes_ingress_path"), "/");
        CHECK_STR(label(&g[3], "__meta_kubernetes_ingress_scheme"), "http");   /* one label */
    }
    profd_sd_groups_free(g, n);
    k8s_pod_list_free(&ingresses);
}

/* Gives o resourceVersion version. */
static void set_version(struct k8s_pod *o, const char *version)
{
    free(o->resource_version);
    o->resource_version = strdup(version);
}

/* Adds the groups of f's first slice to next, from last. */
static void add_web_slice(struct k8s_groups *next, struct k8s_groups *last,
                          const struct endpoints_fixture *f)
{
    k8s_groups_add_endpoints(h, next, last, K8S_ROLE_ENDPOINTSLICE, &f->objects.pods[0],
                             &f->by_service, &f->by_pod, &f->by_node);
}

TEST(a_slices_groups_are_made_again_when_it_its_service_a_pod_or_a_node_changes)
{
    struct endpoints_fixture f;
    fixture_init(&f, SLICES);
    for (size_t i = 0; i < f.pods.n; i++)
        set_version(&f.pods.pods[i], "5");
    set_version(&f.nodes.pods[0], "2");
    struct k8s_groups builds[6] = {{0}};
    add_web_slice(&builds[0], NULL, &f);
    CHECK_INT(builds[0].n, 4);
    char *target = builds[0].groups[0].targets.items[0];
    add_web_slice(&builds[1], &builds[0], &f);
    CHECK(builds[1].groups[0].targets.items[0] == target);   /* nothing changed: moved */
    CHECK(builds[0].groups[0].targets.items == NULL);   /* left empty where it was */
    struct k8s_pod *changed[] = {&f.pods.pods[0], &f.services.pods[0], &f.nodes.pods[0],
                                 &f.objects.pods[0]};   /* web-1, the service, node-a, itself */
    for (size_t i = 0; i < 4; i++) {
        set_version(changed[i], "9");
        add_web_slice(&builds[i + 2], &builds[i + 1], &f);
        CHECK(builds[i + 2].groups[0].targets.items[0] != target);
        CHECK_INT(builds[i + 2].n, 4);
        target = builds[i + 2].groups[0].targets.items[0];
    }
    for (size_t i = 0; i < 6; i++)
        k8s_groups_clear(h, &builds[i]);
    fixture_free(&f);
}

RUN_TESTS()
