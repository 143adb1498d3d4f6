# SPDX-License-Identifier: Apache-2.0
"""Signals, reloads, the telemetry endpoint, and a leak check."""
import os
import shutil
import signal
import subprocess
import unittest
import urllib.error
import urllib.request

from harness import GO_CORPUS, ProfdTestCase, metric_value, valgrind, wait_until

CONFIG = """
receivers:
  pprof_file: {include: [./spool/*.pb.gz]}
exporters:
  pprof_file: {directory: %s, path_template: "{unix_nanos}-{__name__}.pb.gz"}
service:
  telemetry: {metrics: {address: "127.0.0.1:0"}}
  pipelines:
    profiles: {receivers: [pprof_file], exporters: [pprof_file]}
"""

# A command prefix running profd in a user namespace of its own that may
# make no inotify instance (inotify_init1 fails with EMFILE there).
NO_INOTIFY = ["unshare", "--user", "--map-root-user", "sh", "-c",
              'echo 0 > /proc/sys/user/max_inotify_instances && exec "$@"', "sh"]


class LifecycleTest(ProfdTestCase):

    def test_sighup_reload_keeps_old_graph_when_new_is_broken(self):
        p = self.start(CONFIG % "./first")
        self.spool("a.pb.gz", src=os.path.join(GO_CORPUS, "cpu.pb.gz"))
        p.wait_log(r"wrote \./first/")
        with open(p.config, "w") as f:
            f.write(CONFIG.replace("pprof_file: {include", "pprof_file: {bogus: 1, include")
                    % "./second")
        mark = p.mark()
        p.send(signal.SIGHUP)
        p.wait_log(r"unknown key 'bogus' in receivers\.pprof_file", start=mark)
        p.wait_log(r"reload failed; the running configuration stays in place", start=mark)
        self.spool("b.pb.gz", src=os.path.join(GO_CORPUS, "heap.pb.gz"))
        p.wait_log(r"wrote \./first/", count=2)
        with open(p.config, "w") as f:
            f.write(CONFIG % "./second")
        mark = p.mark()
        p.send(signal.SIGHUP)
        p.wait_log(r"reload done", start=mark)
        self.spool("c.pb.gz", src=os.path.join(GO_CORPUS, "goroutine.pb.gz"))
        p.wait_log(r"wrote \./second/", start=mark)
        m = p.metrics()
        self.assertEqual(metric_value(m, "profd_config_reloads_total", result="failure"), 1)
        self.assertEqual(metric_value(m, "profd_config_reloads_total", result="success"), 1)
        # Counters survive the reload: three files written by pprof_file in all
        # (counted once the batch that wrote the last one is done).
        wait_until(lambda: metric_value(p.metrics(), "profd_component_sent_records_total",
                                        kind="exporter", id="pprof_file") == 3, "three sent")
        self.assertEqual(p.stop(), 0)

    def test_status_shows_the_pipelines_and_each_component_and_follows_a_reload(self):
        """/status.json: the pipelines as the config draws them, each
        component with its state, the components it hands records to and its
        counters, an exporter's queue; /status the same as a page. A reload
        that adds a processor shows in both, with the reload counted."""
        import json
        p = self.start(CONFIG % "./out")
        self.spool("a.pb.gz", src=os.path.join(GO_CORPUS, "cpu.pb.gz"))
        p.wait_log(r"wrote \./out/")
        url = p.telemetry_url()

        def status():
            with urllib.request.urlopen(url + "/status.json", timeout=10) as r:
                self.assertEqual(r.headers["Content-Type"], "application/json")
                return json.loads(r.read())
        wait_until(lambda: status()["components"][1]["counters"]["sent_records"] == 1,
                   "the file counted sent")
        s = status()
        self.assertEqual(s["pipelines"], [{"name": "profiles", "receivers": ["pprof_file"],
                                           "processors": [], "exporters": ["pprof_file"]}])
        exporter = {"kind": "exporter", "id": "pprof_file"}
        self.assertEqual([(c["kind"], c["id"], c["state"], c["downstream"])
                          for c in s["components"]],
                         [("receiver", "pprof_file", "running", [exporter]),
                          ("exporter", "pprof_file", "running", [])])
        self.assertEqual(s["components"][0]["counters"]["accepted_records"], 1)
        self.assertEqual(s["components"][0]["listening"], [])   # a spool, no server
        self.assertEqual(s["components"][1]["queue"]["queue_records"], 0)
        self.assertEqual(s["config_file"], p.config)
        with open(p.config, "w") as f:
            f.write((CONFIG % "./out").replace(
                "exporters:", "processors:\n  relabel: {rules: []}\nexporters:", 1).replace(
                "exporters: [pprof_file]}", "processors: [relabel], exporters: [pprof_file]}"))
        mark = p.mark()
        p.send(signal.SIGHUP)
        p.wait_log(r"reload done", start=mark)
        s = status()
        self.assertEqual(s["reloads"], {"succeeded": 1, "failed": 0})
        self.assertEqual([(c["id"], c["downstream"]) for c in s["components"]],
                         [("pprof_file", [{"kind": "processor", "id": "relabel"}]),
                          ("relabel", [exporter]), ("pprof_file", [])])
        with urllib.request.urlopen(url + "/status", timeout=10) as r:
            self.assertEqual(r.headers["Content-Type"], "text/html; charset=utf-8")
            page = r.read().decode()
        self.assertIn('<li><b>profiles</b>: <a href="#c-receiver-pprof_file">pprof_file</a> '
                      '&rarr; <a href="#c-processor-relabel">relabel</a> &rarr; '
                      '<a href="#c-exporter-pprof_file">pprof_file</a></li>', page)
        self.assertIn('<tr id="c-exporter-pprof_file">', page)
        self.assertIn("reloads: 1 succeeded, 0 failed", page)
        self.assertEqual(p.stop(), 0)

    def test_sigterm_loses_no_file(self):
        # A slow exporter (fsync on every file) and many files: SIGTERM arrives
        # mid-stream. Every file must be either still in the spool or written.
        n = 60
        os.makedirs(self.path("spool"))
        src = os.path.join(GO_CORPUS, "allocs.pb.gz")
        for i in range(n):
            shutil.copyfile(src, self.path("spool", "f%03d.pb.gz" % i))
        p = self.start(CONFIG.replace("path_template", "fsync: true, path_template") % "./out")
        p.wait_log(r"wrote \./out/")
        self.assertEqual(p.stop(signal.SIGTERM), 0)
        left = [f for f in os.listdir(self.path("spool")) if f.endswith(".pb.gz")]
        written = self.outputs("out")
        self.assertEqual(len(left) + len(written), n,
                         "left %d + written %d != %d\n%s" % (len(left), len(written), n, p.log_text()))

    def test_sigint_exits_zero_and_healthz_answers(self):
        p = self.start(CONFIG % "./out")
        url = p.telemetry_url()
        with urllib.request.urlopen(url + "/healthz", timeout=10) as r:
            self.assertEqual(r.read(), b"ok\n")
        with self.assertRaises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(url + "/nope", timeout=10)
        self.assertEqual(e.exception.code, 404)
        m = p.metrics()
        self.assertIn("# TYPE profd_component_accepted_records_total counter", m)
        self.assertEqual(metric_value(m, "profd_exporter_queue_bytes", id="pprof_file"), 0)
        self.assertEqual(p.stop(signal.SIGINT), 0)

    def test_default_config_runs_from_the_working_directory(self):
        # The embedded config: ./spool -> ./profiles, telemetry on 127.0.0.1:8888.
        # Another process may hold 8888 on a shared machine; then profd says so.
        p = self.start(None)
        self.spool("x.pb.gz", src=os.path.join(GO_CORPUS, "cpu.pb.gz"))
        try:
            p.wait_log(r"pprof_file: wrote \./profiles/process_cpu/unknown_service/")
        except AssertionError:
            if "cannot listen on 127.0.0.1:8888" in p.log_text():
                self.skipTest("port 8888 is taken on this machine")
            raise
        p.wait_log(r"info  pprof_file: reading \./spool/\*\.pb\.gz, \./spool/\*\.pb$")
        p.wait_log(r"info  pprof_file: writing "
                   r"\./profiles/\{__name__\}/\{service_name\}/\{time\}\.pb\.gz$")
        self.assertEqual(p.stop(), 0)

    def test_a_spool_made_after_start_is_said_missing_and_then_read(self):
        # With inotify, even without polling: the directory is watched once made.
        for poll in ("0s", "50ms"):
            shutil.rmtree(self.path("later"), ignore_errors=True)
            p = self.start(CONFIG.replace("./spool/*.pb.gz]", "./later/*.pb.gz, ./later/*.pb], "
                                          "poll_interval: " + poll) % "./out")
            p.wait_log(r"info  pprof_file: \./later does not exist yet: its files are read once "
                       r"it does")
            self.spool("x.pb.gz", src=os.path.join(GO_CORPUS, "cpu.pb.gz"), spool_dir="later")
            p.wait_log(r"wrote \./out/")
            self.assertEqual(p.stop(), 0)
            said = [l for l in p.log_text().splitlines() if "does not exist" in l]
            self.assertEqual(len(said), 1, said)   # once for the directory of both patterns

    @unittest.skipUnless(subprocess.run(NO_INOTIFY + ["true"]).returncode == 0,
                         "no user namespace to run profd without inotify in")
    def test_without_inotify_files_are_polled_for_and_missing_directories_said(self):
        p = self.start(CONFIG.replace("./spool/*.pb.gz]", "./later/*.pb.gz], "
                                      "poll_interval: 0s") % "./out", wrapper=NO_INOTIFY)
        p.wait_log(r"warn  pprof_file: \./later does not exist, and without inotify and with "
                   r"poll_interval 0 nothing will be read from it$")
        self.assertEqual(p.stop(), 0)
        p = self.start(CONFIG.replace("./spool/*.pb.gz]", "./later/*.pb.gz], "
                                      "poll_interval: 50ms") % "./out", wrapper=NO_INOTIFY)
        p.wait_log(r"info  pprof_file: inotify: Too many open files: new files are found by "
                   r"polling alone$")
        p.wait_log(r"info  pprof_file: \./later does not exist yet")
        self.spool("x.pb.gz", src=os.path.join(GO_CORPUS, "cpu.pb.gz"), spool_dir="later")
        p.wait_log(r"wrote \./out/")
        self.assertEqual(p.stop(), 0)

    @unittest.skipUnless(shutil.which("valgrind") and not os.environ.get("PROFD_SANITIZED"),
                         "valgrind not installed, or a sanitizer build")
    def test_valgrind_run_and_shutdown_has_no_leaks(self):
        self.spool("a.pb.gz", src=os.path.join(GO_CORPUS, "heap.pb.gz"))
        p = self.start(CONFIG % "./out", wrapper=valgrind(self.path("vg.log")))
        p.wait_log(r"wrote \./out/", deadline=120)
        self.spool("b.pb.gz", src=os.path.join(GO_CORPUS, "cpu.pb.gz"))
        p.wait_log(r"wrote \./out/", count=2, deadline=120)
        rc = p.stop(timeout=120)
        log = open(self.path("vg.log")).read()
        self.assertEqual(rc, 0, log)
        self.assertIn("ERROR SUMMARY: 0 errors", log)
