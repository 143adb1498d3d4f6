# SPDX-License-Identifier: Apache-2.0
"""The downsample processor: the profiles of a series within a window
merged as `go tool pprof -proto a b ...` merges them, the inputs' acks
waiting for the merged profile's, and the cut (sample types kept, stacks
cut to the frames nearest the leaf) read back with go tool pprof."""
import os
import shutil
import subprocess
import unittest

from harness import (GO_CORPUS, ProfdTestCase, exported_counts, metric_value, pprof_samples,
                     raw_pprof, valgrind, wait_until)

CONFIG = """
receivers:
  pprof_file: {include: ["./spool/*.pb.gz"], after_ingest: delete}
processors:
  downsample: {%s}
exporters:
  %s
service:
  telemetry: {metrics: {address: "127.0.0.1:0"}}
  pipelines:
    profiles: {receivers: [pprof_file], processors: [downsample], exporters: [%s]}
"""
FILES = 'pprof_file: {directory: ./out, path_template: "{__name__}"}'


class DownsampleTest(ProfdTestCase):

    def spool_copies(self, copies):
        """./spool with copies[name] copies of each corpus profile name:
        {name: [their paths]}."""
        os.makedirs(self.path("spool"))
        paths = {}
        for name, n in copies.items():
            for i in range(n):
                path = self.path("spool", "%s-%d.pb.gz" % (name.split(".")[0], i))
                shutil.copyfile(os.path.join(GO_CORPUS, name), path)
                paths.setdefault(name, []).append(path)
        return paths

    def start_downsample(self, options, exporter=FILES):
        return self.start(CONFIG % (options, exporter, exporter.split(":")[0]))

    def test_a_window_merges_each_series_as_go_tool_pprof_merges(self):
        """Three CPU profiles, two heap profiles and a mutex profile in one
        window (an hour: they go on when profd stops) become one profile
        per series, the same, sample for sample and entry for entry, as go
        tool pprof's merge of the same files (with no type averaged); the
        files are deleted once the merged profiles are written."""
        copies = {"cpu.pb.gz": 3, "heap.pb.gz": 2, "mutex.pb.gz": 1}
        self.spool_copies(copies)
        os.makedirs(self.path("inputs"))
        for name, n in copies.items():   # what go tool pprof merges: the same files
            for i in range(n):
                shutil.copyfile(os.path.join(GO_CORPUS, name),
                                self.path("inputs", "%s%d" % (name, i)))
        p = self.start_downsample("window: 1h, snapshot_sample_types: []")
        wait_until(lambda: metric_value(p.metrics(), "profd_component_accepted_records_total",
                                        kind="processor", id="downsample") == 6,
                   "six profiles taken in")
        self.assertEqual(len(os.listdir(self.path("spool"))), 6)   # held until written
        self.assertEqual(p.stop(), 0)
        self.assertEqual(os.listdir(self.path("spool")), [])
        for name, family in (("cpu.pb.gz", "process_cpu"), ("heap.pb.gz", "memory"),
                             ("mutex.pb.gz", "mutex")):
            merged = self.path("go-%s" % name)
            inputs = [self.path("inputs", "%s%d" % (name, i)) for i in range(copies[name])]
            with open(merged, "wb") as out:
                subprocess.run(["go", "tool", "pprof", "-proto"] + inputs, stdout=out,
                               stderr=subprocess.DEVNULL, check=True, timeout=120)
            self.assertEqual(raw_pprof(self.path("out", family)), raw_pprof(merged), name)

    def test_a_window_ends_on_the_clock(self):
        """A window of 2 s: the merged profile is written while profd
        runs, and only then are its inputs deleted. Of two heap profiles
        the alloc_* columns (what happened) are summed, the inuse_* ones
        (what was in use) averaged: the same memory is not counted twice.
        (Long enough for both inputs to be read into one window under a
        sanitizer on a loaded machine, which 300 ms was not.)"""
        self.spool_copies({"heap.pb.gz": 2})
        p = self.start_downsample("window: 2s")
        out = self.path("out", "memory")
        wait_until(lambda: os.path.exists(out), "the merged profile")
        wait_until(lambda: not os.listdir(self.path("spool")), "the inputs deleted")
        columns, merged = pprof_samples(out)
        _, one = pprof_samples(os.path.join(GO_CORPUS, "heap.pb.gz"))
        self.assertEqual(columns, ["alloc_objects/count", "alloc_space/bytes",
                                   "inuse_objects/count", "inuse_space/bytes"])
        self.assertEqual(merged, {k: [2 * vs[0], 2 * vs[1], vs[2], vs[3]]
                                  for k, vs in one.items()})
        self.assertEqual(p.stop(), 0)

    def test_a_merged_profile_refused_keeps_its_inputs(self):
        """The backend refuses the merged profile for good: the acks of the
        files merged into it fail, and the files stay to be read again."""
        paths = self.spool_copies({"heap.pb.gz": 2})
        port = self.serve_posts(lambda path, headers, body: (400, {}))
        p = self.start_downsample(
            "window: 200ms", 'pyroscope: {endpoint: "http://127.0.0.1:%d"}' % port)
        wait_until(lambda: (exported_counts(p, "pyroscope")[1] or 0) >= 1,
                   "the merged profile refused")
        self.assertEqual(p.stop(), 0)
        self.assertTrue(all(os.path.exists(f) for f in paths["heap.pb.gz"]))

    def test_sample_types_and_stack_depth_without_a_window(self):
        """window 0s: each profile goes on at once with only inuse_space,
        samples without it removed, and stacks cut to the 3 frames nearest
        the leaf, as computed here from go tool pprof's reading of the
        original."""
        self.spool_copies({"heap.pb.gz": 1})
        p = self.start_downsample("window: 0s, sample_types: [inuse_space], max_stack_depth: 3")
        out = self.path("out", "memory")
        wait_until(lambda: os.path.exists(out), "the cut profile")
        self.assertEqual(p.stop(), 0)
        columns, original = pprof_samples(os.path.join(GO_CORPUS, "heap.pb.gz"))
        inuse = columns.index("inuse_space/bytes")
        expected = {}
        for (stack, labels), values in original.items():
            if values[inuse]:
                key = (stack[:3], labels)
                expected[key] = expected.get(key, 0) + values[inuse]
        columns, got = pprof_samples(out)
        self.assertEqual(columns, ["inuse_space/bytes"])
        self.assertEqual({k: v[0] for k, v in got.items()}, expected)
        self.assertTrue(any(len(stack) == 3 for stack, _ in got))

    def test_nothing_to_do_passes_each_profile_as_it_came(self):
        """window 0s, every type, whole stacks: the file written is the
        file read, byte for byte (the profile is not even decoded)."""
        self.spool_copies({"heap.pb.gz": 1})
        p = self.start_downsample("window: 0s")
        out = self.path("out", "memory")
        wait_until(lambda: os.path.exists(out), "the profile")
        self.assertEqual(p.stop(), 0)
        with open(out, "rb") as a, open(os.path.join(GO_CORPUS, "heap.pb.gz"), "rb") as b:
            self.assertEqual(a.read(), b.read())

    @unittest.skipUnless(shutil.which("valgrind") and not os.environ.get("PROFD_SANITIZED"),
                         "valgrind not installed, or a sanitizer build")
    def test_valgrind_stop_with_a_window_open_has_no_leaks(self):
        """Profiles merged and cut in an open window, and the acks held,
        when SIGTERM comes: the window goes on, the files are deleted, and
        valgrind finds no error and no leak."""
        self.spool_copies({"cpu.pb.gz": 2, "heap.pb.gz": 1})
        p = self.start(CONFIG % ("window: 1h, max_stack_depth: 4", FILES, "pprof_file"),
                       wrapper=valgrind(self.path("vg.log")))
        wait_until(lambda: metric_value(p.metrics(), "profd_component_accepted_records_total",
                                        kind="processor", id="downsample") == 3,
                   "three profiles taken in", deadline=120)
        rc = p.stop(timeout=120)
        log = open(self.path("vg.log")).read()
        self.assertEqual(rc, 0, log)
        self.assertIn("ERROR SUMMARY: 0 errors", log)
        self.assertEqual(sorted(os.listdir(self.path("out"))), ["memory", "process_cpu"])
        self.assertEqual(os.listdir(self.path("spool")), [])

    def test_bad_options_are_refused_where_they_are(self):
        self.assert_config_refused(
            CONFIG % ("window: 1m, max_stack_depth: -2", FILES, "pprof_file"),
            "bad.yaml:5:45: max_stack_depth must be 0 or a frame count")


if __name__ == "__main__":
    unittest.main()
