# SPDX-License-Identifier: Apache-2.0
"""The pprof_scrape receiver's kubernetes_sd_configs: pods listed and
watched from a Python HTTP server playing the Kubernetes API
(harness.KubernetesApi, which filters by namespace and selectors and
streams watch events as the API does), their pod IP and
ports those of real Go targets on loopback, chosen and relabeled the way
Grafana Alloy's documented annotations (profiles.grafana.com/*) do."""
import base64
import os
import re
import shutil
import unittest

from harness import (FakeTarget, ForwardProxy, GO_CORPUS, KubernetesApi, ProfdTestCase, Target,
                     make_client_cert, make_test_certs, metric_value, run, sign_test_cert,
                     valgrind, wait_until)

# The end of every config here: the receiver into pprof_file, metrics on a
# free port.
PIPELINE = """service:
  telemetry: {metrics: {address: "127.0.0.1:0"}}
  pipelines:
    profiles: {receivers: [pprof_scrape], exporters: [pprof_file]}
"""

CONFIG = """
receivers:
  pprof_scrape:
    scrape_configs:
      - job_name: pods
        scrape_interval: 1s
        kubernetes_sd_configs:
          - role: pod
            api_server: "%s"
            bearer_token_file: ./token
            namespaces: {names: [shop]}
            selectors: [{role: pod, label: "tier!=db"}]
            retry_interval: 200ms
        profiling_config: {presets: [goroutine]}
        relabel_configs:
          - {source_labels: [__meta_kubernetes_pod_annotation_profiles_grafana_com_goroutine_scrape],
             regex: "true", action: keep}
          - {source_labels: [__meta_kubernetes_pod_container_init], regex: "true", action: drop}
          - {source_labels: [__address__, __meta_kubernetes_pod_annotation_profiles_grafana_com_goroutine_port],
             regex: '(.+?)(?::\\d+)?;(\\d+)', replacement: '$1:$2', target_label: __address__}
          - {action: labelmap, regex: __meta_kubernetes_pod_label_(.+)}
          - {source_labels: [__meta_kubernetes_namespace], target_label: namespace}
          - {source_labels: [__meta_kubernetes_pod_name], target_label: pod}
          - {source_labels: [__meta_kubernetes_pod_container_name], target_label: container}
exporters:
  pprof_file: {path_template: "{namespace}/{pod}/{container}/{app}/{unix_nanos}.pb.gz"}
""" + PIPELINE


def k8s_job(name, sd_config, relabel_configs):
    """A job named name scraping goroutines every second from the targets
    of sd_config (a kubernetes_sd_config in YAML's flow style), relabeled
    by relabel_configs (lines of rules)."""
    return """      - job_name: %s
        scrape_interval: 1s
        kubernetes_sd_configs: [%s]
        profiling_config: {presets: [goroutine]}
        relabel_configs:
%s""" % (name, sd_config, relabel_configs)


def services_config(role, url, ready, port):
    """A config of the endpoints of role (endpointslice or endpoints) at
    the API at url: of services opted in by a label, ready (the label
    ready says so), at their port named pprof (the labels of prefix port
    name it)."""
    return """
receivers:
  pprof_scrape:
    scrape_configs:
""" + k8s_job("services", """{role: %s, api_server: "%s", bearer_token_file: ./token,
             namespaces: {names: [shop]}, retry_interval: 200ms,
             selectors: [{role: pod, field: "spec.nodeName=node-a"}]}""" % (role, url), """\
          - {source_labels: [__meta_kubernetes_service_label_profiles], regex: "true", action: keep}
          - {source_labels: [__meta_kubernetes_%s], regex: "true", action: keep}
          - {source_labels: [__meta_kubernetes_%s_port_name], regex: pprof, action: keep}
          - {source_labels: [__meta_kubernetes_namespace], target_label: namespace}
          - {source_labels: [__meta_kubernetes_service_name], target_label: service}
          - {source_labels: [__meta_kubernetes_pod_name], target_label: pod}
          - {source_labels: [__meta_kubernetes_pod_container_name], target_label: container}
""" % (ready, port)) + """\
exporters:
  pprof_file: {path_template: "{namespace}/{service}/{pod}/{container}/{unix_nanos}.pb.gz"}
""" + PIPELINE


def pod(name, port, namespace="shop", labels=None, scrape=True):
    """A running pod on loopback as the API lists one: an init container
    (no port), a container whose declared port is not the profiles' one,
    and the annotations naming the port to scrape."""
    annotations = ({"profiles.grafana.com/goroutine.scrape": "true",
                    "profiles.grafana.com/goroutine.port": str(port)} if scrape else {})
    return {"metadata": {"name": name, "namespace": namespace, "uid": name + "-uid",
                         "labels": labels or {"app": "web"}, "annotations": annotations,
                         "ownerReferences": [{"kind": "ReplicaSet", "name": name + "-rs",
                                              "controller": True}]},
            "spec": {"nodeName": "node-a",
                     "initContainers": [{"name": "setup", "image": "busybox"}],
                     "containers": [{"name": "app", "image": "shop/web:2",
                                     "ports": [{"name": "http", "containerPort": 1}]}]},
            "status": {"phase": "Running", "podIP": "127.0.0.1", "hostIP": "127.0.0.1",
                       "conditions": [{"type": "Ready", "status": "True"}],
                       "containerStatuses": [{"name": "app", "containerID": "containerd://ab"}]}}


