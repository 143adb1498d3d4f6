# SPDX-License-Identifier: Apache-2.0
"""perf_data receiver via `profd convert`: stacks equal perf script's, per
process, thread and comm, with counts."""
import collections
import glob
import gzip
import os
import platform
import re
import shutil
import subprocess
import tempfile
import unittest

from harness import (CORPUS, PROFD, ROOT, ProfdTestCase, protoc_modules, raw_pprof, run_command,
                     valgrind, wait_until)

CORPUS_PERF = os.path.join(CORPUS, "perf")
HEADER = re.compile(r"^(.*?)\s+(\d+)/(\d+)\s+[\d.]+:", re.M)


def expected_stacks(name, unwound=False):
    with open(os.path.join(CORPUS_PERF, "expected", name + ".script.txt")) as f:
        return script_stacks(f.read(), unwound)


def script_stacks(text, unwound=False):
    """{(pid, tid, comm, stack)} from perf script output, a stack being
    (dso-relative address, dso) leaf first, with return addresses moved
    back by 1 as profd does (all but the leaf and the first user frame
    under kernel frames, where the program entered the kernel); 0 stays.
    With unwound (dwarf mode), perf has moved the user frames back
    already."""
    out = collections.Counter()
    for block in text.split("\n\n"):
        head = HEADER.search(block)
        frames = re.findall(r"^\s+([0-9a-f]+) .* \((.*)\)$", block, re.M)
        # perf script lists a function inlined at an address before the
        # frame of that address: one frame, not two.
        frames = [f for i, f in enumerate(frames)
                  if not (f[1] == "inlined" and i + 1 < len(frames) and frames[i + 1][0] == f[0])]
        if not head or not frames:
            continue
        kernel = [d == "[kernel.kallsyms]" for _, d in frames]
        first_user = kernel.index(False) if False in kernel else len(frames)
        addrs = [int(a, 16) for a, _ in frames]
        addrs = addrs[:1] + [a - 1 if a and i != first_user and (not unwound or kernel[i]) else a
                             for i, a in enumerate(addrs[1:], 1)]
        addrs = [0 if a == 2**64 - 1 else a for a in addrs]   # an unwound 0, moved back
        stack = tuple(zip(addrs, (d for _, d in frames)))
        out[(int(head.group(2)), int(head.group(3)), head.group(1), stack)] += 1
    return out


def converted_stacks(path, pid):
    """The same from one of profd's per-process outputs (sample labels tid
    and comm), read by `go tool pprof -raw`."""
    raw = raw_pprof(path)
    maps = {m[0]: (int(m[1], 16), int(m[2], 16), m[3])
            for m in re.findall(r"^(\d+): (0x[0-9a-f]+)/0x[0-9a-f]+/(0x[0-9a-f]+) (\S+)", raw, re.M)}
    locs = {l[0]: (int(l[1], 16), l[2]) for l in
            re.findall(r"^ *(\d+): (0x[0-9a-f]+) (?:M=(\d+))?", raw, re.M)}
    out = collections.Counter()
    samples = raw.split("Samples:")[1].split("Locations")[0]
    for values, ids, labels in re.findall(r"^ *([\d ]+): ([\d ]+)\n((?:\s+\w+:\[.*\]\n)*)",
                                          samples, re.M):
        count = sum(int(v) for v in values.split()[0::2])   # the <event>_samples columns
        stack = []
        for lid in ids.split():
            addr, m = locs[lid]
            if not m:
                stack.append((addr, "[unknown]"))
                continue
            start, off, name = maps[m]
            if name.startswith("[kernel.kallsyms]"):
                stack.append((addr, "[kernel.kallsyms]"))
            else:
                stack.append((addr - start + off, name))
        label = dict(re.findall(r"(\w+):\[(.*)\]", labels))
        out[(pid, int(label["tid"]), label["comm"], tuple(stack))] += int(count)
    return out


def config(receiver, exporter, processor=""):
    """perf_data (with these YAML options) -> [symbolize] -> pprof_file."""
    return """
receivers:
  perf_data: {%s}
%sexporters:
  pprof_file: {%s}
service:
  telemetry: {metrics: {address: ""}}
  pipelines:
    profiles: {receivers: [perf_data], %sexporters: [pprof_file]}
""" % (receiver, "processors:\n  symbolize: {%s}\n" % processor if processor else "", exporter,
       "processors: [symbolize], " if processor else "")


