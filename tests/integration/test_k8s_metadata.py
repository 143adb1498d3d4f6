# SPDX-License-Identifier: Apache-2.0
"""The k8s_metadata processor against a Python HTTP server playing the
Kubernetes API (harness.KubernetesApi: GET /api/v1/pods answering a
PodList as the API documents it, checking the token and filtered by the
node's field selector), with processes'
cgroup files under a proc_root of the test's own, written as containerd
(cgroup v2, systemd driver) and docker (cgroup v1, cgroupfs) write them."""
import os
import shutil
import unittest

from harness import (GO_CORPUS, KubernetesApi, ProfdTestCase, metric_value, run, valgrind,
                     wait_until)

ID1 = "1" * 64
ID2 = "2" * 64
ID3 = "3" * 64
UID1 = "11111111-2222-3333-4444-555555555555"
UID2 = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"

CONFIG = """
receivers:
  pprof_file: {include: ["./spool/*.pb.gz"], filename_pattern: '(?<pid>\\d+)-heap\\.pb\\.gz',
               after_ingest: delete}
processors:
  k8s_metadata: {api_server: "http://127.0.0.1:%d", bearer_token_file: ./token,
                 node_name: node-a, proc_root: ./proc, pod_labels: true, pod_annotations: true,
                 ip_label: instance,
                 retry_interval: 1s}
exporters:
  pprof_file: {directory: ./out,
               path_template: "{pid}/{namespace}.{pod}.{container}.{node}.{pod_label_app}.\
{pod_annotation_team_example_com_owner}"}
service:
  telemetry: {metrics: {address: "127.0.0.1:0"}}
  pipelines:
    profiles: {receivers: [pprof_file], processors: [k8s_metadata], exporters: [pprof_file]}
"""


def pod(name, uid, containers, ip=None, labels=None):
    """A PodList item on node-a, as the API writes one, with an annotation."""
    return {"metadata": {"name": name, "namespace": "shop", "uid": uid,
                         "labels": labels or {},
                         "annotations": {"team.example.com/owner": "payments"}},
            "spec": {"nodeName": "node-a", "containers": [{"name": c} for c, _ in containers]},
            "status": {"phase": "Running", "podIP": ip,
                       "containerStatuses": [{"name": c, "containerID": "containerd://" + i}
                                             for c, i in containers]}}


