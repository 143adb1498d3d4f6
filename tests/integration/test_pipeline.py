# SPDX-License-Identifier: Apache-2.0
"""Files in, files out, through the real binary and its modules."""
import os
import shutil
import socket
import subprocess
import sys

from harness import (GO_CORPUS, ProfdTestCase, corpus_files, exported_counts, http_post,
                     metric_value, push_series, wait_until)

PIPE = """
receivers:
  pprof_file:
    include: [./spool/*.pb.gz, ./spool/*.pb]
    labels: {env: test}
exporters:
%s
service:
  telemetry: {metrics: {address: "127.0.0.1:0"}}
  pipelines:
    profiles:
      receivers: [pprof_file]
      exporters: [%s]
"""

PUSHED = """
receivers:
  pyroscope: {endpoint: "127.0.0.1:0"}
exporters:
  pprof_file:   # written as pushed: no wait for a burst
    path_template: "{service_name}/{unix_nanos}.pb.gz"
    sending_queue: {flush_timeout: 0s}
service:
  telemetry: {metrics: {address: "127.0.0.1:0"}}
  pipelines:
    profiles: {receivers: [pyroscope], exporters: [pprof_file]}
"""

# Two queues towards a backend that refuses every connection: one of the
# profiles as pushed, one of the profiles decoded (their samples relabeled).
HELD = """
receivers:
  pyroscope: {endpoint: "127.0.0.1:0"}
processors:
  relabel/samples:
    sample_labels: true
    rules: [{regex: no_such_label, action: labeldrop}]
exporters:
  otlp/as_pushed: &down
    endpoint: "127.0.0.1:%d"
    sending_queue: {flush_timeout: 0s, num_consumers: 1}
    retry_on_failure: {initial_interval: 60s, max_interval: 60s}
    shutdown_timeout: 100ms   # what waits is given up at the stop
  otlp/decoded: *down
service:
  telemetry: {metrics: {address: "127.0.0.1:0"}}
  pipelines:
    profiles/as_pushed: {receivers: [pyroscope], exporters: [otlp/as_pushed]}
    profiles/decoded:
      receivers: [pyroscope]
      processors: [relabel/samples]
      exporters: [otlp/decoded]
"""

# Exits 0 when linkat(fd, "", AT_EMPTY_PATH) links an O_TMPFILE in argv[1].
LINK_EMPTY_PATH = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open(sys.argv[1], os.O_TMPFILE | os.O_WRONLY, 0o644)
name = os.path.join(sys.argv[1], "probe").encode()
ok = libc.linkat(fd, b"", -100, name, 0x1000) == 0   # AT_FDCWD, AT_EMPTY_PATH
if ok:
    os.unlink(name)
