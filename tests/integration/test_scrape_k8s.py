# SPDX-License-Identifier: Apache-2.0
"""The pprof_scrape receiver's kubernetes_sd_configs: pods listed and
watched from a Python HTTP server playing the Kubernetes API
(harness.KubernetesApi, which filters by namespace and selectors and
streams watch events as the API does), their pod IP and
ports those of real Go targets on loopback, chosen and relabeled the way
Grafana Alloy's documented annotations (profiles.grafana.com/*) do."""
import os
import shutil
import unittest

from harness import (FakeTarget, GO_CORPUS, KubernetesApi, ProfdTestCase, Target, metric_value,
                     run, valgrind, wait_until)

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
service:
  telemetry: {metrics: {address: "127.0.0.1:0"}}
  pipelines:
    profiles: {receivers: [pprof_scrape], exporters: [pprof_file]}
"""


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


class ScrapeKubernetesTest(ProfdTestCase):

    def setUp(self):
        super().setUp()
        with open(self.path("token"), "w") as f:
            f.write("tok123\n")

    def api(self, pods):
        api = KubernetesApi(pods, "tok123")
        self.addCleanup(api.stop)
        return api

    def go_target(self):
        t = Target()
        self.addCleanup(t.stop)
        return t

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

    @unittest.skipIf(os.environ.get("KUBERNETES_SERVICE_HOST"), "running in a Kubernetes pod")
    def test_no_api_to_ask_is_an_error_and_the_rest_goes_on(self):
        target = self.goroutine_target()
        config = (CONFIG % "").replace('            api_server: ""\n', "").replace(
            "        relabel_configs:", "        static_configs: [{targets: [\"%s\"]}]\n"
            "        relabel_configs:" % target.address).replace("action: keep}", "action: drop}")
        p = self.start(config)
        p.wait_log(r"job 'pods': kubernetes_sd_configs: no api_server, and not in a Kubernetes "
                   r"pod \(KUBERNETES_SERVICE_HOST is not set\); no targets from it")
        wait_until(lambda: self.files(), "the static target's profile")
        self.assertEqual(p.stop(), 0)

    def test_roles_other_than_pod_and_two_selectors_of_one_role_are_refused(self):
        with open(self.path("k.yaml"), "w") as f:
            f.write((CONFIG % "http://127.0.0.1:1").replace("role: pod\n", "role: node\n"))
        r = run(["validate", "--config", self.path("k.yaml")])
        self.assertEqual(r.returncode, 2)
        self.assertIn("job 'pods': kubernetes_sd_configs role 'node' is not supported (only pod)",
                      r.stderr)
        with open(self.path("k.yaml"), "w") as f:
            f.write((CONFIG % "http://127.0.0.1:1").replace(
                '[{role: pod, label: "tier!=db"}]',
                '[{role: pod, label: "tier!=db"}, {role: pod, field: "spec.nodeName=a"}]'))
        r = run(["validate", "--config", self.path("k.yaml")])
        self.assertEqual(r.returncode, 2)
        self.assertIn("job 'pods': more than one selector of role 'pod'", r.stderr)

    @unittest.skipUnless(shutil.which("valgrind") and not os.environ.get("PROFD_SANITIZED"),
                         "valgrind not installed, or a sanitizer build")
    def test_valgrind_run_and_shutdown_has_no_leaks(self):
        target = self.goroutine_target()
        api = self.api([pod("web-1", int(target.address.rsplit(":", 1)[1]))])
        p = self.start(CONFIG % api.url, wrapper=valgrind(self.path("vg.log")))
        wait_until(lambda: self.files("shop", "web-1"), "a profile", deadline=120)
        api.add(pod("web-2", 1))   # a change: targets made again under valgrind too
        api.expire()               # and a list again
        wait_until(lambda: api.lists() >= 2, "a list after the 410", deadline=120)
        rc = p.stop(timeout=120)
        log = open(self.path("vg.log")).read()
        self.assertEqual(rc, 0, log)
        self.assertIn("ERROR SUMMARY: 0 errors", log)
