# SPDX-License-Identifier: Apache-2.0
"""perf_data receiver via `profd convert`: stacks equal perf script's, per
process, thread and comm, with counts."""
import collections
import glob
import os
import re
import subprocess

from harness import PROFD, ProfdTestCase

CORPUS_PERF = os.path.join(os.environ.get("PROFD_CORPUS", ""), "perf")
HEADER = re.compile(r"^(.*?)\s+(\d+)/(\d+)\s+[\d.]+:", re.M)


def expected_stacks(name):
    """{(pid, tid, comm, stack)} from perf script, a stack being (dso-relative
    address, dso) leaf first, with return addresses (all but the leaf) moved
    back by 1 as profd does; 0 stays."""
    out = collections.Counter()
    with open(os.path.join(CORPUS_PERF, "expected", name + ".script.txt")) as f:
        for block in f.read().split("\n\n"):
            head = HEADER.search(block)
            frames = re.findall(r"^\s+([0-9a-f]+) .* \((.*)\)$", block, re.M)
            if not head or not frames:
                continue
            addrs = [int(a, 16) for a, _ in frames]
            addrs = addrs[:1] + [a - 1 if a else 0 for a in addrs[1:]]
            stack = tuple(zip(addrs, (d for _, d in frames)))
            out[(int(head.group(2)), int(head.group(3)), head.group(1), stack)] += 1
    return out


def converted_stacks(path, pid):
    """The same from one of profd's per-process outputs (sample labels tid
    and comm), read by `go tool pprof -raw`."""
    raw = subprocess.run(["go", "tool", "pprof", "-raw", path], capture_output=True, text=True,
                         timeout=120).stdout
    maps = {m[0]: (int(m[1], 16), int(m[2], 16), m[3])
            for m in re.findall(r"^(\d+): (0x[0-9a-f]+)/0x[0-9a-f]+/(0x[0-9a-f]+) (\S+)", raw, re.M)}
    locs = {l[0]: (int(l[1], 16), l[2]) for l in
            re.findall(r"^\s+(\d+): (0x[0-9a-f]+) (?:M=(\d+))?", raw, re.M)}
    out = collections.Counter()
    samples = raw.split("Samples:")[1].split("Locations")[0]
    for values, ids, labels in re.findall(r"^\s+([\d ]+): ([\d ]+)\n((?:\s+\w+:\[.*\]\n)*)",
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


class PerfDataTest(ProfdTestCase):

    def check(self, name):
        out = self.path(name)
        os.mkdir(out)
        r = subprocess.run([PROFD, "convert", os.path.join(CORPUS_PERF, name + ".data"), "-o", out,
                            "--split", "pid", "--sample-labels", "tid,comm"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = collections.Counter()
        for path in glob.glob(os.path.join(out, "*.pb.gz")):
            got.update(converted_stacks(path, int(re.search(r"\.(\d+)\.perf_", path).group(1))))
        want = expected_stacks(name)
        self.assertGreater(len(want), 0)
        self.assertEqual(got, want)

    def test_frame_pointer_stacks_match_perf_script(self):
        self.check("burn.fp")

    def test_kernel_under_user_stacks_match_perf_script(self):
        self.check("sysc")

    def test_threads_fork_and_exec_match_perf_script(self):
        self.check("mt")

    def test_zstd_records_match_perf_script(self):
        self.check("burn.zstd")

    def test_pipe_mode_matches_perf_script(self):
        self.check("burn.pipe")

    def test_two_events_match_perf_script(self):
        self.check("burn.2events")
