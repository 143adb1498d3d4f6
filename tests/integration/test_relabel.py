# SPDX-License-Identifier: Apache-2.0
"""The relabel processor in a running pipeline, on real Go profiles."""
import os

from harness import GO_CORPUS, ProfdTestCase, Target, metric_value, wait_until
from test_pipeline import go_raw

CONFIG = r"""
receivers:
  pprof_file:
    include: [./spool/*.pb.gz]
    filename_pattern: '(?<env>[a-z]+)-(?<service_name>[a-z]+)\.pb\.gz'
processors:
  relabel/drop_test:
    rules: [{source_labels: [env], regex: test, action: drop}]
  relabel/samples:
    sample_labels: true
    rules:
      - {source_labels: [tenant], regex: b, action: drop}
      - {source_labels: [route], target_label: path}
      - {regex: route, action: labeldrop}
  relabel/series:
    rules:
      - {source_labels: [service_name], target_label: app, replacement: 'svc-$1'}
      - {regex: env, action: labeldrop}
exporters:
  pprof_file: {path_template: "{app}/{__name__}.pb.gz"}
service:
  telemetry: {metrics: {address: "127.0.0.1:0"}}
  pipelines:
    profiles:
      receivers: [pprof_file]
      processors: [relabel/drop_test, relabel/samples, relabel/series]
      exporters: [pprof_file]
"""


class RelabelTest(ProfdTestCase):

    def test_series_and_sample_labels(self):
        target = Target()
        try:
            cpu = target.fetch("/debug/pprof/profile?seconds=1")
        finally:
            target.stop()
        raw = self.path("labeled.pb.gz")
        with open(raw, "wb") as f:
            f.write(cpu)
        before = go_raw(raw)
        self.assertIn("tenant:[b]", before)   # the producer labeled both tenants
        p = self.start(CONFIG)
        self.spool("test-shop.pb.gz", data=cpu)
        self.spool("dev-shop.pb.gz", data=cpu)
        p.wait_log(r"pprof_file: wrote \./profiles/svc-shop/process_cpu\.pb\.gz")
        wait_until(lambda: not [f for f in os.listdir(self.path("spool")) if f.endswith(".gz")],
                   "both files consumed (the dropped one too)")
        out = self.outputs()
        self.assertEqual([os.path.relpath(f, self.dir) for f in out],
                         ["profiles/svc-shop/process_cpu.pb.gz"])
        after = go_raw(out[0])
        self.assertIn("path:[/a]", after)
        self.assertIn("tenant:[a]", after)
        self.assertNotIn("tenant:[b]", after)
        self.assertNotIn("route:", after)
        m = p.metrics()
        self.assertEqual(metric_value(m, "profd_component_dropped_records_total",
                                      kind="processor", id="relabel/drop_test"), 1)
        self.assertEqual(p.stop(), 0)

    def test_series_relabel_leaves_the_bytes_alone(self):
        p = self.start(CONFIG.replace("sample_labels: true", "sample_labels: false"))
        self.spool("dev-shop.pb.gz", src=os.path.join(GO_CORPUS, "heap.pb.gz"))
        p.wait_log(r"pprof_file: wrote ")
        with open(self.outputs()[0], "rb") as f, open(os.path.join(GO_CORPUS, "heap.pb.gz"), "rb") as g:
            self.assertEqual(f.read(), g.read())
        self.assertEqual(p.stop(), 0)
