# SPDX-License-Identifier: Apache-2.0
"""profd benchmarks, side by side with a reference tool in the same run.

1. pprof decode + re-encode: `profd convert IN -o OUT` against Go's pprof
   (`pprof -proto -symbolize=none IN`, run as the tool binary itself so the
   `go` command's own start-up is not charged to it), on the corpus's
   bigheap.pb.gz and on a larger profile made with
   `go run bigheap.go -paths 600000`. Wall time and peak RSS (GNU time),
   median of RUNS runs each, and the ratios.
2. Pass-through pipeline pprof_file -> pprof_file (original bytes written):
   records per second for a spool of small profiles, median of RUNS runs,
   next to the same file operations done alone (read, write a temp file,
   link, unlink), which bound it on any machine.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
PROFD = os.path.join(BUILD, "profd")
CORPUS = os.environ.get("PROFD_CORPUS", os.path.join(os.path.dirname(ROOT), "shared", "corpus"))
RUNS = int(os.environ.get("RUNS", "5"))
PASS_FILES = int(os.environ.get("PASS_FILES", "5000"))


def gnu_time(cmd, stdout=subprocess.DEVNULL):
    """Runs cmd under GNU time; returns (seconds, peak KiB)."""
    fmt = "%e %M"
    r = subprocess.run(["/usr/bin/time", "-f", fmt] + cmd, stdout=stdout, stderr=subprocess.PIPE,
                       text=True, timeout=600)
    if r.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), r.stderr))
    secs, kib = r.stderr.strip().splitlines()[-1].split()
    return float(secs), int(kib)


def pprof_tool():
    tooldir = subprocess.run(["go", "env", "GOTOOLDIR"], capture_output=True, text=True,
                             check=True).stdout.strip()
    return os.path.join(tooldir, "pprof")


def make_big(work):
    cache = os.path.join(BUILD, "bench", "big600k.pb.gz")
    if not os.path.exists(cache):
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        print("making the 600,000-path profile (go run bigheap.go -paths 600000) ...", flush=True)
        subprocess.run(["go", "run", "bigheap.go", "-paths", "600000", "-o", cache],
                       cwd=os.path.join(CORPUS, "src"), check=True, timeout=600)
    return cache


def codec_bench(name, path, work):
    tool = pprof_tool()
    out = os.path.join(work, "out.pb.gz")
    rows = {"profd": [], "pprof": []}
    for _ in range(RUNS):   # interleaved, so machine noise hits both alike
        rows["profd"].append(gnu_time([PROFD, "convert", path, "-o", out]))
        with open(os.path.join(work, "ref.pb.gz"), "wb") as f:
            rows["pprof"].append(gnu_time([tool, "-proto", "-symbolize=none", path], stdout=f))
    med = {k: (statistics.median(t for t, _ in v), statistics.median(m for _, m in v))
           for k, v in rows.items()}
    size = os.path.getsize(path)
    print("| %s (%.1f MB gz) | %.3f s / %.1f MB | %.3f s / %.1f MB | %.1fx | 1/%.1f |" % (
        name, size / 1e6, med["profd"][0], med["profd"][1] / 1024, med["pprof"][0],
        med["pprof"][1] / 1024, med["pprof"][0] / max(med["profd"][0], 1e-3),
        med["pprof"][1] / med["profd"][1]), flush=True)


PASS_CONFIG = """
receivers:
  pprof_file: {include: ["%s/*.pb.gz"], oneshot: true, after_ingest: keep, poll_interval: 0s}
exporters:
  pprof_file: {directory: "%s", path_template: "{__name__}/{unix_nanos}.pb.gz"}
service:
  telemetry: {metrics: {address: ""}, logs: {level: warn}}
  pipelines:
    profiles: {receivers: [pprof_file], exporters: [pprof_file]}
"""


def pass_through_bench(work):
    spool = os.path.join(work, "spool")
    os.makedirs(spool)
    sources = ["cpu", "heap", "goroutine", "allocs", "threadcreate", "block"]
    total = 0
    for i in range(PASS_FILES):
        src = os.path.join(CORPUS, "go", sources[i % len(sources)] + ".pb.gz")
        dst = os.path.join(spool, "p%06d.pb.gz" % i)
        shutil.copyfile(src, dst)
        total += os.path.getsize(dst)
    rates = []
    for run in range(RUNS):
        out = os.path.join(work, "out%d" % run)
        cfg = os.path.join(work, "pass.yaml")
        with open(cfg, "w") as f:
            f.write(PASS_CONFIG % (spool, out))
        t0 = time.monotonic()
        subprocess.run([PROFD, "--config", cfg], check=True, timeout=600)
        secs = time.monotonic() - t0
        written = sum(len(fs) for _, _, fs in os.walk(out))
        if written != PASS_FILES:
            sys.exit("pass-through wrote %d of %d files" % (written, PASS_FILES))
        rates.append(PASS_FILES / secs)
        shutil.rmtree(out)
    floor = []
    for run in range(RUNS):   # the same file operations, and nothing else
        out = os.path.join(work, "fs%d" % run)
        os.makedirs(out)
        t0 = time.monotonic()
        for name in sorted(os.listdir(spool)):
            with open(os.path.join(spool, name), "rb") as f:
                data = f.read()
            tmp = os.path.join(out, "." + name)
            with open(tmp, "wb") as f:
                f.write(data)
            os.link(tmp, os.path.join(out, name))
            os.unlink(tmp)
        floor.append(PASS_FILES / (time.monotonic() - t0))
        shutil.rmtree(out)
    print("| pass-through | files | profd records/s | read+write+link alone, files/s | ratio |")
    print("|---|---|---|---|---|")
    print("| pprof_file -> pprof_file | %d, %.1f MB | %.0f (min %.0f, max %.0f) | %.0f | %.2f |" % (
        PASS_FILES, total / 1e6, statistics.median(rates), min(rates), max(rates),
        statistics.median(floor), statistics.median(rates) / statistics.median(floor)), flush=True)


def main():
    work = tempfile.mkdtemp(prefix="profd-bench-")
    try:
        print("profd %s; median of %d runs each, on %d CPUs\n" % (
            subprocess.run([PROFD, "version"], capture_output=True, text=True).stdout.split()[1],
            RUNS, os.cpu_count()))
        print("| decode + re-encode | profd convert | Go pprof -proto | speed-up | memory |")
        print("|---|---|---|---|---|")
        codec_bench("bigheap.pb.gz", os.path.join(CORPUS, "go", "bigheap.pb.gz"), work)
        codec_bench("bigheap -paths 600000", make_big(work), work)
        print()
        pass_through_bench(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