def without_repeats(stacks):
    """Stacks keyed by addresses (addresses_only) with a frame repeated
    back to back kept once."""
    out = collections.Counter()
    for (pid, tid, comm, stack), n in stacks.items():
        out[(pid, tid, comm, tuple(a for i, a in enumerate(stack) if not i or stack[i - 1] != a))] += n
    return out


def addresses_only(stacks):
    """Stacks keyed by addresses alone: perf script names the DSO of a frame
    that has inlined functions "(inlined)"."""
    out = collections.Counter()
    for (pid, tid, comm, stack), n in stacks.items():
        out[(pid, tid, comm, tuple(a for a, _ in stack))] += n
    return out


class PerfDataTest(ProfdTestCase):

    def check(self, name, *args, unwound=False):
        out = self.path(name)
        os.mkdir(out)
        # Extra options go before the input: perf.data is recognised wherever it stands.
        r = run_command([PROFD, "convert"] + list(args) + [os.path.join(CORPUS_PERF, name + ".data"),
                            "-o", out, "--split", "pid", "--sample-labels", "tid,comm"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = collections.Counter()
        for path in glob.glob(os.path.join(out, "*.pb.gz")):
            got.update(converted_stacks(path, int(re.search(r"\.(\d+)\.perf_", path).group(1))))
        want = expected_stacks(name, unwound)
        self.assertGreater(len(want), 0)
        if any(d == "inlined" for key in want for _, d in key[3]):
            got, want = addresses_only(got), addresses_only(want)
        self.assertEqual(got, want)
        return got

    def test_user_functions_symbolized_like_perf_script(self):
        """Functions of the corpus binaries' frames: profd's symbolize
        processor (by build-id from the corpus bin/) against perf script."""
        bins = os.path.join(CORPUS_PERF, "..", "bin")
        for name in ["burn.fp", "mt", "sysc", "burn.dwarf"]:
            with open(os.path.join(CORPUS_PERF, "expected", name + ".script.txt")) as f:
                want = {(int(a, 16), os.path.basename(d)): sym for a, sym, d in re.findall(
                    r"^\s+([0-9a-f]+) (\w+)(?:\+0x[0-9a-f]+)? \((/tmp/profd-corpus/bin/\w+)\)$",
                    f.read(), re.M)}
            out = self.path(name + ".pb.gz")
            r = run_command([PROFD, "convert", os.path.join(CORPUS_PERF, name + ".data"), "-o",
                                out, "--binary-dir", bins], capture_output=True, text=True,
                               timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            raw = raw_pprof(out)
            maps = {m[0]: (int(m[1], 16), int(m[2], 16), os.path.basename(m[3])) for m in
                    re.findall(r"^(\d+): (0x[0-9a-f]+)/0x[0-9a-f]+/(0x[0-9a-f]+) (\S+)", raw, re.M)}
            got = {}
            for lid, addr, m, fn in re.findall(r"^ *(\d+): (0x[0-9a-f]+) M=(\d+) (\S+) ", raw,
                                               re.M):
                start, off, base = maps[m]
                if base in ("burn", "mt", "sysc"):
                    got[int(addr, 16) - start + off] = (base, fn)
            self.assertGreater(len(got), 3, name)
            for a, (base, fn) in got.items():
                # perf names the return address, profd the call before it (a - 1).
                self.assertIn(want.get((a, base), want.get((a + 1, base))), (fn,),
                              "%s: %s+%#x" % (name, base, a))

    def test_kernel_functions_from_kallsyms_like_perf_script(self):
        """Kernel frames are named from /proc/kallsyms only when the running
        kernel is the recorded one (its build-id), else left as addresses."""
        with open(os.path.join(CORPUS_PERF, "expected", "sysc.script.txt")) as f:
            want = {int(a, 16): sym for a, sym in re.findall(
                r"^\s+([0-9a-f]+) ([\w.]+)(?:\+0x[0-9a-f]+)? \(\[kernel\.kallsyms\]\)$", f.read(),
                re.M)}
        out = self.path("k.pb.gz")
        r = run_command([PROFD, "convert", os.path.join(CORPUS_PERF, "sysc.data"), "-o", out],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        raw = raw_pprof(out)
        got = {int(a, 16): fn for a, fn in
               re.findall(r"^ *\d+: (0xffff[0-9a-f]+) M=\d+ ?(\S*)", raw, re.M)}
        self.assertGreater(len(got), 10)
        recorded = re.search(r"^\d+: 0xffff\S+ \[kernel\.kallsyms\]_text ([0-9a-f]+)", raw, re.M)
        with open("/sys/kernel/notes", "rb") as f:
            running = f.read()
        if not recorded or bytes.fromhex(recorded.group(1)) not in running:
            self.assertTrue(all(fn == "" for fn in got.values()), "another kernel's names used")
            return
        for a, fn in got.items():
            self.assertIn(want.get(a, want.get(a + 1)), (fn,), "%#x" % a)

    def kernel_names(self, cache):
        """Kernel frames' function names ("" when none) and the recorded
        kernel build-id of sysc.data converted with this debug directory,
        on a host whose running kernel is another one."""
        notes = self.path("notes")
        with open(notes, "wb") as f:   # a kernel whose build-id is not the recorded one
            f.write(bytes([4, 0, 0, 0, 20, 0, 0, 0, 3, 0, 0, 0]) + b"GNU\0" + bytes(range(20)))
        with open(self.path("profd.yaml"), "w") as f:
            f.write(config("include: [%s], split: none" % os.path.join(CORPUS_PERF, "sysc.data"),
                           "directory: out, path_template: k.pb.gz, overwrite: true",
                           "kernel_notes: %s, debug_directories: [%s]" % (notes, cache)))
        r = run_command([PROFD, "--config", "profd.yaml"], cwd=self.dir, capture_output=True,
                           text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        raw = raw_pprof(self.path("out", "k.pb.gz"))
        recorded = re.search(r"^ *\d+: 0xffff\S+ \[kernel\.kallsyms\]_text ([0-9a-f]+)", raw, re.M)
        return ({int(a, 16): fn for a, fn in re.findall(r"^ *\d+: (0xffff[0-9a-f]+) M=\d+ ?(\S*)",
                                                        raw, re.M)}, recorded.group(1))

    def test_kernel_frames_of_another_kernel_stay_addresses(self):
        names, _ = self.kernel_names(self.path("empty"))
        self.assertGreater(len(names), 10)
        self.assertEqual(set(names.values()), {""})

    def test_kernel_frames_named_from_perf_build_id_cache(self):
        """perf's build-id cache keeps the recorded kernel's kallsyms
        ([kernel.kallsyms]/<build-id>/kallsyms): kernel frames are named from
        it whatever kernel runs here."""
        with open(os.path.join(CORPUS_PERF, "expected", "sysc.script.txt")) as f:
            want = {int(a, 16): sym for a, sym in re.findall(
                r"^\s+([0-9a-f]+) ([\w.]+) \(\[kernel\.kallsyms\]\)$", f.read(), re.M)}
        _, build_id = self.kernel_names(self.path("cache"))
        entry = self.path("cache", "[kernel.kallsyms]", build_id)
        os.makedirs(entry)
        with open(os.path.join(entry, "kallsyms"), "w") as f:
            # A symbol starting just below each frame perf named (below its
            # return address), and one past them all, as kallsyms ends.
            for start, sym in sorted({(a - 1, sym) for a, sym in want.items()}):
                f.write("%016x T %s\n" % (start, sym))
            f.write("%016x T _etext\n" % (max(want) + 1))
        names, _ = self.kernel_names(self.path("cache"))
        # perf names the return address, profd the call before it (a - 1).
        named = {a: (want.get(a, want.get(a + 1)), fn) for a, fn in names.items()
                 if a in want or a + 1 in want}
        self.assertGreater(len(named), 10)
        for a, (theirs, ours) in named.items():
            self.assertEqual(theirs, ours, "%#x" % a)

    def test_dwarf_stacks_unwound_like_perf_script(self):
        got = self.check("burn.dwarf", "--binary-dir", os.path.join(CORPUS_PERF, "..", "bin"),
                         unwound=True)
        self.assertTrue(any(len(stack) > 4 for (_, _, _, stack) in got))

    def test_frame_pointer_stacks_match_perf_script(self):
        self.check("burn.fp")

    def test_kernel_under_user_stacks_match_perf_script(self):
        self.check("sysc")

    def test_threads_fork_and_exec_match_perf_script(self):
        self.check("mt")

    def test_each_process_profile_names_its_program_first(self):
        """pprof's convention: the main program's mapping comes first (go
        tool pprof names the profile "File:" after it), before the dynamic
        loader, libc and the kernel that the samples met earlier; after an
        exec, the new program. (The stacks' frames still name their own
        mappings: test_threads_fork_and_exec_match_perf_script.)"""
        out = self.path("out")
        os.mkdir(out)
        r = run_command([PROFD, "convert", os.path.join(CORPUS_PERF, "mt.data"), "-o", out,
                         "--split", "pid"], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        firsts = {}
        for path in glob.glob(os.path.join(out, "*.pb.gz")):
            raw = raw_pprof(path)
            mappings = re.findall(r"^\d+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ (\S+)", raw, re.M)
            self.assertGreater(len(mappings), 1, path)
            firsts[os.path.basename(path).split(".")[0]] = mappings[0]
        self.assertEqual(firsts, {"mt": "/tmp/profd-corpus/bin/mt", "sh": "/usr/bin/dash"})

    def test_zstd_records_match_perf_script(self):
        self.check("burn.zstd")

    def test_pipe_mode_matches_perf_script(self):
        self.check("burn.pipe")

    def test_two_events_match_perf_script(self):
        self.check("burn.2events")


def outputs_stacks(paths):
    """converted_stacks summed over per-process files named <comm>.<pid>.*."""
    got = collections.Counter()
    for path in paths:
        got.update(converted_stacks(path, int(re.search(r"\.(\d+)\.perf_", path).group(1))))
    return got


FINISHED_ROUND = bytes([68, 0, 0, 0, 0, 0, 8, 0])   # type 68, misc 0, size 8 (little endian)


@unittest.skipUnless(shutil.which("valgrind") and not os.environ.get("PROFD_SANITIZED"),
                     "valgrind not installed, or a sanitizer build")
class PerfValgrindTest(ProfdTestCase):

    def test_dwarf_file_and_open_stream_leave_no_leaks(self):
        fifo = self.path("perf.fifo")
        os.mkfifo(fifo)
        text = config("include: [%s, %s], binary_directories: [%s]" % (
            os.path.join(CORPUS_PERF, "burn.dwarf.data"), fifo,
            os.path.join(CORPUS_PERF, "..", "bin")), "directory: out")
        p = self.start(text, wrapper=valgrind(self.path("vg.log")))
        p.wait_log(r"burn\.dwarf\.data: \d+ samples", deadline=120)
        with open(os.path.join(CORPUS_PERF, "burn.pipe.data"), "rb") as f:
            data = f.read()
        w = os.open(fifo, os.O_WRONLY)
        os.write(w, data[:9000])   # a stream left half read at shutdown
        rc = p.stop(timeout=300)
        os.close(w)
        log = open(self.path("vg.log")).read()
        self.assertEqual(rc, 0, log + p.log_text())
        self.assertIn("ERROR SUMMARY: 0 errors", log)


class PerfWatchTest(ProfdTestCase):

    def test_watched_directory_reads_each_new_file_once(self):
        os.mkdir(self.path("in"))
        p = self.start(config("include: [in/*.data], watch: true, poll_interval: 50ms, split: none",
                              'directory: profiles, path_template: "{__name__}.pb.gz"'))
        p.wait_log(r"running with")
        self.spool("a.data", src=os.path.join(CORPUS_PERF, "burn.fp.data"), spool_dir="in")
        p.wait_log(r"in/a\.data: \d+ samples, 1 profiles")
        self.spool("b.data", src=os.path.join(CORPUS_PERF, "sysc.data"), spool_dir="in")
        p.wait_log(r"in/b\.data: \d+ samples, 1 profiles")
        wait_until(lambda: len(self.outputs()) == 2, "two profiles")
        mark = p.mark()
        self.spool("c.data", src=os.path.join(CORPUS_PERF, "burn.zstd.data"), spool_dir="in")
        p.wait_log(r"in/c\.data: \d+ samples", start=mark)
        self.assertEqual(len(p.wait_log(r"in/a\.data: \d+ samples")), 1)   # not read again
        self.assertEqual(p.stop(), 0)


class PerfStreamTest(ProfdTestCase):
    """Pipe-mode perf.data arriving over time: standard input and a FIFO."""

    def test_standard_input_stream_matches_perf_script(self):
        with open(os.path.join(CORPUS_PERF, "burn.pipe.data"), "rb") as f:
            data = f.read()
        out = self.path("out")
        os.mkdir(out)
        r = run_command([PROFD, "convert", "-", "-o", out, "--split", "pid", "--sample-labels",
                            "tid,comm"], input=data, capture_output=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(outputs_stacks(glob.glob(os.path.join(out, "*.pb.gz"))),
                         expected_stacks("burn.pipe"))

    def test_truncated_stream_is_refused_with_its_offset(self):
        with open(os.path.join(CORPUS_PERF, "burn.pipe.data"), "rb") as f:
            data = f.read()[:5000]
        r = run_command([PROFD, "convert", "-", "-o", self.path("x.pb.gz")], input=data,
                           capture_output=True, text=False, timeout=120)
        self.assertEqual(r.returncode, 1)
        self.assertRegex(r.stderr.decode(), r"-: byte \d+: record of type \d+ .* runs past")
        self.assertFalse(os.path.exists(self.path("x.pb.gz")))

    def test_fifo_is_cut_every_flush_interval_and_serves_writer_after_writer(self):
        fifo = self.path("perf.fifo")
        os.mkfifo(fifo)
        p = self.start(config("include: [%s], flush_interval: 100ms, label_tid: true, "
                              "label_comm: true" % fifo,
                              'directory: profiles, path_template: "{service_name}.{pid}.{__name__}.pb.gz"'))
        p.wait_log(r"running with")
        with open(os.path.join(CORPUS_PERF, "burn.pipe.data"), "rb") as f:
            data = f.read()
        want = expected_stacks("burn.pipe")
        w = os.open(fifo, os.O_WRONLY)
        os.write(w, data[:7001])          # mid-record: the rest comes later
        os.write(w, data[7001:])
        os.write(w, FINISHED_ROUND * 2)   # after two rounds every queued sample is final
        # Profiles come out while the writer is still there.
        wait_until(lambda: self.outputs(), "a profile cut by flush_interval")
        wait_until(lambda: outputs_stacks(self.outputs()) == want, "every sample of the stream")
        os.close(w)
        p.wait_log(r"perf\.fifo: \d+ samples")
        # The FIFO is open again for the next writer.
        w = os.open(fifo, os.O_WRONLY)
        os.write(w, data)
        os.close(w)
        p.wait_log(r"perf\.fifo: \d+ samples", count=2)
        doubled = collections.Counter({k: 2 * v for k, v in want.items()})
        wait_until(lambda: outputs_stacks(self.outputs()) == doubled, "the second writer's samples")
        self.assertEqual(p.stop(), 0)


def perf_allowed():
    """Why fresh recordings cannot be made here, or None when they can."""
    if not shutil.which("perf") or not shutil.which("gcc"):
        return "perf or gcc is not installed"
    r = subprocess.run(["perf", "record", "-q", "-o", "/dev/null", "--", "true"],
                       capture_output=True, text=True, timeout=60)
    if r.returncode:
        return "perf_event_open is not allowed here: " + (r.stderr.strip().splitlines() or ["?"])[-1]
    return None


WHY_NO_PERF = perf_allowed()


@unittest.skipIf(WHY_NO_PERF, WHY_NO_PERF)
class PerfRecordTest(ProfdTestCase):
    """Fresh `perf record` runs of a program written for the test (fork,
    threads, exec): profd's stacks equal `perf script`'s on the same file."""

    def setUp(self):
        super().setUp()
        self.prog = self.build_program("work", "-pthread")

    def build_program(self, name, *flags):
        """tests/integration/perf/<name>.c built with frame pointers and
        debug information (and flags, which may undo them): its path."""
        prog = self.path(name)
        subprocess.run(["gcc", "-O1", "-g", "-fno-omit-frame-pointer"] + list(flags) +
                       [os.path.join(ROOT, "tests", "integration", "perf", name + ".c"), "-o", prog],
                       check=True, timeout=120)
        return prog

    def script(self, data, unwound=False):
        r = subprocess.run(["perf", "script", "-F", "comm,pid,tid,time,event,ip,sym,dso", "-i",
                            data], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        return script_stacks(r.stdout, unwound)

    def convert(self, args, **kw):
        # Under the sanitizers, LeakSanitizer's own exit-time tracer has
        # crashed here (in the full suite only, never alone); leaks on these
        # paths are checked by the corpus tests above and the valgrind test.
        if os.environ.get("PROFD_SANITIZED"):
            kw["env"] = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") +
                             ":detect_leaks=0")
        out = tempfile.mkdtemp(prefix="out-", dir=self.dir)
        r = run_command([PROFD, "convert"] + args + ["-o", out, "--split", "pid",
                                                        "--sample-labels", "tid,comm"],
                           capture_output=True, timeout=300, **kw)
        self.assertEqual(r.returncode, 0, r.stderr)
        return outputs_stacks(glob.glob(os.path.join(out, "*.pb.gz")))

    def record(self, *opts, call_graph="fp", command=None):
        data = self.path("perf.data")
        subprocess.run(["perf", "record", "-q", "-F", "2000", "--call-graph", call_graph, "-o",
                        data] + list(opts) + ["--"] + (command or [self.prog]), check=True,
                       capture_output=True, timeout=300)
        return data

    def test_file_mode(self):
        data = self.record()
        want = self.script(data)
        self.assertGreater(sum(want.values()), 100)
        self.assertEqual(self.convert([data]), want)

    def test_dwarf_unwinding(self):
        data = self.record(call_graph="dwarf")
        # perf script's unwinder now and then repeats a frame (call_init in
        # ld.so's start-up, the same return address twice): the program has
        # no recursion, so repeated frames are compared once.
        # Two unwinders (profd's, through elfutils, and perf script's) now
        # and then part on a sample taken at an awkward spot of a fresh
        # recording. Every sample is on both sides, and at most one in 200
        # may be unwound otherwise; those are shown.
        self.assert_unwound_alike(self.convert([data]), data)

    @unittest.skipUnless(platform.machine() == "x86_64", "the program's busy function is x86-64")
    def test_dwarf_stack_ends_at_a_return_address_in_no_code(self):
        """A function whose CFI gives, as its return address, an address in
        the stack, its frame pointers sound (perf/stray_return.c): the
        stack ends at that address, as perf script ends it, and is not
        taken on to main by frame pointers."""
        prog = self.build_program("stray_return")
        data = self.record(call_graph="dwarf", command=[prog])
        want = self.script(data, True)
        stray = sum(n for key, n in want.items() if [d for _, d in key[3]] == [prog, "[stack]"])
        self.assertGreater(stray, sum(want.values()) / 2, want)
        self.assert_unwound_alike(self.convert([data]), data, deep=False)

    def assert_unwound_alike(self, got, data, deep=True):
        """got, profd's stacks of the DWARF recording data, equal perf
        script's but for at most one sample in 200 (see above); with deep,
        some stack is more than 3 frames deep (the work program's are)."""
        got, want = (without_repeats(addresses_only(c)) for c in (got, self.script(data, True)))
        total = sum(want.values())
        self.assertGreater(total, 100)
        self.assertTrue(not deep or any(len(k[3]) > 3 for k in want))
        self.assertEqual(sum(got.values()), total)
        ours, theirs = got - want, want - got
        self.assertLessEqual(sum(ours.values()), max(2, total // 200),
                             "profd's stacks %s, perf script's %s" % (ours, theirs))

    def test_runs_of_one_binary_share_its_mapping_in_a_merged_profile(self):
        """Two runs of the program (a PIE, loaded at two bases) merged into
        one profile: one mapping for it, and the stacks of each thread
        still equal perf script's (addresses relative to the binary)."""
        data = self.record(command=["sh", "-c", '"$0"; "$0"', self.prog])
        want = collections.Counter()
        for (pid, tid, comm, stack), n in self.script(data).items():
            want[(0, tid, comm, stack)] += n
        self.assertGreater(len({pid for pid, _, _, _ in self.script(data)}), 2)
        out = self.path("merged.pb.gz")
        r = run_command([PROFD, "convert", data, "-o", out, "--no-symbolize", "--sample-labels",
                         "tid,comm"], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        # read as written: go tool pprof merges a file's mappings itself
        profile_pb2 = protoc_modules("", ["profile.proto"])[0]
        prof = profile_pb2.Profile.FromString(gzip.decompress(open(out, "rb").read()))
        mappings = [prof.string_table[m.filename] for m in prof.mapping]
        self.assertEqual(mappings.count(self.prog), 1, mappings)
        self.assertEqual(converted_stacks(out, 0), want)

    def test_build_ids_in_mmap_records(self):
        """--buildid-mmap: each MMAP2 record carries its file's build-id in
        place of the device and inode."""
        data = self.record("--buildid-mmap")
        self.assertEqual(self.convert([data]), self.script(data))

    def test_two_software_events_one_of_them_user_only(self):
        data = self.record("-e", "task-clock", "-e", "cpu-clock:u")
        self.assertEqual(self.convert([data]), self.script(data))

    def test_zstd_compressed(self):
        data = self.record("-z")
        self.assertEqual(self.convert([data]), self.script(data))

    def first_mappings_of_kernel_samples(self, command):
        """command recorded with kernel samples alone (cpu-clock:k, no call
        chains) and converted a profile per process: {profile file name:
        its mappings' files, in order}."""
        data = self.path("kernel.data")
        subprocess.run(["perf", "record", "-q", "-e", "cpu-clock:k", "-o", data, "--"] + command,
                       check=True, capture_output=True, timeout=300)
        out = self.path("out")
        os.mkdir(out)
        r = run_command([PROFD, "convert", data, "-o", out, "--split", "pid"],
                        capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        return {os.path.basename(path): re.findall(r"^\d+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ (\S+)",
                                                   raw_pprof(path), re.M)
                for path in glob.glob(os.path.join(out, "*.pb.gz"))}

    DD = ["dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=300000"]

    def test_program_first_when_no_frame_is_in_it(self):
        """Kernel samples alone: no frame is in the program, yet its profile
        still starts with the program's mapping, as the process mapped it
        (a JVM's threads, in libjvm and JIT code, are the same case),
        before the kernel's."""
        [(name, mappings)] = self.first_mappings_of_kernel_samples(self.DD).items()
        self.assertTrue(name.startswith("dd."), name)
        self.assertEqual(os.path.basename(mappings[0]), "dd", mappings)
        self.assertTrue(mappings[1].startswith("[kernel.kallsyms]"), mappings)

    def test_program_first_is_the_one_run_after_an_exec(self):
        """A child forked by a program (built at a fixed address, below any
        position-independent one) that then execs dd keeps its parent's
        mappings, as perf keeps them: its profile still starts with dd,
        the program it runs, not the one it ran before the exec."""
        launch = self.build_program("launch", "-no-pie")
        profiles = self.first_mappings_of_kernel_samples([launch] + self.DD)
        [dd] = [m for name, m in profiles.items() if name.startswith("dd.")]
        self.assertEqual(os.path.basename(dd[0]), "dd", dd)

    @unittest.skipUnless(platform.machine() == "x86_64", "the test's JIT writes x86-64 code")
    def test_jit_frames_of_a_merged_profile_named_like_perf_script(self):
        """A JIT's code (anonymous memory it lists in /tmp/perf-<pid>.map):
        its mapping is named after that file, as perf names it, so that
        even a profile of all processes (split: none, which has no pid
        label) gets its frames named from the right process's map, as
        perf script names them."""
        prog = self.build_program("jit")
        data = self.path("jit.data")
        r = subprocess.run(["perf", "record", "-q", "-F", "2000", "-g", "-o", data, "--", prog],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        perf_map = r.stdout.strip()
        self.addCleanup(os.unlink, perf_map)
        script = subprocess.run(["perf", "script", "-F", "ip,sym,dso", "-i", data],
                                capture_output=True, text=True, timeout=300)
        self.assertEqual(script.returncode, 0, script.stderr)
        want = {int(a, 16): sym for a, sym in re.findall(
            r"^\s+([0-9a-f]+) (\S+) \(%s\)$" % re.escape(perf_map), script.stdout, re.M)}
        self.assertEqual(set(want.values()), {"jitted_spin"})
        out = self.path("merged.pb.gz")
        r = run_command([PROFD, "convert", data, "-o", out], capture_output=True, text=True,
                        timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        raw = raw_pprof(out)
        jit = re.search(r"^(\d+): \S+ %s" % re.escape(perf_map), raw, re.M)
        self.assertTrue(jit, "no mapping named " + perf_map)
        got = {int(a, 16): fn for a, fn in re.findall(
            r"^ *\d+: (0x[0-9a-f]+) M=%s ?(\S*)" % jit.group(1), raw, re.M)}
        self.assertGreater(len(got), 0)
        for a, fn in got.items():
            self.assertEqual(fn, want.get(a, want.get(a + 1)), "%#x" % a)

    def vdso_names(self, data, symbolize):
        """{vDSO-relative address: function name} of the [vdso] frames of
        data converted by a profd whose symbolize has these options."""
        with open(self.path("profd.yaml"), "w") as f:
            f.write(config("include: [%s], split: none" % data,
                           "directory: out, path_template: p.pb.gz, overwrite: true", symbolize))
        r = run_command([PROFD, "--config", "profd.yaml"], cwd=self.dir, capture_output=True,
                        text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        raw = raw_pprof(self.path("out", "p.pb.gz"))
        vdso = re.search(r"^(\d+): (0x[0-9a-f]+)/0x[0-9a-f]+/(0x[0-9a-f]+) \[vdso\]", raw, re.M)
        self.assertTrue(vdso, "no [vdso] mapping")
        start, offset = int(vdso.group(2), 16), int(vdso.group(3), 16)
        return {int(a, 16) - start + offset: fn for a, fn in re.findall(
            r"^ *\d+: (0x[0-9a-f]+) M=%s ?(\S*)" % vdso.group(1), raw, re.M)}

    def test_vdso_frames_named_like_perf_script(self):
        """clock_gettime's frames in the vDSO: named from this host's own
        vDSO (its build-id is the recorded one), or, with the host's files
        not used, from the copy perf's build-id cache keeps
        ([vdso]/<build-id>/vdso), as perf script names them."""
        prog = self.build_program("clock")
        home = self.path("home")   # where perf keeps its build-id cache
        os.mkdir(home)
        data = self.path("clock.data")
        env = dict(os.environ, HOME=home)
        subprocess.run(["perf", "record", "-q", "-F", "2000", "-g", "-o", data, "--", prog],
                       check=True, capture_output=True, timeout=300, env=env)
        r = subprocess.run(["perf", "script", "-F", "ip,sym,dso", "-i", data], env=env,
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        # perf's "[unknown]": code no symbol covers, which profd leaves unnamed
        want = {int(a, 16): "" if sym == "[unknown]" else sym for a, sym in re.findall(
            r"^\s+([0-9a-f]+) (\S+?)(?:\+0x[0-9a-f]+)? \(\[vdso\]\)$", r.stdout, re.M)}
        self.assertGreater(len(want), 0, "no samples in the vDSO")
        cache = os.path.join(home, ".debug")
        for symbolize in ("debug_directories: []",
                          "use_local_path: false, debug_directories: [%s]" % cache):
            got = self.vdso_names(data, symbolize)
            self.assertGreater(len(got), 0, symbolize)
            for a, fn in got.items():
                # perf names a return address, profd the call before it (a - 1).
                self.assertEqual(fn, want.get(a, want.get(a + 1)), "%s: [vdso]+%#x" % (symbolize, a))
        got = self.vdso_names(data, "use_local_path: false, debug_directories: []")
        self.assertEqual(set(got.values()), {""}, "named with neither copy")

    def stream_recording(self, *call_graph):
        """A fresh pipe-mode recording streamed through profd's standard
        input (a pipe): (profd's stacks, the recording as saved by tee)."""
        saved = self.path("pipe.data")
        rec = subprocess.Popen(["perf", "record", "-q", "-F", "2000"] + list(call_graph) +
                               ["-o", "-", "--", self.prog], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
        tee = subprocess.Popen(["tee", saved], stdin=rec.stdout, stdout=subprocess.PIPE)
        rec.stdout.close()
        got = self.convert(["-"], stdin=tee.stdout)
        self.assertEqual(rec.wait(timeout=60), 0)
        self.assertEqual(tee.wait(timeout=60), 0)
        return got, saved

    def test_pipe_mode_streamed_through_standard_input(self):
        got, saved = self.stream_recording("-g")
        self.assertEqual(got, self.script(saved))

    def test_dwarf_stream_larger_than_the_parse_lookahead(self):
        """A stream is read on the event loop and parsed on the receiver's
        own thread; reading pauses while 256 KiB wait to be parsed. DWARF
        samples carry their stacks, so this stream is MiBs: every sample
        still arrives, unwound as perf script does, and the same again when
        the whole recording is in the pipe at once (reading far ahead of
        the unwinding)."""
        got, saved = self.stream_recording("--call-graph", "dwarf")
        # four times what waits to be parsed at most (STREAM_MAX_PENDING) and
        # more; the program's work gives about 2 MiB, a little less on a
        # loaded machine
        self.assertGreater(os.path.getsize(saved), 4 * (256 << 10))
        self.assert_unwound_alike(got, saved)
        with open(saved, "rb") as f:
            self.assertEqual(self.convert(["-"], stdin=subprocess.Popen(
                ["cat"], stdin=f, stdout=subprocess.PIPE).stdout), got)
