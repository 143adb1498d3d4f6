# SPDX-License-Identifier: Apache-2.0
"""The command line: version, validate, components, convert, module errors."""
import json
import os
import re
import shutil
import subprocess
import sys
import unittest
import zlib

from harness import GO_CORPUS, PROFD, ROOT, ProfdTestCase, corpus_files, run
from test_pipeline import go_raw

BROKEN = """receivers:
  pprof_file:
    include: []
    poll_interval: soon
exporters:
  pprof_file: {directory: ./p, path_template: "../escape.pb.gz"}
  debug: {verbosity: loud}
service:
  pipelines:
    profiles: {receivers: [pprof_file, missing], exporters: [pprof_file]}
"""


def gzip_members(path):
    """How many gzip members the file holds."""
    with open(path, "rb") as f:
        data = f.read()
    n = 0
    while data:
        d = zlib.decompressobj(wbits=31)
        d.decompress(data)
        data = d.unused_data
        n += 1
    return n


def abi_version():
    """PROFD_ABI_VERSION, as the plugin header defines it."""
    with open(os.path.join(ROOT, "core", "include", "profd", "plugin.h")) as f:
        return int(re.search(r"#define PROFD_ABI_VERSION (\d+)", f.read()).group(1))


class CliTest(ProfdTestCase):

    def test_version(self):
        r = run(["version"])
        self.assertEqual(r.returncode, 0)
        self.assertRegex(r.stdout, r"^profd \S+ \(plugin ABI %d\)" % abi_version())

    def test_validate_lists_every_error_with_location(self):
        with open(self.path("bad.yaml"), "w") as f:
            f.write(BROKEN)
        r = run(["validate", "--config", self.path("bad.yaml")])
        self.assertEqual(r.returncode, 2)
        bad = self.path("bad.yaml")
        for want in [
            bad + ":4:20: receivers.pprof_file.poll_interval: 'soon' is not a duration",
            bad + ":7:22: exporters.debug.verbosity: 'loud' is not one of: basic, detailed",
            bad + ":10:40: pipeline 'profiles' refers to receiver 'missing'",
            bad + ":7:3: exporter 'debug' is defined but not used in any pipeline",
        ]:
            self.assertIn(want, r.stderr)
        r = run(["validate", "--config", self.path("bad.yaml").replace("bad", "nope")])
        self.assertEqual(r.returncode, 2)
        self.assertIn("cannot open", r.stderr)

    def test_module_validate_errors_point_at_their_option(self):
        with open(self.path("v.yaml"), "w") as f:
            f.write(BROKEN.replace("    poll_interval: soon\n", "")
                    .replace("  debug: {verbosity: loud}\n", "")
                    .replace(", missing", ""))
        r = run(["validate", "--config", self.path("v.yaml")])
        self.assertEqual(r.returncode, 2)
        self.assertIn(self.path("v.yaml") + ":3:14: include must list at least one glob", r.stderr)
        self.assertIn(self.path("v.yaml") + ":5:47: path_template '../escape.pb.gz': must be a "
                      "relative path", r.stderr)
        ok = run(["validate"])
        self.assertEqual(ok.returncode, 0, ok.stderr)
        self.assertIn("configuration is valid", ok.stdout)

    def test_a_limit_on_bodies_in_flight_below_the_largest_request_is_an_error(self):
        with open(self.path("f.yaml"), "w") as f:
            f.write("""receivers:
  pyroscope: {max_request_body_size: 64MiB, max_request_bytes_in_flight: 16MiB}
  parca: {max_request_bytes_in_flight: 0}
  otlp: {max_request_body_size: 8MiB, max_request_bytes_in_flight: 8MiB}
exporters: {nop: {}}
service: {pipelines: {profiles: {receivers: [pyroscope, parca, otlp], exporters: [nop]}}}
""")
        r = run(["validate", "--config", self.path("f.yaml")])
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr.strip().splitlines(), [
            "error: %s:2:74: max_request_bytes_in_flight (16777216 bytes) is below "
            "max_request_body_size (67108864 bytes): requests that large would always be "
            "refused" % self.path("f.yaml")])   # no limit (parca) and a limit at the size: fine

    def test_every_whole_config_of_the_readme_validates(self):
        with open(os.path.join(ROOT, "README.md")) as f:
            blocks = re.findall(r"```yaml\n(.*?)```", f.read(), re.S)
        whole = [b for b in blocks if re.search(r"^service:", b, re.M)]
        self.assertGreaterEqual(len(whole), 4)   # the first example and the usual jobs
        for i, block in enumerate(whole):
            path = self.path("readme-%d.yaml" % i)
            with open(path, "w") as f:
                f.write(block)
            r = run(["validate", "--config", path])
            self.assertEqual(r.returncode, 0, block + r.stderr)

    def test_components_json_documents_every_module(self):
        r = run(["components", "--json"])
        self.assertEqual(r.returncode, 0, r.stderr)
        mods = {(m["kind"], m["type"]): m for m in json.loads(r.stdout)}
        self.assertIn(("receiver", "pprof_file"), mods)
        self.assertIn(("exporter", "debug"), mods)
        exp = {o["name"]: o for o in mods[("exporter", "pprof_file")]["options"]}
        self.assertEqual(exp["directory"]["default"], "./profiles")
        self.assertIn("sending_queue", exp)       # the exporter helper's options
        self.assertEqual(exp["compression"]["choices"], ["auto", "gzip", "none"])
        text = run(["components"])
        self.assertIn("receiver pprof_file", text.stdout)

    def test_options_reference_is_what_the_modules_declare(self):
        """docs/options.md is what `make docs` writes from the modules now:
        an option added, renamed or given another default shows here until
        the reference is written again."""
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
        import options_doc
        r = run(["components", "--json"])
        self.assertEqual(r.returncode, 0, r.stderr)
        want = options_doc.document(json.loads(r.stdout))
        self.assertIn("| `sending_queue.queue_size` | size | `64MiB` |", want)
        self.assertIn("## processor `symbolize`", want)
        with open(os.path.join(ROOT, "docs", "options.md")) as f:
            self.assertEqual(f.read(), want, "docs/options.md is stale: run `make docs`")

    def test_every_module_is_described_in_the_components_doc(self):
        r = run(["components", "--json"])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(ROOT, "docs", "components.md")) as f:
            doc = f.read()
        with open(os.path.join(ROOT, "README.md")) as f:
            readme = f.read()
        for m in json.loads(r.stdout):
            anchor = "%s-%s" % (m["kind"], m["type"])
            self.assertIn("\n## %s `%s`\n" % (m["kind"], m["type"]), doc)
            self.assertIn("(#%s)" % anchor, doc)                          # its contents
            self.assertIn("(docs/components.md#%s)" % anchor, readme)     # the README's table

    def test_components_found_twice_in_the_search_path_are_listed_once(self):
        """The modules directory named again (by a path of its own, and
        through a link) lists each component once, as the search path
        gives it to a config: the first found."""
        modules = os.path.join(os.path.dirname(PROFD), "modules")
        os.symlink(modules, self.path("linked"))
        r = run(["components", "--json", "--modules", os.path.relpath(modules),
                 "--modules", self.path("linked")])
        self.assertEqual(r.returncode, 0, r.stderr)
        listed = [(m["kind"], m["type"]) for m in json.loads(r.stdout)]
        self.assertIn(("receiver", "pprof_file"), listed)
        self.assertEqual(len(listed), len(set(listed)), listed)

    def test_missing_module_names_every_path(self):
        os.makedirs(self.path("mods"))
        env = dict(os.environ, PROFD_MODULE_PATH=self.path("envmods"))
        with open(self.path("c.yaml"), "w") as f:
            f.write("receivers: {nosuch: {}}\nexporters: {debug: {}}\n"
                    "service: {pipelines: {profiles: {receivers: [nosuch], exporters: [debug]}}}\n")
        r = run(["validate", "--config", self.path("c.yaml"), "--modules", self.path("mods")], env=env)
        self.assertEqual(r.returncode, 2)
        self.assertIn("no module for receiver 'nosuch' (looked for %s/receiver_nosuch.so, "
                      "%s/receiver_nosuch.so, " % (self.path("mods"), self.path("envmods")), r.stderr)

    @unittest.skipUnless(shutil.which("cc"), "no C compiler")
    def test_module_built_for_another_abi_is_refused(self):
        os.makedirs(self.path("mods"))
        src = self.path("old.c")
        with open(src, "w") as f:
            f.write('#include "profd/plugin.h"\n'
                    "static int c(const struct profd_host *h, struct profd_component *s,"
                    " const void *cfg, void **st) { return 0; }\n"
                    "static void d(void *st) {}\n"
                    "static const struct profd_plugin p = {PROFD_ABI_VERSION + 6,"
                    " sizeof(struct profd_plugin), PROFD_EXPORTER, \"old\", \"x\", 0, 0, 0, 0,"
                    " c, 0, 0, 0, d};\n"
                    "PROFD_EXPORT const struct profd_plugin *PROFD_PLUGIN_ENTRY(void)"
                    " { return &p; }\n")
        so = self.path("mods", "exporter_old.so")
        cc = subprocess.run(["cc", "-shared", "-fPIC", "-I", os.path.join(ROOT, "core", "include"),
                             src, "-o", so], capture_output=True, text=True)
        self.assertEqual(cc.returncode, 0, cc.stderr)
        with open(self.path("c.yaml"), "w") as f:
            f.write("receivers: {pprof_file: {}}\nexporters: {old: {}}\n"
                    "service: {pipelines: {profiles: {receivers: [pprof_file], exporters: [old]}}}\n")
        r = run(["validate", "--config", self.path("c.yaml"), "--modules", self.path("mods")])
        self.assertEqual(r.returncode, 2)
        self.assertIn(so + ": module built for ABI version %d, this profd speaks version %d"
                      % (abi_version() + 6, abi_version()), r.stderr)

    def test_convert_one_file_several_files_and_stdout(self):
        src = os.path.join(GO_CORPUS, "compile-nethttp.cpu.pb.gz")
        out = self.path("one.pb.gz")
        r = run(["convert", src, "-o", out])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(go_raw(out), go_raw(src))
        raw = self.path("one.pb")
        self.assertEqual(run(["convert", src, "-o", raw]).returncode, 0)
        with open(raw, "rb") as f:
            self.assertNotEqual(f.read(2), b"\x1f\x8b")
        os.makedirs(self.path("many"))
        names = corpus_files()
        r = run(["convert"] + [os.path.join(GO_CORPUS, n) for n in names] + ["-o", self.path("many")])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(os.listdir(self.path("many"))), names)
        # bigheap encodes to 1.8 MB: gzip'd in pieces of about a MiB, in
        # members of one stream, which Go's pprof reads as one.
        big = self.path("many", "bigheap.pb.gz")
        self.assertGreaterEqual(gzip_members(big), 2)
        self.assertEqual(go_raw(big), go_raw(os.path.join(GO_CORPUS, "bigheap.pb.gz")))
        r = subprocess.run([os.path.join(ROOT, os.environ.get("BUILD", "build"), "profd"),
                            "convert", src, "-o", "-"], capture_output=True, timeout=120)
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stdout[:2], b"\x1f\x8b")

    def test_convert_refuses_bad_input_with_exit_1(self):
        with open(self.path("bad.pb"), "wb") as f:
            f.write(b"\x0a\x05\x08")
        r = run(["convert", self.path("bad.pb"), "-o", self.path("out.pb.gz")])
        self.assertEqual(r.returncode, 1)
        self.assertIn("bad.pb: pprof: length runs past the end of the message at byte", r.stderr)
        self.assertTrue(os.path.exists(self.path("bad.pb")))   # convert never moves inputs

    def test_convert_says_what_is_wrong_with_its_command_line(self):
        src, out = os.path.join(GO_CORPUS, "heap.pb.gz"), self.path("x")
        cases = [(["-o", out], "no input"),
                 ([src], "no output: -o OUT"),
                 ([src, "-o"], "-o needs a value"),
                 ([src, "-o", out, "--bogus"], "unknown option --bogus"),
                 ([src, "-o", out, "--split", "pid"],
                  "--split is for perf.data, and %s is not a perf.data file" % src)]
        for args, why in cases:
            r = run(["convert"] + args)
            self.assertEqual(r.returncode, 2, args)
            self.assertTrue(r.stderr.startswith("profd convert: %s\nusage: profd convert" % why),
                            r.stderr)
        self.assertFalse(os.path.exists(out))
        r = run(["convert", "--help"])
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertIn("--sample-labels tid,comm,cpu", r.stdout)
        self.assertIn("profd convert --help", run(["--help"]).stdout)