def with_static_target(config, target):
    """config with target as the job's static target, which its relabel
    rules keep (they drop what has no annotation, which it has not)."""
    return config.replace(
        "        relabel_configs:", "        static_configs: [{targets: [\"%s\"]}]\n"
        "        relabel_configs:" % target.address).replace("action: keep}", "action: drop}")


class ScrapeKubernetesTest(ProfdTestCase):

    def setUp(self):
        super().setUp()
        with open(self.path("token"), "w") as f:
            f.write("tok123\n")

    def api(self, pods, tls=None, nodes=()):
        api = KubernetesApi(pods, "tok123", tls=tls, nodes=nodes)
        self.addCleanup(api.stop)
        return api

    def go_target(self):
        t = Target()
        self.addCleanup(t.stop)
        return t

    def pprof_pod(self):
        """A Go target, its port, and pod web-1 at it, whose container
        declares that port, named pprof, as a service's endpoints do."""
        web = self.go_target()
        port = int(web.address.rsplit(":", 1)[1])
        web_pod = pod("web-1", port)
        web_pod["spec"]["containers"][0]["ports"] = [{"name": "pprof", "containerPort": port}]
        return web, port, web_pod

    def goroutine_target(self):
        """A scripted target answering the corpus's goroutine profile."""
        t = FakeTarget()
        self.addCleanup(t.stop)
        t.set("/debug/pprof/goroutine", (200, open(os.path.join(GO_CORPUS, "goroutine.pb.gz"),
                                                    "rb").read()))
        return t

    def files(self, *parts):
        root = self.path("profiles", *parts)
        return [f for _, _, fs in os.walk(root) for f in fs if not f.startswith(".")]

    def test_annotated_pods_are_scraped_with_their_labels(self):
        web = self.go_target()
        port = int(web.address.rsplit(":", 1)[1])
        pods = [pod("web-1", port),
                pod("web-2", port, scrape=False),                             # not annotated
                pod("db-0", port, labels={"app": "db", "tier": "db"}),        # the selector's out
                pod("elsewhere", port, namespace="other")]                    # another namespace
        api = self.api(pods)
        p = self.start(CONFIG % api.url)
        wait_until(lambda: self.files("shop", "web-1", "app", "web"), "web-1's goroutines")
        self.assertEqual(os.listdir(self.path("profiles")), ["shop"])
        self.assertEqual(os.listdir(self.path("profiles", "shop")), ["web-1"])
        self.assertEqual(os.listdir(self.path("profiles", "shop", "web-1")), ["app"])
        self.assertEqual(api.got[0], ("/api/v1/namespaces/shop/pods",
                                      {"labelSelector": ["tier!=db"]}, "Bearer tok123"))
        m = p.metrics()
        self.assertEqual(metric_value(m, "profd_scrape_up", component="pprof_scrape", job="pods",
                                      instance=web.address, profile="goroutine"), 1)
        self.assertEqual(metric_value(m, "profd_scrape_k8s_pods", component="pprof_scrape",
                                      job="pods"), 2)   # what the API answered: web-1, web-2
        self.assertEqual(p.stop(), 0)

    def test_an_oauth2_token_is_fetched_for_lists_and_watches_and_again_when_due(self):
        """oauth2 in a kubernetes_sd_config: a token fetched from token_url
        with the client's credentials before the first list, sent with
        every list and watch of pods and nodes alike, fetched again once
        near its end; a token URL that refuses is said in the log, and the
        API is not asked without a token."""
        web = self.go_target()
        node = {"metadata": {"name": "node-a", "uid": "n1", "labels": {}}}
        api = self.api([pod("web-1", int(web.address.rsplit(":", 1)[1]))], nodes=[node])
        api.watch_seconds = 1   # watches end and start again, each asking for the token
        # The first token is due again a second after it comes (10 s before its end).
        token_url, tokens = self.token_endpoint([
            (200, {"access_token": "tok123", "expires_in": 11}),
            (200, {"access_token": "tok123", "expires_in": 3600})])
        oauth2 = ("            oauth2: {client_id: lister, client_secret: s3cret, "
                  "token_url: '%s', scopes: [read]}\n")
        config = (CONFIG % api.url).replace(
            '            selectors: [{role: pod, label: "tier!=db"}]\n',
            '            selectors: [{role: pod, label: "tier!=db"}]\n'
            '            attach_metadata: {node: true}\n')
        p = self.start(config.replace("            bearer_token_file: ./token\n",
                                      oauth2 % token_url))
        wait_until(lambda: self.files("shop", "web-1", "app", "web"), "web-1's goroutines")
        wait_until(lambda: len(tokens) == 2, "the token fetched again when due")
        wait_until(lambda: api.watching() >= 4, "watches ended and started again")
        self.assertEqual(tokens[0], ("Basic " + base64.b64encode(b"lister:s3cret").decode(),
                                     {"grant_type": ["client_credentials"], "scope": ["read"]}))
        paths = {path for path, _, _ in api.got}
        self.assertEqual(paths, {"/api/v1/namespaces/shop/pods", "/api/v1/nodes"})
        self.assertEqual({auth for _, _, auth in api.got}, {"Bearer tok123"})
        self.assertEqual(len(tokens), 2)   # the second kept
        self.assertEqual(p.stop(), 0)
        self.assertNotIn("s3cret", p.log_text())

        refusing, refused = self.token_endpoint([(400, {"error": "invalid_client"})])
        asked = len(api.got)
        p = self.start(config.replace("            bearer_token_file: ./token\n",
                                      oauth2 % refusing))
        p.wait_log(r"job 'pods': .*token from %s: HTTP status 400: \{\"error\": "
                   r"\"invalid_client\"\}" % re.escape(refusing))
        wait_until(lambda: len(refused) >= 2, "the token asked for again after the retry interval")
        self.assertEqual(len(api.got), asked)   # the API never asked without a token
        self.assertEqual(p.stop(), 0)

    def test_the_watch_carries_changes_and_a_gone_version_lists_again(self):
        web = self.go_target()
        port = int(web.address.rsplit(":", 1)[1])
        api = self.api([])
        api.watch_seconds = 2   # the server ends each watch: it is started again
        p = self.start(CONFIG % api.url)
        wait_until(lambda: api.watching() >= 1, "a watch")
        api.add(pod("web-1", port))
        wait_until(lambda: self.files("shop", "web-1", "app", "web"), "the new pod's goroutines")
        wait_until(lambda: api.watching() >= 2, "a watch started again")
        self.assertEqual(api.lists(), 1)
        watch = [q for _, q, _ in api.got if q.get("watch")][0]
        self.assertEqual(watch["allowWatchBookmarks"], ["true"])
        self.assertEqual(watch["resourceVersion"], ["1"])   # the list's
        self.assertEqual(watch["labelSelector"], ["tier!=db"])
        # Compaction: the watch's version is gone (410), so it lists again.
        api.expire()
        wait_until(lambda: api.lists() == 2, "a list after the 410")
        mark = p.mark()
        api.remove("web-1")
        p.wait_log(r"0 scrape target\(s\) x profile\(s\); 1 removed", start=mark)
        self.assertEqual(metric_value(p.metrics(), "profd_scrape_k8s_pods",
                                      component="pprof_scrape", job="pods"), 0)
        self.assertEqual(p.stop(), 0)

    def test_discoveries_alike_keep_their_pairs_apart_through_changes(self):
        """Two kubernetes_sd_configs alike make every target twice: a pod
        that did not change keeps both its pairs (the second found like the
        first, so the job is built whole), and pods come and go by twos."""
        port = int(self.goroutine_target().address.rsplit(":", 1)[1])
        api = self.api([pod("web-1", port)])
        start = CONFIG.index("          - role: pod")
        end = CONFIG.index("        profiling_config:")
        p = self.start((CONFIG[:end] + CONFIG[start:]) % (api.url, api.url))
        pairs = lambda n: r"\b%d scrape target\(s\) x profile\(s\)" % n
        p.wait_log(pairs(2))
        # each discovery's change is a refresh of its own: the second's counts
        for change, want in ((lambda: api.add(pod("web-2", port)), pairs(4) + "; 0 removed"),
                             (lambda: api.remove("web-1"), pairs(2) + "; 1 removed"),
                             (lambda: api.add(pod("web-3", port)), pairs(4) + "; 0 removed")):
            mark = p.mark()
            change()
            p.wait_log(want, start=mark)
        wait_until(lambda: self.files("shop", "web-3", "app", "web"), "web-3's goroutines")
        self.assertEqual(metric_value(p.metrics(), "profd_scrape_k8s_pods",
                                      component="pprof_scrape", job="pods"), 2)
        self.assertEqual(p.stop(), 0)

    def test_attach_metadata_gives_the_nodes_labels_and_follows_their_changes(self):
        web = self.go_target()
        node = {"metadata": {"name": "node-a", "uid": "n1",
                             "labels": {"topology.kubernetes.io/zone": "eu-1a"}}}
        other = {"metadata": {"name": "node-b", "uid": "n2",
                              "labels": {"topology.kubernetes.io/zone": "eu-1b"}}}
        api = self.api([pod("web-1", int(web.address.rsplit(":", 1)[1]))], nodes=[node, other])
        config = (CONFIG % api.url).replace(
            '            selectors: [{role: pod, label: "tier!=db"}]\n',
            '            selectors: [{role: pod, label: "tier!=db"},\n'
            '                        {role: node, field: "metadata.name=node-a"}]\n'
            '            attach_metadata: {node: true}\n').replace(
            "          - {source_labels: [__meta_kubernetes_namespace], target_label: namespace}",
            "          - {source_labels: [__meta_kubernetes_namespace], target_label: namespace}\n"
            "          - {source_labels: [__meta_kubernetes_node_label_topology_kubernetes_io_zone],"
            " target_label: zone}").replace("{app}/{unix_nanos}", "{zone}/{unix_nanos}")
        p = self.start(config)
        wait_until(lambda: self.files("shop", "web-1", "app", "eu-1a"), "a profile in eu-1a")
        nodes = [(path, q) for path, q, _ in api.got if path == "/api/v1/nodes"]
        self.assertEqual(nodes[0], ("/api/v1/nodes", {"fieldSelector": ["metadata.name=node-a"]}))
        # The node's labels change: the watch of nodes brings it, the target is made again.
        wait_until(lambda: api.watching() >= 2, "the pods and the nodes watched")
        node["metadata"]["labels"]["topology.kubernetes.io/zone"] = "eu-1c"
        api.modify_node(node)
        wait_until(lambda: self.files("shop", "web-1", "app", "eu-1c"), "a profile in eu-1c")
        self.assertEqual(metric_value(p.metrics(), "profd_scrape_k8s_pods",
                                      component="pprof_scrape", job="pods"), 1)   # pods alone
        self.assertEqual(p.stop(), 0)

    def test_the_endpointslice_role_scrapes_a_services_endpoints_with_its_labels(self):
        """Role endpointslice: each ready endpoint of the slices of the
        services opted in (a label on the service, as Prometheus configs
        for role endpointslice select them), with the service's, the
        slice's and the endpoint's pod's labels; a service's change,
        brought by its watch, makes the targets again."""
        web, port, web_pod = self.pprof_pod()
        service = {"metadata": {"name": "web", "namespace": "shop", "uid": "svc-uid",
                                "labels": {"app": "web"}}}
        other = {"metadata": {"name": "db", "namespace": "shop", "uid": "db-uid",
                              "labels": {"app": "db", "profiles": "true"}}}

        def endpoints(name, service, ready):
            return {"metadata": {"name": name, "namespace": "shop", "uid": name + "-uid",
                                 "labels": {"kubernetes.io/service-name": service}},
                    "addressType": "IPv4",
                    "ports": [{"name": "pprof", "port": port, "protocol": "TCP"}],
                    "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": ready},
                                   "targetRef": {"kind": "Pod", "name": "web-1",
                                                 "namespace": "shop"}}]}
        api = KubernetesApi([web_pod], "tok123", services=[service, other],
                            endpointslices=[endpoints("web-x1", "web", True),
                                            endpoints("db-x1", "db", False)])
        self.addCleanup(api.stop)
        p = self.start(services_config("endpointslice", api.url,
                                       "endpointslice_endpoint_conditions_ready",
                                       "endpointslice"))

        def known(kind):
            return metric_value(p.metrics(), "profd_scrape_k8s_" + kind,
                                component="pprof_scrape", job="services")
        # Built from all three lists: web is not opted in, db's endpoint is
        # not ready, so nothing is scraped yet.
        wait_until(lambda: (known("endpointslices"), known("services"), known("pods")) ==
                   (2, 2, 1), "the slices, services and pods known")
        lists = {path: q for path, q, _ in api.got if not q.get("watch")}
        self.assertEqual(lists, {
            "/api/v1/namespaces/shop/pods": {"fieldSelector": ["spec.nodeName=node-a"]},
            "/api/v1/namespaces/shop/services": {},
            "/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices": {}})
        wait_until(lambda: api.watching() >= 3, "the three lists watched")
        self.assertEqual(self.files(), [])
        service["metadata"]["labels"]["profiles"] = "true"
        api.modify_object("services", service)
        wait_until(lambda: self.files("shop", "web", "web-1", "app"), "web-1's goroutines")
        self.assertEqual(os.listdir(self.path("profiles", "shop")), ["web"])
        self.assertEqual(metric_value(p.metrics(), "profd_scrape_up", component="pprof_scrape",
                                      job="services", instance=web.address,
                                      profile="goroutine"), 1)
        self.assertEqual(p.stop(), 0)

    def test_the_endpoints_role_scrapes_the_ready_addresses_of_a_services_endpoints(self):
        """Role endpoints: the addresses of an Endpoints object's subsets
        (its notReadyAddresses with __meta_kubernetes_endpoint_ready
        "false"), with the labels of the service of its name and of the
        address's pod."""
        web, port, web_pod = self.pprof_pod()
        service = {"metadata": {"name": "web", "namespace": "shop", "uid": "svc-uid",
                                "labels": {"profiles": "true"}}}
        ref = {"kind": "Pod", "name": "web-1", "namespace": "shop"}
        endpoints = {"metadata": {"name": "web", "namespace": "shop", "uid": "ep-uid"},
                     "subsets": [{"addresses": [{"ip": "127.0.0.1", "targetRef": ref}],
                                  "notReadyAddresses": [{"ip": "127.0.0.2"}],
                                  "ports": [{"name": "pprof", "port": port}]}]}
        api = KubernetesApi([web_pod], "tok123", services=[service], endpoints=[endpoints])
        self.addCleanup(api.stop)
        p = self.start(services_config("endpoints", api.url, "endpoint_ready", "endpoint"))
        wait_until(lambda: self.files("shop", "web", "web-1", "app"), "web-1's goroutines")
        self.assertEqual(sorted(path for path, q, _ in api.got if not q.get("watch")),
                         ["/api/v1/namespaces/shop/endpoints", "/api/v1/namespaces/shop/pods",
                          "/api/v1/namespaces/shop/services"])
        m = p.metrics()
        self.assertEqual(metric_value(m, "profd_scrape_k8s_endpoints", component="pprof_scrape",
                                      job="services"), 1)
        self.assertEqual(metric_value(m, "profd_scrape_up", component="pprof_scrape",
                                      job="services", instance=web.address,
                                      profile="goroutine"), 1)
        self.assertIsNone(metric_value(m, "profd_scrape_up", component="pprof_scrape",
                                       job="services", instance="127.0.0.2:%d" % port,
                                       profile="goroutine"))   # not ready: dropped
        self.assertEqual(p.stop(), 0)

    def test_the_service_and_ingress_roles_scrape_what_relabeling_makes_of_them(self):
        """Role service (a target per port, at the service's DNS name) and
        role ingress (a target per host and path), each made an address a
        Go target answers at by relabeling, as one would scrape a
        service's cluster IP; the ingress's TLS host gives https as its
        scheme label."""
        web = self.go_target()
        port = int(web.address.rsplit(":", 1)[1])
        service = {"metadata": {"name": "web", "namespace": "shop", "uid": "svc-uid"},
                   "spec": {"type": "ClusterIP", "clusterIP": "127.0.0.1",
                            "ports": [{"name": "pprof", "port": port}]}}
        ingress = {"metadata": {"name": "front", "namespace": "shop", "uid": "ing-uid"},
                   "spec": {"tls": [{"hosts": ["shop.example.com"]}],
                            "rules": [{"host": "shop.example.com",
                                       "http": {"paths": [{"path": "/"}]}}]}}
        api = KubernetesApi([], "tok123", services=[service], ingresses=[ingress])
        self.addCleanup(api.stop)
        def sd(role):
            return ('{role: %s, api_server: "%s", bearer_token_file: ./token, '
                    'retry_interval: 200ms}' % (role, api.url))
        p = self.start("""
receivers:
  pprof_scrape:
    scrape_configs:
""" + k8s_job("services", sd("service"), """\
          - {source_labels: [__meta_kubernetes_service_cluster_ip,
                             __meta_kubernetes_service_port_number],
             separator: ":", target_label: __address__}
          - {source_labels: [__meta_kubernetes_service_name], target_label: name}
          - {source_labels: [__meta_kubernetes_service_type], target_label: kind}
""") + k8s_job("ingresses", sd("ingress"), """\
          - {target_label: __address__, replacement: "127.0.0.1:%d"}
          - {source_labels: [__meta_kubernetes_ingress_name], target_label: name}
          - {source_labels: [__meta_kubernetes_ingress_scheme], target_label: kind}
""" % port) + """\
exporters:
  pprof_file: {path_template: "{job}/{name}/{kind}/{unix_nanos}.pb.gz"}
""" + PIPELINE)
        wait_until(lambda: self.files("services", "web", "ClusterIP"), "the service's goroutines")
        wait_until(lambda: self.files("ingresses", "front", "https"), "the ingress's goroutines")
        self.assertEqual(sorted(path for path, q, _ in api.got if not q.get("watch")),
                         ["/api/v1/services", "/apis/networking.k8s.io/v1/ingresses"])
        m = p.metrics()
        self.assertEqual(metric_value(m, "profd_scrape_k8s_services", component="pprof_scrape",
                                      job="services"), 1)
        self.assertEqual(metric_value(m, "profd_scrape_k8s_ingresses", component="pprof_scrape",
                                      job="ingresses"), 1)
        self.assertEqual(p.stop(), 0)

    def test_the_node_role_scrapes_each_node_at_its_kubelet_port(self):
        """Role node: a target per node at its InternalIP and kubelet port
        (here a Go target's), instance its name; a node without an address
        none; a node added by the watch scraped too."""
        web = self.go_target()
        port = int(web.address.rsplit(":", 1)[1])

        def node(name, addresses):
            return {"metadata": {"name": name, "uid": name + "-uid",
                                 "labels": {"kubernetes.io/os": "linux"}},
                    "spec": {"providerID": "test-" + name},
                    "status": {"addresses": [{"type": t, "address": a} for t, a in addresses],
                               "daemonEndpoints": {"kubeletEndpoint": {"Port": port}}}}
        api = self.api([], nodes=[node("node-a", [("Hostname", "node-a.invalid"),
                                                  ("InternalIP", "127.0.0.1")]),
                                  node("unready", [])])
        p = self.start(("""
receivers:
  pprof_scrape:
    scrape_configs:
      - job_name: kubelets
        scrape_interval: 1s
        kubernetes_sd_configs:
          - {role: node, api_server: "%s", bearer_token_file: ./token, retry_interval: 200ms,
             selectors: [{role: node, label: "kubernetes.io/os=linux"}],
             namespaces: {own_namespace: true}}   # moot for nodes, as in Prometheus
        profiling_config: {presets: [goroutine]}
        relabel_configs:
          - {source_labels: [__meta_kubernetes_node_provider_id], target_label: provider}
exporters:
  pprof_file: {path_template: "{instance}/{provider}/{unix_nanos}.pb.gz"}
""" + PIPELINE) % api.url)
        wait_until(lambda: self.files("node-a", "test-node-a"), "node-a's goroutines")
        self.assertEqual(api.got[0][:2], ("/api/v1/nodes",
                                          {"labelSelector": ["kubernetes.io/os=linux"]}))
        self.assertEqual(sorted(os.listdir(self.path("profiles"))), ["node-a"])
        wait_until(lambda: api.watching() >= 1, "the nodes watched")
        api.add_node(node("node-b", [("InternalIP", "127.0.0.1")]))
        wait_until(lambda: self.files("node-b"), "node-b's goroutines")
        self.assertEqual(metric_value(p.metrics(), "profd_scrape_k8s_nodes",
                                      component="pprof_scrape", job="kubelets"), 3)
        self.assertEqual(p.stop(), 0)

    def test_a_failing_api_keeps_the_targets_it_gave(self):
        target = self.goroutine_target()
        api = self.api([pod("web-1", int(target.address.rsplit(":", 1)[1]))])
        api.watch_seconds = 1
        p = self.start(CONFIG % api.url)
        wait_until(lambda: self.files("shop", "web-1"), "a first profile")
        mark = p.mark()
        api.fail = 500   # the next watch, and the lists after it
        p.wait_log(r"job 'pods': http://127\.0\.0\.1:\d+/api/v1/namespaces/shop/pods\?"
                   r"labelSelector=tier%21%3Ddb: the watch failed: HTTP 500: .*refused by the "
                   r"test.*; keeping its 2 target\(s\), listing again in 200 ms", start=mark)
        p.wait_log(r"job 'pods': http://127\.0\.0\.1:\d+/api/v1/namespaces/shop/pods\?"
                   r"labelSelector=tier%21%3Ddb: HTTP 500: ", start=mark)
        scraped = target.hits["/debug/pprof/goroutine"]
        wait_until(lambda: target.hits["/debug/pprof/goroutine"] > scraped + 1,
                   "scrapes going on while the API fails")
        self.assertGreaterEqual(metric_value(p.metrics(), "profd_scrape_k8s_errors",
                                             component="pprof_scrape", job="pods"), 2)
        self.assertEqual(p.stop(), 0)

    def kubeconfig(self, server, user, cluster=""):
        """A kubeconfig as kubectl writes one, its current context in
        namespace shop, the server's CA inline, cluster's lines added to
        the cluster; returns its path."""
        ca = base64.b64encode(open(self.path("ca.pem"), "rb").read()).decode()
        with open(self.path("kube", "config"), "w") as f:
            f.write("apiVersion: v1\nkind: Config\ncurrent-context: shop-admin\n"
                    "clusters:\n- name: test\n  cluster:\n    server: %s\n"
                    "    certificate-authority-data: %s\n%s"
                    "contexts:\n- name: shop-admin\n"
                    "  context: {cluster: test, user: admin, namespace: shop}\n"
                    "users:\n- name: admin\n  user:\n%s" % (server, ca, cluster, user))
        return self.path("kube", "config")

    def kubeconfig_config(self, path):
        """CONFIG with the API and its credentials from the kubeconfig at
        path."""
        return (CONFIG % "").replace(
            '            api_server: ""\n            bearer_token_file: ./token\n',
            '            kubeconfig_file: %s\n' % path)

    def test_a_kubeconfig_gives_the_server_credentials_and_namespace(self):
        """HTTPS to an API that takes only clients with a certificate its
        CA signed and the token: the server, its CA (inline), the client
        certificate (a path relative to the kubeconfig) and key (inline),
        the token and the context's namespace all come from the file."""
        web = self.go_target()
        os.makedirs(self.path("kube"))
        ca, cert, key = make_test_certs(self.path())
        client_cert, client_key = make_client_cert(self.path())
        shutil.move(client_cert, self.path("kube", "client.pem"))
        api = self.api([pod("web-1", int(web.address.rsplit(":", 1)[1])),
                        pod("elsewhere", 1, namespace="other")], (cert, key, ca))
        key_data = base64.b64encode(open(client_key, "rb").read()).decode()
        path = self.kubeconfig(api.url, "    client-certificate: client.pem\n"
                               "    client-key-data: %s\n    token: tok123\n" % key_data)
        config = (CONFIG % "").replace(
            '            api_server: ""\n            bearer_token_file: ./token\n'
            '            namespaces: {names: [shop]}\n',
            '            kubeconfig_file: %s\n            namespaces: {own_namespace: true}\n'
            % path)
        p = self.start(config)
        wait_until(lambda: self.files("shop", "web-1", "app", "web"), "web-1's goroutines")
        self.assertEqual(api.got[0], ("/api/v1/namespaces/shop/pods",
                                      {"labelSelector": ["tier!=db"]}, "Bearer tok123"))
        self.assertEqual(p.stop(), 0)

    def test_a_kubeconfigs_exec_plugin_gives_the_token_and_runs_again_after_a_401(self):
        """An exec credential plugin (command relative to the kubeconfig):
        its first token refused (401), so it runs again; its second kept
        while watches end and start again."""
        web = self.go_target()
        os.makedirs(self.path("kube"))
        make_test_certs(self.path())
        api = self.api([pod("web-1", int(web.address.rsplit(":", 1)[1]))])
        api.watch_seconds = 1
        with open(self.path("kube", "token-plugin"), "w") as f:
            f.write("#!/bin/sh\n"
                    "echo run >> \"$0.runs\"\n"
                    "[ $(wc -l < \"$0.runs\") -gt 1 ] && t=tok123 || t=stale\n"
                    "printf '{\"apiVersion\": \"%s\", \"kind\": \"ExecCredential\", '"
                    "'\"status\": {\"token\": \"%s\"}}' \"$1\" \"$t\"\n")
        os.chmod(self.path("kube", "token-plugin"), 0o755)
        path = self.kubeconfig(api.url, "    exec:\n      apiVersion: "
                               "client.authentication.k8s.io/v1\n      command: ./token-plugin\n"
                               "      args: [client.authentication.k8s.io/v1]\n")
        p = self.start(self.kubeconfig_config(path))
        p.wait_log(r"job 'pods': https?://127\.0\.0\.1:\d+/api/v1/namespaces/shop/pods.*: "
                   r"HTTP 401")
        wait_until(lambda: self.files("shop", "web-1", "app", "web"), "web-1's goroutines")
        wait_until(lambda: api.watching() >= 3, "watches ended and started again")
        runs = open(self.path("kube", "token-plugin.runs")).read().split()
        self.assertEqual(len(runs), 2)   # the stale token, then the good one, kept
        self.assertEqual([a for _, _, a in api.got[-2:]], ["Bearer tok123"] * 2)
        self.assertEqual(p.stop(), 0)

    def test_a_kubeconfigs_server_name_impersonation_and_uncompressed_responses(self):
        """The API's certificate names kubernetes.test alone, not the
        127.0.0.1 of the server's URL: tls-server-name is what the
        certificate is checked against and the handshake asks for, the Host
        header the URL's. The user impersonates another with groups and an
        extra whose key a header name cannot hold; disable-compression
        asks for responses as they are."""
        web = self.go_target()
        os.makedirs(self.path("kube"))
        make_test_certs(self.path())
        named = sign_test_cert(self.path(), "named", "kubernetes.test",
                               "subjectAltName=DNS:kubernetes.test")
        api = self.api([pod("web-1", int(web.address.rsplit(":", 1)[1]))], named)
        path = self.kubeconfig(api.url, "    token: tok123\n    as: profiler\n"
                               "    as-groups: [ops, 'system:monitoring']\n"
                               "    as-user-extra: {acme.com/team: [perf, infra]}\n",
                               "    tls-server-name: kubernetes.test\n"
                               "    disable-compression: true\n")
        p = self.start(self.kubeconfig_config(path))
        wait_until(lambda: self.files("shop", "web-1", "app", "web"), "web-1's goroutines")
        self.assertEqual(set(api.sni), {"kubernetes.test"})   # an IP's URL asks for none
        for h in list(api.headers):
            self.assertEqual(h["Host"], api.url.split("//")[1])
            self.assertEqual(h.get_all("Impersonate-User"), ["profiler"])
            self.assertEqual(h.get_all("Impersonate-Group"), ["ops", "system:monitoring"])
            self.assertEqual(h.get_all("Impersonate-Extra-acme.com%2Fteam"), ["perf", "infra"])
            self.assertIsNone(h["Accept-Encoding"])
        self.assertEqual(p.stop(), 0)

    def test_a_kubeconfigs_proxy_carries_lists_and_watches(self):
        """proxy-url: every request goes through nginx as a forward proxy
        (which adds its Via header), a watch's events streamed through it
        too: a pod added later is scraped."""
        web = self.go_target()
        os.makedirs(self.path("kube"))
        make_test_certs(self.path())
        proxy = ForwardProxy(self.path("proxy"))
        self.addCleanup(proxy.stop)
        port = int(web.address.rsplit(":", 1)[1])
        api = self.api([pod("web-1", port)])
        path = self.kubeconfig(api.url, "    token: tok123\n", "    proxy-url: %s\n" % proxy.url)
        p = self.start(self.kubeconfig_config(path))
        wait_until(lambda: self.files("shop", "web-1", "app", "web"), "web-1's goroutines")
        wait_until(lambda: api.watching(), "a watch")
        api.add(pod("web-2", port))
        wait_until(lambda: self.files("shop", "web-2", "app", "web"), "web-2, from the watch")
        self.assertEqual([h["Via"] for h in list(api.headers)], ["1.1 nginx"] * len(api.headers))
        self.assertEqual(p.stop(), 0)

    def test_authorization_and_a_proxy_url_of_its_own_go_to_the_api(self):
        """authorization (a credentials_file), proxy_url and http_headers, as
        Prometheus's kubernetes_sd_config takes them: the lists and watches
        carry the credentials and headers through nginx as a forward proxy
        (its Via header); the scrapes go straight to the pods."""
        web = self.go_target()
        port = int(web.address.rsplit(":", 1)[1])
        proxy = ForwardProxy(self.path("proxy"))
        self.addCleanup(proxy.stop)
        api = self.api([pod("web-1", port)])
        p = self.start((CONFIG % api.url).replace(
            "            bearer_token_file: ./token\n",
            "            authorization: {type: Bearer, credentials_file: ./token}\n"
            "            http_headers: {X-Cluster: {values: [c1]}}\n"
            "            proxy_url: %s\n" % proxy.url))
        wait_until(lambda: self.files("shop", "web-1", "app", "web"), "web-1's goroutines")
        self.assertEqual(p.stop(), 0)
        self.assertEqual(api.got[0][2], "Bearer tok123")
        self.assertEqual({h["Via"] for h in list(api.headers)}, {"1.1 nginx"})
        self.assertEqual({tuple(h.get_all("X-Cluster")) for h in list(api.headers)}, {("c1",)})

    def test_a_kubeconfig_that_cannot_be_used_is_an_error_and_the_rest_goes_on(self):
        target = self.goroutine_target()
        os.makedirs(self.path("kube"))
        make_test_certs(self.path())
        path = self.kubeconfig("https://127.0.0.1:1", "    auth-provider: {name: gcp}\n")
        p = self.start(with_static_target(self.kubeconfig_config(path), target))
        p.wait_log(r"job 'pods': kubernetes_sd_configs: .*/kube/config:\d+: user 'admin' gets "
                   r"its credentials from an auth-provider, which profd does not run: .*; no "
                   r"targets from it")
        wait_until(lambda: self.files(), "the static target's profile")
        self.assertEqual(p.stop(), 0)

    @unittest.skipIf(os.environ.get("KUBERNETES_SERVICE_HOST"), "running in a Kubernetes pod")
    def test_no_api_to_ask_is_an_error_and_the_rest_goes_on(self):
        target = self.goroutine_target()
        p = self.start(with_static_target((CONFIG % "").replace('            api_server: ""\n', ""),
                                          target))
        p.wait_log(r"job 'pods': kubernetes_sd_configs: no api_server or kubeconfig_file, and "
                   r"not in a Kubernetes pod \(KUBERNETES_SERVICE_HOST is not set\); no targets "
                   r"from it")
        wait_until(lambda: self.files(), "the static target's profile")
        self.assertEqual(p.stop(), 0)

    def refusal(self, old, new, *more):
        """What `profd validate` says of CONFIG with old replaced by new
        (and each further pair of more the same), which it must refuse."""
        config = CONFIG % "http://127.0.0.1:1"
        for was, now in [(old, new)] + list(zip(more[::2], more[1::2])):
            config = config.replace(was, now)
        with open(self.path("k.yaml"), "w") as f:
            f.write(config)
        r = run(["validate", "--config", self.path("k.yaml")])
        self.assertEqual(r.returncode, 2)
        return r.stderr

    def test_unknown_roles_wrong_selectors_and_a_kubeconfig_with_a_server_are_refused(self):
        self.assertIn("job 'pods': kubernetes_sd_configs role 'gateway' is not supported (pod, "
                      "node, endpointslice, endpoints, service, ingress)",
                      self.refusal("role: pod\n", "role: gateway\n"))
        self.assertIn("job 'pods': a selector of role 'pod' in a kubernetes_sd_config of role "
                      "'node' (node)", self.refusal("- role: pod\n", "- role: node\n"))
        self.assertIn("job 'pods': more than one selector of role 'pod'", self.refusal(
            '[{role: pod, label: "tier!=db"}]',
            '[{role: pod, label: "tier!=db"}, {role: pod, field: "spec.nodeName=a"}]'))
        self.assertIn("job 'pods': a selector of role 'service' in a kubernetes_sd_config of "
                      "role 'pod' (pod, node)", self.refusal(
                          '[{role: pod, label: "tier!=db"}]', '[{role: service, label: "a=b"}]'))
        self.assertIn("job 'pods': a selector of role 'endpointslice' in a kubernetes_sd_config "
                      "of role 'endpoints' (endpoints, service, pod, node)", self.refusal(
                          "- role: pod\n", "- role: endpoints\n",
                          '[{role: pod, label: "tier!=db"}]', "[{role: endpointslice}]"))
        self.assertIn("job 'pods': a selector of role 'ingress' in a kubernetes_sd_config of "
                      "role 'endpointslice' (endpointslice, service, pod, node)", self.refusal(
                          "- role: pod\n", "- role: endpointslice\n",
                          '[{role: pod, label: "tier!=db"}]', "[{role: ingress}]"))
        for given in ('            api_server: "http://127.0.0.1:1"\n',
                      "            http_headers: {X-Cluster: {values: [c1]}}\n"):
            self.assertIn("job 'pods': kubeconfig_file gives the server, the credentials and "
                          "the proxy: api_server, credentials, proxy_url, http_headers and "
                          "tls_config cannot be set with it",
                          self.refusal("            bearer_token_file: ./token\n",
                                       "            kubeconfig_file: ./kubeconfig\n",
                                       '            api_server: "http://127.0.0.1:1"\n', given))
        self.assertIn("job 'pods': kubernetes_sd_configs: oauth2 needs client_id and token_url",
                      self.refusal("            bearer_token_file: ./token\n",
                                   "            oauth2: {client_id: c}\n"))
        self.assertIn("job 'pods': kubernetes_sd_configs: at most one of bearer_token (or "
                      "bearer_token_file), authorization, basic_auth and oauth2 may be set",
                      self.refusal("            bearer_token_file: ./token\n",
                                   "            bearer_token_file: ./token\n"
                                   "            basic_auth: {username: u}\n"))

    @unittest.skipUnless(shutil.which("valgrind") and not os.environ.get("PROFD_SANITIZED"),
                         "valgrind not installed, or a sanitizer build")
    def test_valgrind_run_and_shutdown_has_no_leaks(self):
        target = self.goroutine_target()
        port = int(target.address.rsplit(":", 1)[1])
        service = {"metadata": {"name": "web", "namespace": "shop", "uid": "s1",
                                "labels": {"app": "web"}}}
        endpoints = {"metadata": {"name": "web-x1", "namespace": "shop", "uid": "e1",
                                  "labels": {"kubernetes.io/service-name": "web"}},
                     "addressType": "IPv4", "ports": [{"name": "pprof", "port": port}],
                     "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": True},
                                    "targetRef": {"kind": "Pod", "name": "web-1",
                                                  "namespace": "shop"}}]}
        api = KubernetesApi([pod("web-1", port)], "tok123", services=[service],
                            endpointslices=[endpoints])
        self.addCleanup(api.stop)
        # A second job of role endpointslice, its targets made and dropped.
        config = (CONFIG % api.url).replace("            retry_interval: 200ms\n",
                                            "            retry_interval: 200ms\n"
                                            "            attach_metadata: {node: true}\n")
        config = config.replace("\nexporters:", """
      - job_name: slices
        kubernetes_sd_configs:
          - {role: endpointslice, api_server: "%s", bearer_token_file: ./token,
             namespaces: {names: [shop]}, retry_interval: 200ms}
        relabel_configs: [{source_labels: [__meta_kubernetes_service_name], regex: web,
                           action: drop}]
exporters:""" % api.url, 1)
        p = self.start(config, wrapper=valgrind(self.path("vg.log")))
        wait_until(lambda: self.files("shop", "web-1"), "a profile", deadline=120)
        api.add(pod("web-2", 1))   # a change: targets made again under valgrind too
        api.expire()               # and a list again
        # Each job's lists (pods and nodes; slices, services and pods), each
        # listed again after the 410.
        wait_until(lambda: api.lists() >= 10, "lists after the 410", deadline=120)
        self.assertEqual(sum(1 for path, q, _ in api.got if path == "/api/v1/nodes"
                             and "watch" not in q), 2)
        rc = p.stop(timeout=120)
        log = open(self.path("vg.log")).read()
        self.assertEqual(rc, 0, log)
        self.assertIn("ERROR SUMMARY: 0 errors", log)
