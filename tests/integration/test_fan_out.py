# SPDX-License-Identifier: Apache-2.0
"""A push that fans out to several exporters is taken by all of them or by
none: when one exporter's queue is full, the push is refused (429) and no
other exporter keeps a copy, so the client's retry duplicates nothing."""
import os
import threading

from harness import GO_CORPUS, ProfdTestCase, http_post, metric_value, wait_until
from test_pyroscope import INGEST_I, gated_backend, gated_config

# A Pyroscope gateway writing every push to files and to a backend that
# answers 503 until the test lets it through (gated_config): the third push
# finds the backend's queue full.
PIPELINES = "profiles: {receivers: [pyroscope], exporters: [pyroscope, pprof_file]}"

HEAP = open(os.path.join(GO_CORPUS, "heap.pb.gz"), "rb").read()


class FanOutTest(ProfdTestCase):

    def test_a_push_one_exporter_refuses_is_kept_by_none(self):
        backend, taken, lock = {"status": 503}, [], threading.Lock()

        def take(series):
            taken.extend({l.name: l.value for l in sr.labels}["i"] for sr in series)
        p = self.start(gated_config(self.serve_http(gated_backend(backend, lock, take)), "100ms",
                                    PIPELINES, telemetry='{metrics: {address: "127.0.0.1:0"}}'))
        push = p.listening("pyroscope: Pyroscope ingest and push.v1 (HTTP/1.1, HTTP/2, gRPC)")
        for i in (1, 2):
            self.assertEqual(http_post(INGEST_I % (push, i), HEAP)[0], 200)
        status, body = http_post(INGEST_I % (push, 3), HEAP)
        self.assertEqual(status, 429, body)
        # Counted where it was refused, and taken in nowhere.
        m = p.metrics()
        for exporter, retry_later, accepted in (("pyroscope", 1, 2), ("pprof_file", 0, 2)):
            self.assertEqual(metric_value(m, "profd_component_retry_later_records_total",
                                          kind="exporter", id=exporter), retry_later)
            self.assertEqual(metric_value(m, "profd_component_accepted_records_total",
                                          kind="exporter", id=exporter), accepted)
        self.assertEqual(metric_value(m, "profd_component_accepted_records_total",
                                      kind="receiver", id="pyroscope"), 2)
        for i in (1, 2):
            wait_until(lambda: os.path.exists(self.path("profiles", "app", "%d.pb.gz" % i)),
                       "the file of push %d" % i)
        with lock:
            backend["status"] = 200
        # The client's retry, until the backend's queue has room again.
        wait_until(lambda: http_post(INGEST_I % (push, 3), HEAP)[0] == 200, "push 3 taken")
        wait_until(lambda: len(taken) >= 3, "every push at the backend")
        self.assertEqual(p.stop(), 0)
        self.assertEqual(sorted(taken), ["1", "2", "3"])
        self.assertEqual(sorted(os.listdir(self.path("profiles", "app"))),
                         ["1.pb.gz", "2.pb.gz", "3.pb.gz"])
