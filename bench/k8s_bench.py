# SPDX-License-Identifier: Apache-2.0
"""Kubernetes discovery benchmark (section "k8s" of make bench).

The scrape receiver's kubernetes_sd_configs against the integration tests'
Kubernetes API stand-in (tests/integration/harness.py, KubernetesApi: a
PodList, then a watch streaming the pods added) with K8S_PODS pods (each
two containers, three ports, labels and annotations as deployments have
them), relabeled as Grafana Alloy's annotations are (keep the annotated
pods, the port named pprof) and scraped for five presets: five
(target, profile) pairs a pod. The pod IPs are loopback addresses whose
port refuses at once, so the scrapes cost next to nothing.

Printed per pod count, median of RUNS runs: from profd's start to every
pair made (the list and the targets from it); from a pod added after a
quiet while to its pairs made; from a pod added right after the last
change to its pairs made (targets are made no sooner after the last time
than four times as long as that took, so a cluster that changes all the
time gets at most a fifth of the event loop); and the CPU profd spent on
one change.

The same for role endpointslice: each namespace's pods behind one service
whose EndpointSlices hold at most 100 endpoints each (as the EndpointSlice
controller cuts them), the pods' endpoints at the port named pprof kept;
a pod added is the pod and its endpoint in its service's last slice (a
slice modified, or a new one).

And the k8s_metadata processor watching every pod (a gateway's view):
the CPU profd spends while K8S_METADATA_PODS pods change 50 times a second
(100 pods added, 20 ms apart), its index of them changed a pod at a
time.

There is no reference tool here: Debian's prometheus package is built
without kubernetes_sd_configs (its Kubernetes client is not packaged).
"""
import os
import statistics
import sys
import tempfile
import time

from proc_stats import cpu_seconds, memory_kib

CONFIG = """
receivers:
  pprof_scrape:
    scrape_configs:
      - job_name: pods
        scrape_interval: 1h
        kubernetes_sd_configs: [{role: %(role)s, api_server: "%(url)s", bearer_token_file: ./token}]
        profiling_config: {presets: [process_cpu, memory, goroutine, mutex, block]}
        relabel_configs:
          - {source_labels: [__meta_kubernetes_pod_annotation_profiles_grafana_com_cpu_scrape],
             regex: "true", action: keep}
          - {source_labels: [%(port_label)s], regex: pprof, action: keep}
          - {action: labelmap, regex: __meta_kubernetes_pod_label_(.+)}
          - {source_labels: [__meta_kubernetes_namespace], target_label: namespace}
          - {source_labels: [__meta_kubernetes_pod_name], target_label: pod}
exporters:
  nop: {}
service:
  pipelines:
    profiles: {receivers: [pprof_scrape], exporters: [nop]}
"""

PRESETS = 5


