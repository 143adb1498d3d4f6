# SPDX-License-Identifier: Apache-2.0
"""Receivers that read at their own pace (pprof_file, perf_data,
pprof_scrape) wait for room in a full queue on their own thread: the event
loop every server shares goes on answering pushes meanwhile, and what they
read still arrives, all of it, once the backend takes profiles again."""
import os
import re
import signal
import threading
import time

from harness import CORPUS, GO_CORPUS, FakeTarget, ProfdTestCase, http_post, wait_until
from test_pyroscope import INGEST_I, gated_backend, gated_config

# The receiver under test feeds an exporter whose backend answers 503
# until the test lets it through (gated_config): its third batch waits for
# room. A Pyroscope receiver feeds files beside it.
PIPELINES = """profiles/own_pace: {receivers: [%s], exporters: [pyroscope]}
    profiles/push: {receivers: [pyroscope], exporters: [pprof_file]}"""

HEAP = os.path.join(GO_CORPUS, "heap.pb.gz")


class OwnPaceTest(ProfdTestCase):

    def run_blocked(self, receiver, name, while_blocked=lambda p: None):
        """Starts profd with receiver (its config line; name its id), waits
        until its pipeline's queue is full and a batch of it waits for room,
        checks that a push to the other receiver is answered and written
        meanwhile, calls while_blocked(profd), then lets the backend
        through. Returns (profd, the list of the label dicts of the series
        the backend took, its lock)."""
        backend, taken, lock = {"status": 503}, [], threading.Lock()

        def take(series):
            taken.extend({l.name: l.value for l in sr.labels} for sr in series)
        backend_port = self.serve_http(gated_backend(backend, lock, take))
        p = self.start(gated_config(backend_port, "60s", PIPELINES % name, receivers=receiver,
                                    telemetry='{metrics: {address: ""}, logs: {level: debug}}'))
        push = p.listening("pyroscope: Pyroscope ingest and push.v1 (HTTP/1.1, HTTP/2, gRPC)")
        p.wait_log(r"pyroscope: queue full: a batch of \d+ bytes waits for room")
        t0 = time.monotonic()
        status = http_post(INGEST_I % (push, 7), open(HEAP, "rb").read())[0]
        self.assertEqual(status, 200)
        self.assertLess(time.monotonic() - t0, 10)   # not the 60 s block_timeout
        wait_until(lambda: os.path.exists(self.path("profiles", "app", "7.pb.gz")),
                   "the pushed profile's file")
        while_blocked(p)
        with lock:
            self.assertEqual(taken, [])   # the backend has refused everything so far
            backend["status"] = 200
        return p, taken, lock

    def spool_through_blocked(self, while_blocked=lambda p: None):
        """run_blocked with pprof_file reading four spooled runtime
        profiles: each arrives exactly once and the spool empties."""
        names = ["heap", "allocs", "goroutine", "block"]
        for n in names:
            self.spool(n + ".pb.gz", src=os.path.join(GO_CORPUS, n + ".pb.gz"))
        p, taken, lock = self.run_blocked(
            'pprof_file: {include: ["%s/*.pb.gz"], source_label: file}' % self.path("spool"),
            "pprof_file", while_blocked)
        wait_until(lambda: not os.listdir(self.path("spool")), "every spooled file taken")
        self.assertEqual(p.stop(), 0)
        with lock:
            self.assertEqual(sorted(s["file"] for s in taken),
                             sorted(n + ".pb.gz" for n in names))

    def test_pprof_file_waits_on_its_own_thread(self):
        self.spool_through_blocked()

    def test_a_reload_while_a_receiver_waits_loses_no_file(self):
        """SIGHUP while pprof_file's thread waits for room: the wait ends at
        once (retry later), the old pipelines stop within shutdown_timeout,
        not block_timeout, and the files the backend never took stay and
        are read again by the new ones: each arrives once it takes them."""
        def reload(p):
            t0, mark = time.monotonic(), p.mark()
            p.send(signal.SIGHUP)
            p.wait_log(r"reload done", start=mark)
            self.assertLess(time.monotonic() - t0, 15)   # not the 60 s block_timeout
            p.wait_log(r"pyroscope: queue full: a batch of \d+ bytes waits for room",
                       start=mark)
        self.spool_through_blocked(reload)

    def test_perf_data_waits_on_its_own_thread(self):
        files = [os.path.join(CORPUS, "perf", f)
                 for f in ("burn.fp.data", "sysc.data", "mt.data", "burn.2events.data")]
        p, taken, lock = self.run_blocked(
            "perf_data: {include: [%s]}" % ", ".join('"%s"' % f for f in files), "perf_data")
        made = {}
        for line in p.wait_log(r"perf_data: (\S+): \d+ samples, (\d+) profiles", count=len(files)):
            m = re.search(r"perf_data: (\S+): \d+ samples, (\d+) profiles", line)
            made[m.group(1)] = int(m.group(2))
        self.assertEqual(sorted(made), sorted(files))
        wait_until(lambda: len(taken) >= sum(made.values()), "every profile at the backend")
        self.assertEqual(p.stop(), 0)
        self.assertEqual(len(taken), sum(made.values()))

    def test_pprof_scrape_waits_on_its_own_thread(self):
        target = FakeTarget()
        self.addCleanup(target.stop)
        goroutine = open(os.path.join(GO_CORPUS, "goroutine.pb.gz"), "rb").read()
        target.set("/debug/pprof/goroutine", (200, goroutine))
        p, taken, lock = self.run_blocked(
            "pprof_scrape: {scrape_configs: [{job_name: t, scrape_interval: 1s, "
            "static_configs: [{targets: [\"%s\"]}], profiling_config: {presets: [goroutine]}}]}"
            % target.address, "pprof_scrape",
            # While one scrape's profile waits, the target's next scrapes
            # are skipped, not piled up behind it.
            lambda p: p.wait_log(r"previous scrape still running"))
        wait_until(lambda: len(taken) >= 3, "scrapes at the backend")
        self.assertEqual(p.stop(), 0)
        with lock:
            self.assertEqual({s.get("job") for s in taken}, {"t"})
