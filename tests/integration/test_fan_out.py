# SPDX-License-Identifier: Apache-2.0
"""A push that fans out to several exporters is taken by all of them or by
none: when one exporter's queue is full, the push is refused (429) and no
other exporter keeps a copy, so the client's retry duplicates nothing. And
profd between agents and stores, fanning a spool out to both push exporters
into both push receivers, runs and stops under valgrind without an error or
a leak on either side."""
import os
import shutil
import threading
import unittest

from harness import (GO_CORPUS, Profd, ProfdTestCase, http_post, metric_value, raw_pprof,
                     valgrind, wait_until)
from test_pyroscope import INGEST_I, gated_backend, gated_config

# A Pyroscope gateway writing every push to files and to a backend that
# answers 503 until the test lets it through (gated_config): the third push
# finds the backend's queue full.
PIPELINES = "profiles: {receivers: [pyroscope], exporters: [pyroscope, pprof_file]}"

HEAP = open(os.path.join(GO_CORPUS, "heap.pb.gz"), "rb").read()

# The store side: each push receiver writes what it takes into a directory
# of its own.
STORES = """
receivers:
  pyroscope: {endpoint: "127.0.0.1:0"}
  parca: {endpoint: "127.0.0.1:0"}
exporters:
  pprof_file/pyroscope: {directory: ./pyroscope, path_template: "{__file__}"}
  pprof_file/parca: {directory: ./parca, path_template: "{__file__}"}
service:
  telemetry: {metrics: {address: ""}}
  pipelines:
    profiles/pyroscope: {receivers: [pyroscope], exporters: [pprof_file/pyroscope]}
    profiles/parca: {receivers: [parca], exporters: [pprof_file/parca]}
"""

# The agent side: a spool fanned out to push.v1 and to WriteRaw (gRPC).
AGENT = """
receivers:
  pprof_file: {include: ["%(spool)s/*.pb.gz"], after_ingest: keep, source_label: __file__}
exporters:
  pyroscope: {endpoint: "http://%(pyroscope)s", api: push}
  parca: {endpoint: "%(parca)s"}
service:
  telemetry: {metrics: {address: ""}}
  pipelines:
    profiles: {receivers: [pprof_file], exporters: [pyroscope, parca]}
"""

GATEWAY_PROFILES = ("heap.pb.gz", "goroutine.pb.gz", "cpu.pb.gz")


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

    @unittest.skipUnless(shutil.which("valgrind") and not os.environ.get("PROFD_SANITIZED"),
                         "valgrind not installed, or a sanitizer build")
    def test_valgrind_both_push_protocols_profd_to_profd_have_no_leaks(self):
        stores = self.start(STORES, wrapper=valgrind(self.path("stores.log")))
        os.makedirs(self.path("spool"))
        for name in GATEWAY_PROFILES:
            shutil.copyfile(os.path.join(GO_CORPUS, name), self.path("spool", name))
        os.makedirs(self.path("agent"))
        agent = Profd(self.path("agent"), AGENT % {
            "spool": self.path("spool"),
            "pyroscope": stores.listening("Pyroscope ingest and push.v1 (HTTP/1.1, HTTP/2, gRPC)"),
            "parca": stores.listening("Parca WriteRaw (gRPC, and the gateway's JSON)")},
            wrapper=valgrind(self.path("agent.log")))
        self.procs.append(agent)
        outs = [self.path(store, name) for store in ("pyroscope", "parca")
                for name in GATEWAY_PROFILES]
        wait_until(lambda: all(os.path.exists(o) for o in outs), "every profile through both",
                   deadline=120)
        for out in outs:
            self.assertEqual(raw_pprof(out), raw_pprof(self.path("spool", os.path.basename(out))),
                             out)
        for p, log in ((agent, "agent.log"), (stores, "stores.log")):
            rc = p.stop(timeout=120)
            report = open(self.path(log)).read()
            self.assertEqual(rc, 0, report)
            self.assertIn("ERROR SUMMARY: 0 errors", report)