def pod(i):
    """A deployment's pod: an app with http and pprof ports, a sidecar."""
    return {"metadata": {"name": "web-%d" % i, "namespace": "ns%d" % (i % NAMESPACES),
                         "uid": "uid-%d" % i,
                         "labels": {"app": "app%d" % (i % 50), "app.kubernetes.io/name": "web",
                                    "pod-template-hash": "h%d" % (i % 300)},
                         "annotations": {"profiles.grafana.com/cpu.scrape": "true",
                                         "kubectl.kubernetes.io/restartedAt": "2026-11-26",
                                         "checksum/config": "c%d" % i},
                         "ownerReferences": [{"kind": "ReplicaSet", "name": "rs%d" % (i % 300),
                                              "controller": True}]},
            "spec": {"nodeName": "node-%d" % (i % 20), "containers": [
                {"name": "app", "image": "shop/web:2",
                 "ports": [{"name": "http", "containerPort": 8080},
                           {"name": "pprof", "containerPort": 1}]},
                {"name": "sidecar", "image": "envoy:1.28",
                 "ports": [{"name": "admin", "containerPort": 15090}]}]},
            "status": {"phase": "Running", "hostIP": "192.168.0.%d" % (i % 20),
                       "podIP": "127.%d.%d.%d" % (i // 65536 % 256, i // 256 % 256, i % 256 or 1),
                       "conditions": [{"type": "Ready", "status": "True"}]}}


NAMESPACES = 40
SLICE_ENDPOINTS = 100

# The label naming a target's port, by role.
PORT_LABEL = {"pod": "__meta_kubernetes_pod_container_port_name",
              "endpointslice": "__meta_kubernetes_endpointslice_port_name"}


class Slices:
    """The EndpointSlices of each namespace's service (svc), as the
    EndpointSlice controller keeps them: pods added to the last slice of
    their namespace's until it holds SLICE_ENDPOINTS."""

    def __init__(self):
        self.by_namespace = {}   # namespace -> [slice, ...]

    def add(self, p):
        """Adds pod p's endpoint; (slice, whether the slice is new)."""
        ns = p["metadata"]["namespace"]
        slices = self.by_namespace.setdefault(ns, [])
        new = not slices or len(slices[-1]["endpoints"]) >= SLICE_ENDPOINTS
        if new:
            slices.append({"metadata": {"name": "svc-%d" % len(slices), "namespace": ns,
                                        "uid": "%s-slice-%d" % (ns, len(slices)),
                                        "labels": {"kubernetes.io/service-name": "svc"}},
                           "addressType": "IPv4",
                           "ports": [{"name": "pprof", "port": 1, "protocol": "TCP"}],
                           "endpoints": []})
        slices[-1]["endpoints"].append(
            {"addresses": [p["status"]["podIP"]], "conditions": {"ready": True},
             "nodeName": p["spec"]["nodeName"],
             "targetRef": {"kind": "Pod", "name": p["metadata"]["name"], "namespace": ns}})
        return slices[-1], new

    def all(self):
        return [s for slices in self.by_namespace.values() for s in slices]


def service(i):
    return {"metadata": {"name": "svc", "namespace": "ns%d" % i, "uid": "svc-%d" % i,
                         "labels": {"app": "web"}}}


def one_run(root, role, n):
    """(start -> pairs, quiet add -> pairs, busy add -> pairs, CPU a change)."""
    sys.path.insert(0, os.path.join(root, "tests", "integration"))
    from harness import KubernetesApi, Profd
    pods, slices = [pod(i) for i in range(n)], Slices()
    for p in pods:
        slices.add(p)
    if role == "pod":
        api = KubernetesApi(pods, "t")
    else:
        api = KubernetesApi(pods, "t", services=[service(i) for i in range(NAMESPACES)],
                            endpointslices=slices.all())

    def add(p):
        """Pod p added, and with role endpointslice its endpoint."""
        api.add(p)
        if role != "pod":
            changed, new = slices.add(p)
            (api.add_object if new else api.modify_object)("endpointslices", changed)
    work = tempfile.mkdtemp(prefix="profd-k8s-bench-")
    with open(os.path.join(work, "token"), "w") as f:
        f.write("t")
    start = time.monotonic()
    p = Profd(work, CONFIG % {"role": role, "url": api.url, "port_label": PORT_LABEL[role]},
              log_level="info")
    try:
        p.wait_log(r"\b%d scrape target" % (n * PRESETS), deadline=300)
        first = time.monotonic() - start
        time.sleep(5 * first + 0.5)   # quiet: past the spacing of the first build
        cpu = cpu_seconds(p.proc.pid)
        mark, t = p.mark(), time.monotonic()
        add(pod(n))
        p.wait_log(r"\b%d scrape target" % ((n + 1) * PRESETS), start=mark, deadline=300)
        quiet = time.monotonic() - t
        change_cpu = cpu_seconds(p.proc.pid) - cpu
        mark, t = p.mark(), time.monotonic()
        add(pod(n + 1))
        p.wait_log(r"\b%d scrape target" % ((n + 2) * PRESETS), start=mark, deadline=300)
        busy = time.monotonic() - t
        return first, quiet, busy, change_cpu
    finally:
        p.stop()
        api.stop()


METADATA_CONFIG = """
receivers:
  pprof_file: {include: ["./spool/*.pb.gz"]}
processors:
  k8s_metadata: {api_server: "%s", bearer_token_file: ./token, pod_labels: true}
exporters:
  nop: {}
service:
  telemetry: {metrics: {address: "127.0.0.1:0"}}
  pipelines:
    profiles: {receivers: [pprof_file], processors: [k8s_metadata], exporters: [nop]}
"""


def metadata_run(root, n):
    """(seconds of 100 changes, profd's CPU over them, its peak RSS) for
    k8s_metadata."""
    sys.path.insert(0, os.path.join(root, "tests", "integration"))
    from harness import KubernetesApi, Profd, metric_value
    api = KubernetesApi([pod(i) for i in range(n)], "t")
    work = tempfile.mkdtemp(prefix="profd-k8s-bench-")
    os.makedirs(os.path.join(work, "spool"))
    with open(os.path.join(work, "token"), "w") as f:
        f.write("t")
    p = Profd(work, METADATA_CONFIG % api.url, log_level="info")

    def known(count):
        deadline = time.monotonic() + 300
        while metric_value(p.metrics(), "profd_k8s_metadata_pods",
                           component="k8s_metadata") != count:
            if time.monotonic() > deadline:
                raise AssertionError("k8s_metadata never knew %d pods" % count)
            time.sleep(0.05)
    try:
        known(n)
        cpu, start = cpu_seconds(p.proc.pid), time.monotonic()
        for i in range(100):
            api.add(pod(n + i))
            time.sleep(0.02)
        known(n + 100)
        return (time.monotonic() - start, cpu_seconds(p.proc.pid) - cpu,
                memory_kib(p.proc.pid, "VmHWM") / 1024)
    finally:
        p.stop()
        api.stop()


def k8s_bench(root, runs):
    print("| kubernetes_sd_configs | pairs | start -> pairs | a pod added, quiet | "
          "a pod added, busy | profd CPU a change |")
    print("|---|---|---|---|---|---|")
    for role in os.environ.get("K8S_ROLES", "pod endpointslice").split():
        for n in [int(x) for x in os.environ.get("K8S_PODS", "1000 3000").split()]:
            rows = [one_run(root, role, n) for _ in range(runs)]
            first, quiet, busy, cpu = (statistics.median(col) for col in zip(*rows))
            print("| role %s, %d pods | %d | %.2f s | %.2f s | %.2f s | %.2f s |" % (
                role, n, n * PRESETS, first, quiet, busy, cpu))
    print()
    print("| k8s_metadata, every pod watched | 100 pods added 20 ms apart | profd CPU | "
          "of a CPU | profd peak RSS |")
    print("|---|---|---|---|---|")
    for n in [int(x) for x in os.environ.get("K8S_METADATA_PODS", "10000").split()]:
        rows = [metadata_run(root, n) for _ in range(runs)]
        wall, cpu, rss = (statistics.median(col) for col in zip(*rows))
        print("| %d pods | %.2f s | %.2f s | %.0f%% | %.0f MB |" % (
            n, wall, cpu, 100 * cpu / wall, rss))