sys.exit(0 if ok else 1)
"""


def config(exporters):
    body = "".join("  %s: {%s}\n" % (eid, opts) for eid, opts in exporters)
    return PIPE % (body, ", ".join(eid for eid, _ in exporters))


def go_raw(path):
    out = subprocess.run(["go", "tool", "pprof", "-raw", path], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


class PipelineTest(ProfdTestCase):

    def test_corpus_passes_through_byte_identical(self):
        p = self.start(config([("pprof_file", 'directory: ./profiles, '
                                 'path_template: "{__file__}{env}/{__name__}-{time}.pb.gz"')]))
        files = corpus_files()
        for name in files:
            self.spool(name, src=os.path.join(GO_CORPUS, name))
        p.wait_log(r"pprof_file: wrote ", count=len(files))
        outputs = self.outputs()
        self.assertEqual(len(outputs), len(files))
        originals = {open(os.path.join(GO_CORPUS, n), "rb").read() for n in files}
        for out in outputs:
            self.assertIn("/unknowntest/", out)    # {__file__} absent, {env} from config
            with open(out, "rb") as f:
                self.assertIn(f.read(), originals, out)
        wait_until(lambda: not [f for f in os.listdir(self.path("spool")) if not f.startswith(".")],
                   "the spool to be emptied after ingest")
        self.assertEqual(p.stop(), 0)

    def test_one_name_for_all_gets_suffixes_or_is_overwritten_leaving_no_temp_files(self):
        self.check_suffixes_and_overwrite()

    def test_without_cap_dac_read_search_files_are_linked_by_their_proc_name(self):
        """linkat(AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH; without it the
        exporter links /proc/self/fd/N instead, with the same results."""
        if os.geteuid() != 0 or not shutil.which("setpriv"):
            self.skipTest("needs root and setpriv to drop one capability")
        drop = ["setpriv", "--inh-caps=-dac_read_search", "--bounding-set=-dac_read_search"]
        if subprocess.run(drop + [sys.executable, "-c", LINK_EMPTY_PATH, self.path()]).returncode == 0:
            self.skipTest("this kernel links an O_TMPFILE by its descriptor without the capability")
        self.check_suffixes_and_overwrite(wrapper=drop)

    def check_suffixes_and_overwrite(self, wrapper=()):
        p = self.start(config([("pprof_file/keep", "directory: ./keep, path_template: same.pb.gz"),
                               ("pprof_file/over", "directory: ./over, path_template: same.pb.gz, "
                                                   "overwrite: true")]), wrapper=wrapper)
        files = corpus_files()
        for name in files:
            self.spool(name, src=os.path.join(GO_CORPUS, name))
        p.wait_log(r"pprof_file/keep: wrote ", count=len(files))
        p.wait_log(r"pprof_file/over: wrote ", count=len(files))
        self.assertEqual(p.stop(), 0)
        originals = sorted(open(os.path.join(GO_CORPUS, n), "rb").read() for n in files)
        kept = sorted(os.listdir(self.path("keep")))   # hidden temporary files included
        self.assertEqual(kept, sorted(["same.pb.gz"] + ["same-%d.pb.gz" % i
                                                         for i in range(1, len(files))]))
        self.assertEqual(sorted(open(self.path("keep", k), "rb").read() for k in kept), originals)
        self.assertEqual(os.listdir(self.path("over")), ["same.pb.gz"])
        self.assertIn(open(self.path("over", "same.pb.gz"), "rb").read(), originals)

    def test_a_name_found_taken_goes_straight_to_a_suffix(self):
        """Once a name was found taken, the next profile of that name is given
        a suffix without trying the name: one freed meanwhile stays free."""
        p = self.start(config([("pprof_file", "directory: ./out, path_template: same.pb.gz")]))
        for i, name in enumerate(["cpu.pb.gz", "heap.pb.gz"]):
            self.spool(name, src=os.path.join(GO_CORPUS, name))
            p.wait_log(r"pprof_file: wrote ", count=i + 1)
        self.assertEqual(sorted(os.listdir(self.path("out"))), ["same-1.pb.gz", "same.pb.gz"])
        os.unlink(self.path("out", "same.pb.gz"))
        self.spool("mutex.pb.gz", src=os.path.join(GO_CORPUS, "mutex.pb.gz"))
        p.wait_log(r"pprof_file: wrote ", count=3)
        self.assertEqual(p.stop(), 0)
        self.assertEqual(sorted(os.listdir(self.path("out"))), ["same-1.pb.gz", "same-2.pb.gz"])
        with open(self.path("out", "same-2.pb.gz"), "rb") as f:
            self.assertEqual(f.read(), open(os.path.join(GO_CORPUS, "mutex.pb.gz"), "rb").read())

    def test_a_directory_removed_while_running_is_made_again(self):
        """The exporter keeps its directories open between files; one removed
        meanwhile is found gone and made again at once (pushes, so that the
        second file comes while the first's directory is still held open),
        and no file is lost."""
        p = self.start(PUSHED)
        url = "http://%s/ingest?format=folded&name=" % p.listening(
            "Pyroscope ingest and push.v1 (HTTP/1.1, HTTP/2, gRPC)")
        self.assertEqual(http_post(url + "app.cpu", b"main;work 1\n")[0], 200)
        p.wait_log(r"pprof_file: wrote ")
        shutil.rmtree(self.path("profiles"))
        self.assertEqual(http_post(url + "app.cpu", b"main;rest 2\n")[0], 200)
        p.wait_log(r"pprof_file: wrote ", count=2)
        self.assertNotIn("cannot write", p.log_text())   # made again at once, not retried
        self.assertNotIn("named temporary files from now on", p.log_text())
        self.assertEqual(len(self.outputs()), 1, self.outputs())
        self.assertEqual(p.stop(), 0)

    def test_a_retry_writes_only_the_files_not_yet_written(self):
        """A batch of three records whose second cannot be written (a plain
        file where its directory goes) is retried from that record once the
        way is clear: the first is not written a second time (a -1 twin)."""
        os.makedirs(self.path("profiles"))
        open(self.path("profiles", "b"), "w").close()
        p, ingest = self.start_pushes_into(
            'pprof_file: {directory: ./profiles, path_template: "{f}/p.pb.gz", '
            'retry_on_failure: {initial_interval: 50ms, max_interval: 50ms}}')
        push_series(ingest, "f", ["a", "b", "c"])
        p.wait_log(r"cannot write .*/b/p.pb.gz")
        os.remove(self.path("profiles", "b"))
        p.wait_log(r"pprof_file: wrote .*/c/p.pb.gz")
        self.assertEqual(p.stop(), 0)
        self.assertEqual([os.path.relpath(f, self.path("profiles")) for f in self.outputs()],
                         ["a/p.pb.gz", "b/p.pb.gz", "c/p.pb.gz"])

    def test_a_name_too_long_for_the_file_system_is_refused_alone(self):
        """A long label is cut, with a hash of it, so its file is written;
        a template whose name cannot fit whatever is cut (three labels in
        one name) refuses that record alone, at once: the next is written
        without a retry, and the refusal is counted."""
        p, ingest = self.start_pushes_into(
            'pprof_file: {directory: ./profiles, path_template: "{f}{f}{f}.pb.gz", '
            'retry_on_failure: {initial_interval: 60s, max_interval: 60s}}')
        push_series(ingest, "f", ["x" * 300, "short"])
        p.wait_log(r"pprof_file: wrote .*/shortshortshort.pb.gz")
        p.wait_log(r"File name too long \(the template's name is too long for this "
                   r"profile's labels; the profile is refused\)")
        wait_until(lambda: exported_counts(p, "pprof_file") == [1, 1], "one sent, one failed")
        self.assertEqual(p.stop(), 0)
        self.assertEqual([os.path.basename(f) for f in self.outputs()], ["shortshortshort.pb.gz"])

    def test_reencoded_output_reads_the_same_in_go_pprof(self):
        p = self.start(config([("pprof_file", 'reencode: true, path_template: "{__name__}/{unix_nanos}.pb.gz"')]))
        files = corpus_files()
        for name in files:
            self.spool(name, src=os.path.join(GO_CORPUS, name))
        p.wait_log(r"pprof_file: wrote ", count=len(files))
        self.assertEqual(p.stop(), 0)
        want = sorted(go_raw(os.path.join(GO_CORPUS, n)) for n in files)
        got = sorted(go_raw(out) for out in self.outputs())
        self.assertEqual(len(got), len(want))
        for g, w in zip(got, want):
            self.assertEqual(g, w)

    def test_fan_out_to_two_exporters_and_debug(self):
        p = self.start(config([("pprof_file/a", "directory: ./out-a"),
                               ("pprof_file/b", "directory: ./out-b, compression: none, "
                                                'path_template: "{__name__}.pb"'),
                               ("debug", "verbosity: detailed")]))
        self.spool("cpu.pb.gz", src=os.path.join(GO_CORPUS, "cpu.pb.gz"))
        p.wait_log(r"pprof_file/a: wrote ")
        p.wait_log(r"pprof_file/b: wrote ")
        line = p.wait_log(r"debug: \{")[0]
        self.assertIn('__name__="process_cpu"', line)
        self.assertIn("cpu/nanoseconds total=", line)
        self.assertIn("top(cpu)=[", line)
        self.assertEqual(len(self.outputs("out-a")), 1)
        raw = self.outputs("out-b")
        self.assertEqual([os.path.basename(f) for f in raw], ["process_cpu.pb"])
        with open(raw[0], "rb") as f:
            self.assertNotEqual(f.read(2), b"\x1f\x8b")   # compression: none
        self.assertEqual(go_raw(raw[0]), go_raw(os.path.join(GO_CORPUS, "cpu.pb.gz")))
        # sent is counted once the exporter's batch is done, after the file
        wait_until(lambda: metric_value(p.metrics(), "profd_component_sent_records_total",
                                        kind="exporter", id="pprof_file/a") == 1, "one sent")
        self.assertEqual(metric_value(p.metrics(), "profd_component_accepted_records_total",
                                      kind="receiver", id="pprof_file"), 1)
        self.assertEqual(p.stop(), 0)

    def test_malformed_file_is_moved_aside_and_counted(self):
        p = self.start(config([("pprof_file", "")]))
        good = open(os.path.join(GO_CORPUS, "heap.pb.gz"), "rb").read()
        self.spool("broken.pb.gz", data=good[:len(good) // 2])
        self.spool("garbage.pb", data=b"\x0a\x05\x08\x01")
        p.wait_log(r"rejected \./spool/broken\.pb\.gz: gzip")
        p.wait_log(r"rejected \./spool/garbage\.pb: pprof: .* at byte \d+")
        self.spool("heap.pb.gz", data=good)       # the daemon keeps serving
        p.wait_log(r"pprof_file: wrote ")
        rejected = sorted(os.listdir(self.path("spool", "rejected")))
        self.assertEqual(rejected, ["broken.pb.gz", "broken.pb.gz.error", "garbage.pb",
                                    "garbage.pb.error"])
        with open(self.path("spool", "rejected", "garbage.pb.error")) as f:
            self.assertIn("length runs past the end of the message at byte", f.read())
        m = p.metrics()
        self.assertEqual(metric_value(m, "profd_component_refused_records_total",
                                      kind="receiver", id="pprof_file"), 2)
        self.assertEqual(p.stop(), 0)

    def test_after_ingest_move_and_labels_from_file_name(self):
        cfg = config([("pprof_file", 'path_template: "{service_name}/{kind}.pb.gz"')])
        cfg = cfg.replace("labels: {env: test}",
                          "labels: {env: test}\n    after_ingest: move\n    move_to: ../done\n"
                          "    filename_pattern: '(?<service_name>[a-z]+)-(?<kind>[a-z]+)\\.pb\\.gz'")
        p = self.start(cfg)
        self.spool("shop-heap.pb.gz", src=os.path.join(GO_CORPUS, "heap.pb.gz"))
        p.wait_log(r"pprof_file: wrote ")
        self.assertEqual([os.path.relpath(f, self.dir) for f in self.outputs()],
                         ["profiles/shop/heap.pb.gz"])
        wait_until(lambda: os.path.exists(self.path("done", "shop-heap.pb.gz")),
                   "the ingested file to be moved")
        self.assertEqual(p.stop(), 0)

    def test_retention_keeps_the_newest_files(self):
        p = self.start(config([("pprof_file", 'path_template: "{unix_nanos}.pb.gz", '
                                 "retention: {max_files: 2, check_interval: 0s}")]))
        for i, name in enumerate(["cpu.pb.gz", "heap.pb.gz", "goroutine.pb.gz", "allocs.pb.gz"]):
            self.spool(name, src=os.path.join(GO_CORPUS, name))
            p.wait_log(r"pprof_file: wrote ", count=i + 1)
        wait_until(lambda: len(self.outputs()) == 2, "retention to keep two files")
        self.assertEqual(p.stop(), 0)

    def test_a_kept_file_is_forgotten_once_gone(self):
        """Files left in place are remembered while they are there, not for
        the daemon's life: one put back as it was is read again."""
        cfg = config([("pprof_file", 'path_template: "{unix_nanos}.pb.gz"')]).replace(
            "include: [./spool/*.pb.gz, ./spool/*.pb]",
            "include: [./spool/*.pb.gz]\n    after_ingest: keep\n    poll_interval: 100ms")
        os.makedirs(self.path("spool"), exist_ok=True)
        p = self.start(cfg)
        spooled = self.path("spool", "a.pb.gz")

        def put_back():   # the same path, time and size each time
            tmp = self.path("spool", ".a.tmp")
            shutil.copyfile(os.path.join(GO_CORPUS, "cpu.pb.gz"), tmp)
            os.utime(tmp, (1700000000, 1700000000))
            os.rename(tmp, spooled)

        def remembered():
            return metric_value(p.metrics(), "profd_pprof_file_seen_files", component="pprof_file")

        put_back()
        p.wait_log(r"pprof_file: wrote ")
        wait_until(lambda: remembered() == 1, "the kept file to be remembered")
        os.unlink(spooled)
        wait_until(lambda: remembered() == 0, "the file gone to be forgotten")
        put_back()
        p.wait_log(r"pprof_file: wrote ", count=2)
        self.assertEqual(p.stop(), 0)

    def test_a_new_file_is_read_without_listing_those_left_in_place(self):
        """With inotify, a scan reads the files it named; only a poll lists
        every file (here once, at start): a file that came with no event it
        watches waits for one."""
        cfg = config([("pprof_file", 'path_template: "{unix_nanos}.pb.gz"')]).replace(
            "include: [./spool/*.pb.gz, ./spool/*.pb]",
            "include: [./spool/*.pb.gz]\n    after_ingest: keep\n    poll_interval: 1h")
        os.makedirs(self.path("spool"), exist_ok=True)
        p = self.start(cfg)
        self.spool("first.pb.gz", src=os.path.join(GO_CORPUS, "cpu.pb.gz"))
        p.wait_log(r"ingested .*first\.pb\.gz")
        shutil.copyfile(os.path.join(GO_CORPUS, "heap.pb.gz"), self.path("linked-from"))
        os.link(self.path("linked-from"), self.path("spool", "linked.pb.gz"))   # no close, no move
        self.spool("second.pb.gz", src=os.path.join(GO_CORPUS, "heap.pb.gz"))
        p.wait_log(r"ingested .*second\.pb\.gz")
        p.wait_log(r"pprof_file: wrote ", count=2)
        self.assertNotIn("linked.pb.gz", p.log_text())
        self.assertIsNotNone(metric_value(p.metrics(), "profd_pprof_file_listing_seconds",
                                          component="pprof_file"))
        self.assertEqual(p.stop(), 0)

    def test_a_spool_made_after_start_or_made_anew_is_watched(self):
        """A directory the patterns name that is missing at start, or
        removed and made again, is watched once it is there: its files are
        read without waiting for a poll (here an hour away)."""
        cfg = config([("pprof_file", 'path_template: "{unix_nanos}.pb.gz"')]).replace(
            "include: [./spool/*.pb.gz, ./spool/*.pb]",
            "include: [./spool/*.pb.gz]\n    poll_interval: 1h")
        p = self.start(cfg)
        p.wait_log(r"spool does not exist yet")
        self.spool("first.pb.gz", src=os.path.join(GO_CORPUS, "cpu.pb.gz"))
        p.wait_log(r"ingested .*first\.pb\.gz")
        p.wait_log(r"is there \(again\): watched")   # not just read by the listing at start
        shutil.rmtree(self.path("spool"))
        self.spool("second.pb.gz", src=os.path.join(GO_CORPUS, "heap.pb.gz"))
        p.wait_log(r"ingested .*second\.pb\.gz")
        self.spool("third.pb.gz", src=os.path.join(GO_CORPUS, "heap.pb.gz"))   # by its event
        p.wait_log(r"ingested .*third\.pb\.gz")
        p.wait_log(r"pprof_file: wrote ", count=3)
        self.assertEqual(p.log_text().count("is there (again): watched"), 2)
        self.assertEqual(p.stop(), 0)

    def test_retention_removes_what_ages_out_while_nothing_is_written(self):
        """Checks run on their own timer, not on the exporter's writes."""
        p = self.start(config([("pprof_file", "directory: ./profiles, "
                                 "retention: {max_age: 1h, check_interval: 100ms}")]))
        os.makedirs(self.path("profiles", "app"), exist_ok=True)
        old, young = self.path("profiles", "app", "old.pb.gz"), self.path("profiles", "app",
                                                                          "young.pb.gz")
        for path in (old, young):
            shutil.copy(os.path.join(GO_CORPUS, "cpu.pb.gz"), path)
        two_hours_ago = os.path.getmtime(young) - 7200
        os.utime(old, (two_hours_ago, two_hours_ago))
        wait_until(lambda: not os.path.exists(old), "the file past max_age to be removed")
        self.assertTrue(os.path.exists(young))
        wait_until(lambda: metric_value(p.metrics(), "profd_pprof_file_kept_files",
                                        component="pprof_file") == 1,
                   "the gauge to count the file kept")
        self.assertEqual(metric_value(p.metrics(), "profd_pprof_file_kept_bytes",
                                      component="pprof_file"), os.path.getsize(young))
        self.assertEqual(p.stop(), 0)

    def test_retention_removes_the_directories_it_empties(self):
        """A directory emptied and then left alone goes; a profile for it
        afterwards makes it again."""
        p = self.start(config([("pprof_file", 'directory: ./profiles, '
                                 'path_template: "day/{unix_nanos}.pb.gz", '
                                 "retention: {max_age: 1h, check_interval: 100ms}")]))
        self.spool("cpu.pb.gz", src=os.path.join(GO_CORPUS, "cpu.pb.gz"))
        p.wait_log(r"pprof_file: wrote ")
        day = self.path("profiles", "day")
        [written] = self.outputs()
        two_hours_ago = os.path.getmtime(written) - 7200
        os.utime(written, (two_hours_ago, two_hours_ago))
        wait_until(lambda: not os.path.exists(written), "the file past max_age to be removed")
        os.utime(day, (two_hours_ago, two_hours_ago))   # as though left alone since
        p.wait_log(r"retention removed 0 file\(s\) and 1 empty directory")
        self.assertFalse(os.path.exists(day))
        self.spool("heap.pb.gz", src=os.path.join(GO_CORPUS, "heap.pb.gz"))
        p.wait_log(r"pprof_file: wrote .*/day/", count=2)
        self.assertEqual(len(self.outputs()), 1)
        self.assertNotIn("cannot write", p.log_text())
        self.assertEqual(p.stop(), 0)

    def test_a_queue_counts_what_its_records_hold(self):
        """A decoded profile is many times its gzipped bytes: a queue that
        counted it by those would hold many times its queue_size."""
        refusing = socket.socket()   # bound, never listening: connections are refused
        refusing.bind(("127.0.0.1", 0))
        try:
            p = self.start(HELD % refusing.getsockname()[1])
            ingest = p.listening("Pyroscope ingest and push.v1 (HTTP/1.1, HTTP/2, gRPC)")
            body = open(os.path.join(GO_CORPUS, "bigheap.pb.gz"), "rb").read()
            for i in range(3):
                status, answer = http_post(
                    "http://%s/ingest?name=app.heap%%7Bi%%3D%d%%7D&format=pprof" % (ingest, i),
                    body)
                self.assertEqual(status, 200, answer)

            def waiting(exporter):   # the first is the sender's, retried
                return metric_value(p.metrics(), "profd_exporter_queue_records", id=exporter)
            for exporter in ("otlp/as_pushed", "otlp/decoded"):
                wait_until(lambda: waiting(exporter) == 2, "two records waiting in " + exporter)
            m = p.metrics()
            self.assertEqual(metric_value(m, "profd_exporter_queue_bytes", id="otlp/as_pushed"),
                             2 * len(body))
            decoded = metric_value(m, "profd_exporter_queue_bytes", id="otlp/decoded")
            self.assertGreater(decoded, 2 * 10 * len(body))   # 1.86 MB of pprof, as a model
            self.assertEqual(p.stop(), 0)
        finally:
            refusing.close()