class K8sMetadataTest(ProfdTestCase):

    def api(self, pods):
        """The API stand-in, answering with pods to the token tok123: (its
        port, the stand-in)."""
        api = KubernetesApi(pods, "tok123")
        self.addCleanup(api.stop)
        return int(api.url.rsplit(":", 1)[1]), api

    def kubeconfig_config(self, port, user):
        """CONFIG reading the API at port through ./kubeconfig, whose
        current context's user is user (a YAML flow mapping)."""
        with open(self.path("kubeconfig"), "w") as f:
            f.write("current-context: here\ncontexts: [{name: here, context: {cluster: c, "
                    "user: u}}]\nclusters: [{name: c, cluster: {server: 'http://127.0.0.1:%d'}}]\n"
                    "users: [{name: u, user: %s}]\n" % (port, user))
        return CONFIG.replace('api_server: "http://127.0.0.1:%d", bearer_token_file: ./token',
                              "kubeconfig_file: ./kubeconfig")

    def process(self, pid, cgroup):
        os.makedirs(self.path("proc", str(pid)))
        with open(self.path("proc", str(pid), "cgroup"), "w") as f:
            f.write(cgroup)

    def spool_as(self, pid):
        self.spool("%d-heap.pb.gz" % pid, src=os.path.join(GO_CORPUS, "heap.pb.gz"))

    def written(self, pid):
        d = self.path("out", str(pid))
        return os.listdir(d) if os.path.isdir(d) else []

    def test_processes_get_their_pods_labels(self):
        pods = [pod("web-1", UID1, [("app", ID1)], "10.1.0.7", {"app": "web"}),
                pod("db-0", UID2, [("db", "f" * 64)])]
        port, api = self.api(pods)
        with open(self.path("token"), "w") as f:
            f.write("tok123\n")
        # containerd, cgroup v2, systemd driver: the container
        self.process(4242, "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
                     "%s.slice/cri-containerd-%s.scope\n" % (UID1.replace("-", "_"), ID1))
        # docker, cgroup v1: a container no list has, in a pod listed: the pod by its UID
        self.process(4343, "12:pids:/kubepods/besteffort/pod%s/%s\n" % (UID2, ID2))
        # no container at all
        self.process(4444, "0::/init.scope\n")
        # a container the first list does not have yet
        self.process(4545, "0::/kubepods.slice/kubepods-pod%s.slice/cri-containerd-%s.scope\n"
                     % ("9" * 8 + "_9999_9999_9999_" + "9" * 12, ID3))
        for pid in (4242, 4343, 4444, 4545):
            self.spool_as(pid)
        p = self.start(CONFIG % port)
        wait_until(lambda: all(self.written(pid) for pid in (4242, 4343, 4444, 4545)),
                   "four profiles written")
        self.assertEqual(self.written(4242), ["shop.web-1.app.node-a.web.payments"])
        self.assertEqual(self.written(4343), ["shop.db-0.unknown.node-a.unknown.payments"])
        self.assertEqual(self.written(4444), ["unknown.unknown.unknown.unknown.unknown.unknown"])
        self.assertEqual(self.written(4545), ["unknown.unknown.unknown.unknown.unknown.unknown"])
        self.assertEqual(api.got[0], ("/api/v1/pods",
                                      {"fieldSelector": ["spec.nodeName=node-a"]},
                                      "Bearer tok123"))
        # the watch brings the pod of the container unknown until now
        wait_until(lambda: api.watching() >= 1, "a watch")
        watch = [q for _, q, _ in api.got if q.get("watch")][0]
        self.assertEqual(watch["fieldSelector"], ["spec.nodeName=node-a"])
        api.add(pod("late", "99999999-9999-9999-9999-999999999999", [("late", ID3)]))
        wait_until(lambda: metric_value(p.metrics(), "profd_k8s_metadata_pods",
                                        component="k8s_metadata") == 3, "the new pod known")
        self.assertEqual(api.lists(), 1)   # made at start; the watch goes on from it
        self.assertEqual(watch["resourceVersion"], ["1"])   # the list's
        shutil.rmtree(self.path("out", "4545"))
        self.spool_as(4545)
        wait_until(lambda: self.written(4545), "the late container's profile")
        self.assertEqual(self.written(4545), ["shop.late.late.node-a.unknown.payments"])
        m = p.metrics()
        self.assertEqual(metric_value(m, "profd_k8s_metadata_pods", component="k8s_metadata"), 3)
        self.assertEqual(metric_value(m, "profd_k8s_metadata_unmatched_records",
                                      component="k8s_metadata"), 2)
        self.assertEqual(p.stop(), 0)

    def test_a_scrape_target_by_its_pod_ip(self):
        """ip_label: a record without a process, its instance label the pod's
        IP and port, gets that pod's labels (no container: a pod IP names
        the pod only)."""
        port, _ = self.api([pod("web-1", UID1, [("app", ID1)], "10.1.0.7", {"app": "web"})])
        with open(self.path("token"), "w") as f:
            f.write("tok123")
        p = self.start(CONFIG.replace("filename_pattern: '(?<pid>\\d+)-heap\\.pb\\.gz'",
                                      "labels: {instance: '10.1.0.7:6060', pid: ip}") % port)
        self.spool("heap.pb.gz", src=os.path.join(GO_CORPUS, "heap.pb.gz"))
        wait_until(lambda: self.written("ip"), "the profile")
        self.assertEqual(self.written("ip"), ["shop.web-1.unknown.node-a.web.payments"])
        self.assertEqual(p.stop(), 0)

    def test_node_labels_from_the_pods_node(self):
        """node_labels: the node (node_name's alone) listed before the first
        profile and watched: its labels on the records of its pods, a
        change of them on the next."""
        node = {"metadata": {"name": "node-a", "uid": "n1",
                             "labels": {"topology.kubernetes.io/zone": "eu-1a"}}}
        port, api = self.api([pod("web-1", UID1, [("app", ID1)], "10.1.0.7", {"app": "web"})])
        api.nodes = [node, {"metadata": {"name": "node-b", "uid": "n2",
                                         "labels": {"topology.kubernetes.io/zone": "eu-1b"}}}]
        with open(self.path("token"), "w") as f:
            f.write("tok123")
        self.process(4242, "0::/kubepods.slice/cri-containerd-%s.scope\n" % ID1)
        self.spool_as(4242)
        config = (CONFIG % port).replace("pod_labels: true,", "node_labels: true,").replace(
            "{pod_label_app}", "{node_label_topology_kubernetes_io_zone}")
        p = self.start(config)
        wait_until(lambda: self.written(4242), "the labeled profile")
        self.assertEqual(self.written(4242), ["shop.web-1.app.node-a.eu-1a.payments"])
        self.assertIn(("/api/v1/nodes", {"fieldSelector": ["metadata.name=node-a"]},
                       "Bearer tok123"), api.got)
        wait_until(lambda: api.watching() >= 2, "the pods and the node watched")
        mark = p.mark()
        node["metadata"]["labels"]["topology.kubernetes.io/zone"] = "eu-1c"
        api.modify_node(node)
        p.wait_log(r"1 pod\(s\) and 1 node\(s\) known", start=mark)   # node-a's alone
        shutil.rmtree(self.path("out", "4242"))
        self.spool_as(4242)
        wait_until(lambda: self.written(4242), "the profile again")
        self.assertEqual(self.written(4242), ["shop.web-1.app.node-a.eu-1c.payments"])
        self.assertEqual(p.stop(), 0)

    def test_a_kubeconfig_gives_the_server_and_token(self):
        """kubeconfig_file: the server and a tokenFile relative to the
        kubeconfig, from its current context, and the user it
        impersonates; bearer_token_file (the service account's by default)
        is not read."""
        port, api = self.api([pod("web-1", UID1, [("app", ID1)], "10.1.0.7", {"app": "web"})])
        with open(self.path("kube-token"), "w") as f:
            f.write("tok123\n")
        config = self.kubeconfig_config(port, "{tokenFile: kube-token, as: profiler}")
        self.process(4242, "0::/kubepods.slice/cri-containerd-%s.scope\n" % ID1)
        self.spool_as(4242)
        p = self.start(config)
        wait_until(lambda: self.written(4242), "the labeled profile")
        self.assertEqual(self.written(4242), ["shop.web-1.app.node-a.web.payments"])
        self.assertEqual(api.got[0][2], "Bearer tok123")
        self.assertEqual(api.headers[0]["Impersonate-User"], "profiler")
        self.assertEqual(p.stop(), 0)
        # A kubeconfig that cannot be used stops profd from starting, saying why.
        with open(self.path("kubeconfig"), "w") as f:
            f.write("current-context: gone\n")
        r = run(["--config", p.config], cwd=self.path())
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("kubeconfig_file: ./kubeconfig: no context named 'gone' in contexts",
                      r.stderr)

    def test_a_failing_api_is_logged_and_profiles_still_go(self):
        port, _ = self.api([])
        with open(self.path("token"), "w") as f:
            f.write("wrong")
        self.process(4242, "0::/kubepods.slice/cri-containerd-%s.scope\n" % ID1)
        self.spool_as(4242)
        p = self.start(CONFIG % port)
        p.wait_log(r"listing or watching the API: http://127\.0\.0\.1:\d+/api/v1/pods\?"
                   r"fieldSelector=spec\.nodeName%3Dnode-a: HTTP 401.*labeling from what is known",
                   count=2)   # the first list, then the watch's
        wait_until(lambda: self.written(4242), "the profile, unlabeled")
        self.assertGreaterEqual(metric_value(p.metrics(), "profd_k8s_metadata_list_errors",
                                             component="k8s_metadata"), 1)
        self.assertEqual(p.stop(), 0)

    @unittest.skipUnless(shutil.which("valgrind") and not os.environ.get("PROFD_SANITIZED"),
                         "valgrind not installed, or a sanitizer build")
    def test_valgrind_run_and_shutdown_has_no_leaks(self):
        port, api = self.api([pod("web-1", UID1, [("app", ID1)], "10.1.0.7", {"app": "web"})])
        # the token from a kubeconfig's exec plugin, run before the first list
        with open(self.path("plugin"), "w") as f:
            f.write("#!/bin/sh\necho '{\"kind\": \"ExecCredential\", "
                    "\"status\": {\"token\": \"tok123\"}}'\n")
        os.chmod(self.path("plugin"), 0o755)
        config = self.kubeconfig_config(port, "{exec: {command: ./plugin}}")
        self.process(4242, "0::/kubepods.slice/cri-containerd-%s.scope\n" % ID1)
        self.spool_as(4242)
        # node_labels: the nodes listed and watched under valgrind too
        p = self.start(config.replace("pod_labels: true,", "pod_labels: true, node_labels: true,"),
                       wrapper=valgrind(self.path("vg.log")))
        wait_until(lambda: self.written(4242), "the labeled profile", deadline=120)
        self.assertEqual(self.written(4242), ["shop.web-1.app.node-a.web.payments"])
        self.assertIn("/api/v1/nodes", [path for path, _, _ in api.got])
        rc = p.stop(timeout=120)
        log = open(self.path("vg.log")).read()
        self.assertEqual(rc, 0, log)
        self.assertIn("ERROR SUMMARY: 0 errors", log)
