# SPDX-License-Identifier: Apache-2.0
"""Retention benchmark (section "retention" of make bench).

A tree of RETENTION_FILES (1,000,000) profile files of 200 bytes, a
thousand to a directory three levels down ({__name__}/{service}/{date}, as
the usual path templates make), their modification times scattered so
that the oldest lie everywhere. Each run asks for the oldest 1% to go:

  - profd: a pprof_file exporter over the tree with `retention: {max_files:
    99% of what is there}`, its first check at start; the wall time from
    start to the "retention removed" line, profd's CPU then, and its peak
    resident memory (with the same config over an empty tree beside it:
    what the daemon holds anyway);
  - the shell's way, as a cron job would do it: `find -printf` of every
    profile's time and path, `sort -n`, the oldest 1% to `xargs rm`; wall
    time and the largest process's peak memory (sort's).

Median of RUNS runs each, the tree 1% smaller every run. The files go to
/dev/shm when there is room for them there, so that the figures are the
walk's and not the disk's.
"""
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time

from proc_stats import cpu_seconds, memory_kib

FILES = int(os.environ.get("RETENTION_FILES", "1000000"))
PER_DIR = 1000
NAMES = ["cpu", "heap", "goroutine", "mutex", "block"]
EPOCH = 1.7e9

CONFIG = """
receivers:
  pprof_file: {include: ["%(spool)s/*.pb.gz"]}
exporters:
  pprof_file:
    directory: %(tree)s
    path_template: "{__name__}/{unix_nanos}.pb.gz"
    retention: {max_files: %(keep)d, check_interval: 1h}
service:
  telemetry: {metrics: {address: ""}, logs: {level: info}}
  pipelines:
    profiles: {receivers: [pprof_file], exporters: [pprof_file]}
"""


def make_tree(root, n):
    """n files under root, PER_DIR to a directory, ages scattered."""
    data = b"\x1f\x8b" + b"x" * 198
    for k in range(n):
        if k % PER_DIR == 0:
            d = os.path.join(root, NAMES[k // PER_DIR % len(NAMES)],
                             "svc%d" % (k // (PER_DIR * len(NAMES)) % 20),
                             "2026-11-%02d" % (k // (PER_DIR * 100) % 28 + 1))
            os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "%d.pb.gz" % k)
        with open(path, "wb") as f:
            f.write(data)
        t = EPOCH + (k * 7919 % n)
        os.utime(path, (t, t))


def count_files(root):
    return sum(len(files) for _, _, files in os.walk(root))


def profd_run(build, work, tree):
    """One profd start over tree asking for 1% to go: (seconds, CPU
    seconds, peak KiB) at the "retention removed" line."""
    spool = os.path.join(work, "spool")
    os.makedirs(spool, exist_ok=True)
    cfg = os.path.join(work, "retention.yaml")
    with open(cfg, "w") as f:
        f.write(CONFIG % {"spool": spool, "tree": tree, "keep": count_files(tree) * 99 // 100})
    log = open(os.path.join(work, "profd.log"), "w+")
    start = time.monotonic()
    p = subprocess.Popen([os.path.join(build, "profd"), "--config", cfg], stderr=log)
    try:
        while True:
            log.seek(0)
            text = log.read()
            if re.search(r"retention removed \d+", text):
                return time.monotonic() - start, cpu_seconds(p.pid), memory_kib(p.pid, "VmHWM")
            if p.poll() is not None:
                raise SystemExit("profd exited before its retention check:\n" + text)
            time.sleep(0.01)
    finally:
        p.terminate()
        p.wait()
        log.close()


def profd_idle_kib(build, work):
    """profd's peak memory with the same config over an empty tree."""
    empty = os.path.join(work, "empty")
    os.makedirs(empty, exist_ok=True)
    spool = os.path.join(work, "spool")
    os.makedirs(spool, exist_ok=True)
    cfg = os.path.join(work, "idle.yaml")
    with open(cfg, "w") as f:
        f.write(CONFIG % {"spool": spool, "tree": empty, "keep": 1})
    p = subprocess.Popen([os.path.join(build, "profd"), "--config", cfg],
                         stderr=subprocess.PIPE, text=True)
    try:
        for line in p.stderr:
            if "running with" in line:
                return memory_kib(p.pid, "VmHWM")
        raise SystemExit("profd did not start over an empty tree")
    finally:
        p.terminate()
        p.wait()


def shell_run(tree):
    """find | sort -n | head | xargs rm over tree: (seconds, peak KiB)."""
    remove = count_files(tree) // 100
    script = ("find '%s' -type f -name '*.pb.gz' -printf '%%T@ %%p\\n' | sort -n | head -n %d"
              " | cut -d' ' -f2- | xargs -d '\\n' rm -f" % (tree, remove))
    start = time.monotonic()
    out = subprocess.run(["/usr/bin/time", "-f", "%M", "sh", "-c", script],
                         capture_output=True, text=True, check=True)
    return time.monotonic() - start, int(out.stderr.split()[-1])


def where_to(work):
    """/dev/shm when it has room for the tree (inodes and 4 KiB blocks),
    else work."""
    shm = "/dev/shm"
    if os.path.isdir(shm) and os.access(shm, os.W_OK):
        st = os.statvfs(shm)
        if st.f_favail >= FILES * 2 and st.f_bavail * st.f_frsize >= FILES * 8192:
            return shm
    return work


def retention_bench(build, work, runs):
    work = os.path.join(work, "retention")
    os.makedirs(work)
    tree = tempfile.mkdtemp(prefix="profd-retention-", dir=where_to(work))
    try:
        make_tree(tree, FILES)
        idle = profd_idle_kib(build, work)
        profd, shell = [], []
        for _ in range(runs):
            profd.append(profd_run(build, work, tree))
            shell.append(shell_run(tree))
        wall = statistics.median(r[0] for r in profd)
        cpu = statistics.median(r[1] for r in profd)
        peak = statistics.median(r[2] for r in profd)
        sh_wall = statistics.median(r[0] for r in shell)
        sh_peak = statistics.median(r[1] for r in shell)
        print("| retention, %d files, the oldest 1%% removed | profd (wall; CPU) | "
              "profd peak RSS (idle: %d MiB) | find + sort + rm (wall) | sort's peak RSS | "
              "profd / shell, time |" % (FILES, idle // 1024))
        print("|---|---|---|---|---|---|")
        print("| %s | %.2f s; %.2f s | %d MiB | %.2f s | %d MiB | %.2f |" % (
            os.path.dirname(tree), wall, cpu, peak // 1024, sh_wall, sh_peak // 1024,
            wall / sh_wall))
    finally:
        shutil.rmtree(tree, ignore_errors=True)
