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
3. Scraping: 1,000 targets (nginx on 1,000 loopback addresses serving corpus
   profiles) x 3 presets (memory and block with client-side delta,
   goroutine) every 15 s: profd's CPU time per scrape cycle (median of
   SCRAPE_CYCLES cycles after the first, which primes the deltas) against
   `curl --parallel` fetching the same 3,000 URLs once during each of those
   cycles; the ratio is the median of the per-cycle ratios, so each pair saw
   the same machine load. Also profd's peak RSS.

4. perf.data: recordings of at least PERF_MB (100) MB of bench/perf_load.c
   (4 threads, recursive call trees), one at -F 20000 with frame-pointer
   callchains, one at -F 1000 with --call-graph dwarf (8 KiB stack copies,
   unwound with DWARF CFI): `profd convert big.data -o out.pb.gz` (with the
   symbolize processor, and with --no-symbolize) against `perf script -i
   big.data` (output to /dev/null), wall time and peak RSS, median of RUNS
   runs each; profd's peak RSS also as a fraction of the file size.

5. Symbolization: SYM_ADDRESSES (1,000,000) addresses drawn at random from
   the text of libc.so.6, whose full DWARF comes from Debian's libc6-dbg,
   in one pprof profile run through pprof_file -> symbolize -> pprof_file,
   against `addr2line -f -i -e libc.so.6` reading the same addresses: wall
   time of the whole run (which includes decoding the profile and encoding
   and gzipping the symbolized one) and the time inside the symbolize
   processor (from its debug log line), addresses/s, peak RSS, and how many distinct addresses got the same
   function/file/line chain from both; of the rest, how many differ only in
   which alias of a function symbol is named, and how many differ where
   llvm-symbolizer (the second opinion) gives profd's files and lines.

6. OTLP: see bench/otlp_bench.py (codec cost per profile next to the pprof
   decoder; export -> receive over loopback gRPC with grpcio clients).
7. Push: see bench/push_bench.py (Pyroscope /ingest and push.v1 under wrk
   load into relabel -> pprof_file, next to nginx answering 200).

8. Downsample: DS_FILES copies of the compiler's CPU profile merged into
   one by the downsample processor (pprof_file -> downsample -> pprof_file,
   one-shot), next to `pprof -proto` merging the same files; the two
   outputs must read the same with `pprof -raw`.

9. Kubernetes discovery: see bench/k8s_bench.py (kubernetes_sd_configs
   of the roles in K8S_ROLES, pod and endpointslice, with K8S_PODS pods:
   the time from start, and from a pod added, to its scrape pairs made,
   and the CPU a change costs).

10. Retention: see bench/retention_bench.py (the oldest 1% of a tree of
    RETENTION_FILES profile files removed by pprof_file's retention, next to
    find | sort | xargs rm doing the same).

BENCH="codec passthrough scrape perf symbolize otlp push downsample retention k8s" selects
sections (all by default).
"""
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from proc_stats import cpu_seconds, memory_kib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
PROFD = os.path.join(BUILD, "profd")
CORPUS = os.environ.get("PROFD_CORPUS", os.path.join(os.path.dirname(ROOT), "shared", "corpus"))
RUNS = int(os.environ.get("RUNS", "5"))
PASS_FILES = int(os.environ.get("PASS_FILES", "5000"))
SECTIONS = os.environ.get("BENCH",
                          "codec passthrough scrape perf symbolize otlp push downsample retention "
                          "k8s").split()
DS_FILES = int(os.environ.get("DS_FILES", "50"))
SYM_ADDRESSES = int(os.environ.get("SYM_ADDRESSES", "1000000"))
PERF_MB = int(os.environ.get("PERF_MB", "100"))


def gnu_time(cmd, stdout=subprocess.DEVNULL, **kw):
    """Runs cmd under GNU time; returns (seconds, peak KiB)."""
    secs, kib, _ = gnu_time_and_stderr(cmd, stdout, **kw)
    return secs, kib


def gnu_time_and_stderr(cmd, stdout=subprocess.DEVNULL, **kw):
    """The same, and what cmd wrote to its standard error."""
    r = subprocess.run(["/usr/bin/time", "-f", "%e %M"] + cmd, stdout=stdout,
                       stderr=subprocess.PIPE, text=True, timeout=600, **kw)
    if r.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), r.stderr))
    lines = r.stderr.strip().splitlines()
    secs, kib = lines[-1].split()
    return float(secs), int(kib), "\n".join(lines[:-1])


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


DOWNSAMPLE_CONFIG = """
receivers:
  pprof_file: {include: ["%s/*.pb.gz"], oneshot: true, after_ingest: keep, poll_interval: 0s}
processors:
  downsample: {window: 1h}
exporters:
  pprof_file: {directory: "%s", path_template: "merged.pb.gz"}
service:
  telemetry: {metrics: {address: ""}, logs: {level: warn}}
  pipelines:
    profiles: {receivers: [pprof_file], processors: [downsample], exporters: [pprof_file]}
"""


def downsample_bench(work):
    """DS_FILES copies of compile-nethttp.cpu merged by profd's downsample
    processor and by pprof -proto, interleaved; prints a table row."""
    tool = pprof_tool()
    spool, out = os.path.join(work, "ds-spool"), os.path.join(work, "ds-out")
    os.makedirs(spool)
    src = os.path.join(CORPUS, "go", "compile-nethttp.cpu.pb.gz")
    files = []
    for i in range(DS_FILES):
        files.append(os.path.join(spool, "cpu%03d.pb.gz" % i))
        shutil.copyfile(src, files[-1])
    config = os.path.join(work, "ds.yaml")
    with open(config, "w") as f:
        f.write(DOWNSAMPLE_CONFIG % (spool, out))
    ref = os.path.join(work, "ds-ref.pb.gz")
    rows = {"profd": [], "pprof": []}
    for _ in range(RUNS):
        shutil.rmtree(out, ignore_errors=True)
        rows["profd"].append(gnu_time([PROFD, "--config", config]))
        with open(ref, "wb") as f:
            rows["pprof"].append(gnu_time([tool, "-proto", "-symbolize=none"] + files, stdout=f))
    raw = [subprocess.run([tool, "-raw", "-symbolize=none", p], capture_output=True,
                          text=True).stdout for p in (os.path.join(out, "merged.pb.gz"), ref)]
    same = raw[0] == raw[1] and "Samples:" in raw[0]
    med = {k: (statistics.median(t for t, _ in v), statistics.median(m for _, m in v))
           for k, v in rows.items()}
    print("| %d x compile-nethttp.cpu (%.0f KB gz each) | %.3f s / %.1f MB | %.3f s / %.1f MB | "
          "%.1fx | %s |" % (DS_FILES, os.path.getsize(src) / 1e3, med["profd"][0],
                            med["profd"][1] / 1024, med["pprof"][0], med["pprof"][1] / 1024,
                            med["pprof"][0] / max(med["profd"][0], 1e-3),
                            "yes" if same else "NO"), flush=True)


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


NGINX = """worker_processes 1;
worker_rlimit_nofile 16384;
error_log %(dir)s/nginx.err warn;
pid %(dir)s/nginx.pid;
events { worker_connections 8192; }
http {
    access_log off;
    default_type application/octet-stream;
    server {
%(listen)s
        root %(dir)s/root;
    }
}
"""

SCRAPE_CONFIG = """
receivers:
  pprof_scrape:
    scrape_configs:
      - job_name: fleet
        scrape_interval: %ds
        static_configs: [{targets: [%s]}]
        profiling_config: {presets: [memory, goroutine, block]}
exporters: {nop: {}}
service:
  telemetry: {metrics: {address: ""}, logs: {level: warn}}
  pipelines: {profiles: {receivers: [pprof_scrape], exporters: [nop]}}
"""


def scrape_bench(work):
    """1,000 targets (one nginx listening on 1,000 loopback addresses) with
    3 presets each, every SCRAPE_INTERVAL: profd's CPU per scrape cycle
    against curl --parallel fetching the same 3,000 URLs once."""
    targets = int(os.environ.get("SCRAPE_TARGETS", "1000"))
    interval = int(os.environ.get("SCRAPE_INTERVAL", "15"))
    cycles = int(os.environ.get("SCRAPE_CYCLES", "3"))
    import socket
    probe = socket.socket()
    probe.bind(("127.0.1.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    addrs = ["127.0.%d.%d:%d" % (1 + i // 250, 1 + i % 250, port) for i in range(targets)]
    root = os.path.join(work, "root", "debug", "pprof")
    os.makedirs(root)
    for name, src in [("allocs", "allocs"), ("goroutine", "goroutine"), ("block", "block")]:
        shutil.copyfile(os.path.join(CORPUS, "go", src + ".pb.gz"), os.path.join(root, name))
    for d in (work, os.path.dirname(os.path.dirname(root)), os.path.dirname(root), root):
        os.chmod(d, 0o755)   # nginx's workers run as an unprivileged user
    conf = os.path.join(work, "nginx.conf")
    with open(conf, "w") as f:
        f.write(NGINX % {"dir": work,
                         "listen": "\n".join("        listen %s;" % a for a in addrs)})
    nginx = subprocess.Popen(["nginx", "-c", conf, "-p", work, "-g", "daemon off;"])
    try:
        urls = ["http://%s/debug/pprof/%s" % (a, p) for a in addrs
                for p in ("allocs", "goroutine", "block")]
        deadline = time.monotonic() + 30
        while subprocess.run(["curl", "-sf", "-o", "/dev/null", urls[-1]]).returncode != 0:
            if time.monotonic() > deadline:
                sys.exit("nginx did not come up")
            time.sleep(0.1)
        curl_cfg = os.path.join(work, "curl.cfg")
        with open(curl_cfg, "w") as f:
            for u in urls:
                f.write('url = "%s"\noutput = "/dev/null"\n' % u)
        def curl_once():
            # its rusage, to the microsecond (GNU time prints hundredths)
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            # curl 7.88 draws its parallel progress meter even with -s: to
            # stderr, kept out of the tables
            subprocess.run(["curl", "-s", "--parallel", "--parallel-max", "50", "-K", curl_cfg],
                           stderr=subprocess.DEVNULL, check=True, timeout=600)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        cfg = os.path.join(work, "scrape.yaml")
        with open(cfg, "w") as f:
            f.write(SCRAPE_CONFIG % (interval, ", ".join('"%s"' % a for a in addrs)))
        profd = subprocess.Popen([PROFD, "--config", cfg])
        try:
            time.sleep(interval + 2)   # the first cycle primes the deltas
            # Each cycle is paired with one curl run made during it, so both
            # figures of a pair saw the same machine load.
            per_cycle, curl_cpu = [], []
            for _ in range(cycles):
                start, c0 = time.monotonic(), cpu_seconds(profd.pid)
                curl_cpu.append(curl_once())
                time.sleep(max(0.0, start + interval - time.monotonic()))
                per_cycle.append(cpu_seconds(profd.pid) - c0)
            rss = memory_kib(profd.pid, "VmHWM")
        finally:
            profd.terminate()
            profd.wait(timeout=60)
    finally:
        nginx.terminate()
        nginx.wait(timeout=30)
    p, c = statistics.median(per_cycle), statistics.median(curl_cpu)
    ratio = statistics.median(x / max(y, 1e-3) for x, y in zip(per_cycle, curl_cpu))
    print("| scrape cycle | profd CPU/cycle | curl --parallel CPU | ratio | profd peak RSS |")
    print("|---|---|---|---|---|")
    print("| %d targets x 3 presets, every %ds | %.3f s (min %.3f, max %.3f) | %.3f s (min %.3f, "
          "max %.3f) | %.2f | %.1f MB |" % (
              targets, interval, p, min(per_cycle), max(per_cycle), c, min(curl_cpu),
              max(curl_cpu), ratio, rss / 1024), flush=True)


def make_perf_recording(call_graph="fp", freq="20000"):
    """build/bench/perf-<call_graph>.data, recorded once; None when perf
    cannot record here."""
    cache = os.path.join(BUILD, "bench", "perf-%s.data" % call_graph)
    if os.path.exists(cache) and os.path.getsize(cache) >= PERF_MB * 1000000:
        return cache
    os.makedirs(os.path.dirname(cache), exist_ok=True)
    load = os.path.join(BUILD, "bench", "perf_load")
    subprocess.run(["gcc", "-O2", "-g", "-fno-omit-frame-pointer", "-pthread",
                    os.path.join(ROOT, "bench", "perf_load.c"), "-o", load], check=True)
    seconds = 10
    while True:
        print("recording %ds of perf_load at -F %s, --call-graph %s ..." % (seconds, freq, call_graph),
              flush=True)
        r = subprocess.run(["perf", "record", "-q", "-F", freq, "--call-graph", call_graph, "-o",
                            cache, "--", load, "4", str(seconds)], capture_output=True, text=True,
                           timeout=900)
        if r.returncode:
            print("perf record failed, perf section skipped: %s" % r.stderr.strip())
            return None
        size = os.path.getsize(cache)
        if size >= PERF_MB * 1000000:
            return cache
        seconds = int(seconds * PERF_MB * 1000000 / size * 1.1) + 1


def perf_bench(work, call_graph, freq):
    data = make_perf_recording(call_graph, freq)
    if not data:
        return
    out = os.path.join(work, "perf.pb.gz")
    bins = os.path.join(BUILD, "bench")
    rows = {"profd": [], "profd addresses": [], "perf": []}
    for _ in range(RUNS):   # interleaved, so machine noise hits both alike
        rows["profd"].append(gnu_time([PROFD, "convert", data, "-o", out, "--binary-dir", bins]))
        rows["profd addresses"].append(gnu_time([PROFD, "convert", data, "-o", out,
                                                 "--no-symbolize"]))
        rows["perf"].append(gnu_time(["perf", "script", "-i", data]))
    med = {k: (statistics.median(t for t, _ in v), statistics.median(m for _, m in v))
           for k, v in rows.items()}
    size = os.path.getsize(data)
    for key, what in (("profd", "symbolized"), ("profd addresses", "addresses only")):
        print("| perf.data (--call-graph %s), %s | %.0f MB | %.2f s / %.1f MB | %.2f s / %.1f MB | "
              "%.1fx | 1/%.1f |" % (call_graph, what, size / 1e6, med[key][0], med[key][1] / 1024,
                                    med["perf"][0], med["perf"][1] / 1024,
                                    med["perf"][0] / max(med[key][0], 1e-3),
                                    size / 1024 / med[key][1]), flush=True)


def pprof_with_addresses(mapping, addresses):
    """A raw pprof profile with one sample per address, in one mapping
    (start, limit, offset, filename, build_id)."""
    def varint(out, n):
        while True:
            b = n & 0x7F
            n >>= 7
            out.append(b | (0x80 if n else 0))
            if not n:
                return

    def field(out, num, value):
        if isinstance(value, int):
            varint(out, num << 3)
            varint(out, value)
        else:
            varint(out, num << 3 | 2)
            varint(out, len(value))
            out += value

    def message(*fields):
        m = bytearray()
        for num, value in fields:
            field(m, num, value)
        return bytes(m)

    out = bytearray()
    field(out, 1, message((1, 1), (2, 2)))
    for i in range(len(addresses)):
        field(out, 2, message((1, i + 1), (2, 1)))
    field(out, 3, message((1, 1), (2, mapping[0]), (3, mapping[1]), (4, mapping[2]), (5, 3), (6, 4)))
    for i, a in enumerate(addresses):
        field(out, 4, message((1, i + 1), (2, 1), (3, a)))
    for text in ["", "samples", "count", mapping[3], mapping[4]]:
        field(out, 6, text.encode())
    return bytes(out)


SYM_CONFIG = """
receivers:
  pprof_file: {include: [in/*.pb.gz], oneshot: true, after_ingest: keep, poll_interval: 0s}
processors:
  symbolize: {debug_directories: [/usr/lib/debug]}
exporters:
  pprof_file: {directory: out, path_template: "p.pb.gz", overwrite: true}
service:
  telemetry: {metrics: {address: ""}, logs: {level: debug}}
  pipelines:
    profiles: {receivers: [pprof_file], processors: [symbolize], exporters: [pprof_file]}
"""


def symbolize_bench(work):
    import gzip
    import random
    import re
    lib = "/usr/lib/x86_64-linux-gnu/libc.so.6"
    heads = subprocess.run(["readelf", "-lWn", lib], capture_output=True, text=True).stdout
    seg = re.search(r"LOAD\s+(0x\w+) (0x\w+) \S+ (0x\w+) \S+ R E", heads)
    build_id = re.search(r"Build ID: (\w+)", heads).group(1)
    if not seg or not os.path.isdir("/usr/lib/debug/.build-id/" + build_id[:2]):
        print("symbolize: libc.so.6's debug info (libc6-dbg) is not installed; skipped")
        return
    off, vaddr, size = (int(g, 16) for g in seg.groups())
    rnd = random.Random(1)
    addrs = [vaddr + rnd.randrange(size) for _ in range(SYM_ADDRESSES)]
    base = 0x7f0000000000
    d = os.path.join(work, "sym")
    os.makedirs(os.path.join(d, "in"))
    with open(os.path.join(d, "in", "p.pb.gz"), "wb") as f:
        f.write(gzip.compress(pprof_with_addresses(
            (base + vaddr, base + vaddr + size, off, lib, build_id), [base + a for a in addrs]), 1))
    with open(os.path.join(d, "profd.yaml"), "w") as f:
        f.write(SYM_CONFIG)
    with open(os.path.join(d, "addrs.txt"), "w") as f:
        f.write("\n".join("%#x" % a for a in addrs))
    rows = {"profd": [], "addr2line": []}
    stage = []   # seconds inside the symbolize processor, from its debug line
    for _ in range(RUNS):
        secs, kib, log = gnu_time_and_stderr([PROFD, "--config", os.path.join(d, "profd.yaml")],
                                             cwd=d)
        rows["profd"].append((secs, kib))
        stage.append(float(re.search(r"locations looked at in ([\d.]+) s", log).group(1)))
        with open(os.path.join(d, "addrs.txt")) as src, open(os.path.join(d, "a2l.txt"), "w") as dst:
            rows["addr2line"].append(gnu_time(["addr2line", "-f", "-i", "-a", "-e", lib],
                                              stdin=src, stdout=dst))
    med = {k: (statistics.median(t for t, _ in v), statistics.median(m for _, m in v))
           for k, v in rows.items()}
    debug_file = os.path.join("/usr/lib/debug/.build-id", build_id[:2], build_id[2:] + ".debug")
    same = compare_with_addr2line(os.path.join(d, "out", "p.pb.gz"), os.path.join(d, "a2l.txt"),
                                  base, lib, debug_file)
    pct = {k: 100.0 * v / sum(same.values()) for k, v in same.items()}   # distinct addresses
    in_stage = statistics.median(stage)
    print("| %d libc addresses | %.2f s, %.0f/s, %.1f MB; in the processor %.2f s, %.0f/s | "
          "%.2f s, %.0f/s, %.1f MB | %.1fx; %.1fx | %.2f%% identical, %.2f%% another alias, "
          "%.2f%% as llvm-symbolizer, %.2f%% padding named by addr2line alone, %.2f%% other |" % (
              len(addrs), med["profd"][0], len(addrs) / med["profd"][0], med["profd"][1] / 1024,
              in_stage, len(addrs) / in_stage, med["addr2line"][0],
              len(addrs) / med["addr2line"][0], med["addr2line"][1] / 1024,
              med["addr2line"][0] / max(med["profd"][0], 1e-3),
              med["addr2line"][0] / max(in_stage, 1e-3), pct["identical"], pct["alias"],
              pct["llvm"], pct["unnamed"], pct["other"]), flush=True)


def symbol_aliases(paths):
    """{function symbol name: its address} from the symbol tables of paths:
    names at one address are aliases of one function."""
    import re
    at = {}
    for path in paths:
        out = subprocess.run(["readelf", "-sW", path], capture_output=True, text=True).stdout
        for value, name in re.findall(r"^\s*\d+: ([0-9a-f]+)\s+\d+ (?:FUNC|IFUNC)\s+\S+\s+\S+\s+\S+ (\S+)",
                                      out, re.M):
            at.setdefault(name, int(value, 16))
    return at


def llvm_chains(lib, addrs):
    """{address: [(file, line)] innermost first} from llvm-symbolizer, or
    None when it is not installed."""
    if not shutil.which("llvm-symbolizer") or not addrs:
        return None
    out = subprocess.run(["llvm-symbolizer", "--obj=" + lib, "--debug-file-directory=/usr/lib/debug",
                          "-i", "-f"], input="\n".join("%#x" % a for a in addrs),
                         capture_output=True, text=True, timeout=600).stdout
    res = {}
    for a, block in zip(addrs, out.split("\n\n")):
        res[a] = []
        for where in block.strip("\n").splitlines()[1::2]:   # file:line:column
            file, line, _ = where.rsplit(":", 2)
            res[a].append(("" if file == "??" else file, int(line)))
    return res


def compare_with_addr2line(pprof_path, a2l_path, base, lib, debug_file):
    """Counts of addresses whose (function, file, line) chain, read the way
    the symbolize tests read both, is: identical to addr2line's; the same
    but for which alias of a function symbol is named; different from
    addr2line in files or lines where llvm-symbolizer agrees with profd
    (addr2line misreads some DWARF 5 file tables); named by addr2line
    alone (the padding past a function's end and alignment, which
    addr2line gives to the function before it and profd, as perf and
    llvm-symbolizer, to none); different otherwise."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
    import test_symbolize
    ours = test_symbolize.symbolized(pprof_path)
    with open(a2l_path) as f:
        theirs = test_symbolize.parse_addr2line(f.read())
    alias = symbol_aliases([lib, debug_file])
    counts = {"identical": 0, "alias": 0, "llvm": 0, "unnamed": 0, "other": 0}
    unsettled = []

    def same_function(a, b):
        return a == b or (a in alias and alias.get(a) == alias.get(b))

    for a, frames in theirs.items():
        got = ours.get(base + a) or []
        if got == frames:
            counts["identical"] += 1
        elif len(got) == len(frames) and all(same_function(g[0], t[0]) and g[1:] == t[1:]
                                             for g, t in zip(got, frames)):
            counts["alias"] += 1
        else:
            unsettled.append(a)
    llvm = llvm_chains(lib, unsettled) or {}
    for a in unsettled:
        got = [(f, n) for _, f, n in ours.get(base + a) or []]
        counts["llvm" if got and llvm.get(a) == got else "unnamed" if not got else "other"] += 1
    return counts


def main():
    work = tempfile.mkdtemp(prefix="profd-bench-")
    os.chmod(work, 0o755)   # the scrape benchmark's nginx workers read below it
    try:
        print("profd %s; median of %d runs each, on %d CPUs\n" % (
            subprocess.run([PROFD, "version"], capture_output=True, text=True).stdout.split()[1],
            RUNS, os.cpu_count()))
        if "codec" in SECTIONS:
            print("| decode + re-encode | profd convert | Go pprof -proto | speed-up | memory |")
            print("|---|---|---|---|---|")
            codec_bench("bigheap.pb.gz", os.path.join(CORPUS, "go", "bigheap.pb.gz"), work)
            codec_bench("bigheap -paths 600000", make_big(work), work)
            print()
        if "passthrough" in SECTIONS:
            pass_through_bench(work)
            print()
        if "perf" in SECTIONS:
            print("| input | size | profd convert | perf script | speed-up | profd RSS / file |")
            print("|---|---|---|---|---|---|")
            perf_bench(work, "fp", "20000")
            perf_bench(work, "dwarf", "1000")
            print()
        if "symbolize" in SECTIONS:
            print("| symbolize | profd (pprof_file -> symbolize -> pprof_file) | addr2line -f -i | "
                  "speed-up (whole run; processor) | same chains |")
            print("|---|---|---|---|---|")
            symbolize_bench(work)
            print()
        if "otlp" in SECTIONS:
            from otlp_bench import otlp_bench
            otlp_bench(BUILD, CORPUS, work)
            print()
        if "push" in SECTIONS:
            from push_bench import push_bench
            push_bench(BUILD, CORPUS, work, min(RUNS, 3))
            print()
        if "downsample" in SECTIONS:
            print("| merge | profd (pprof_file -> downsample -> pprof_file) | pprof -proto | "
                  "speed-up | same samples |")
            print("|---|---|---|---|---|")
            downsample_bench(work)
            print()
        if "retention" in SECTIONS:
            from retention_bench import retention_bench
            retention_bench(BUILD, work, min(RUNS, 3))
            print()
        if "k8s" in SECTIONS:
            from k8s_bench import k8s_bench
            k8s_bench(ROOT, min(RUNS, 3))
            print()
        if "scrape" in SECTIONS:
            scrape_work = os.path.join(work, "scrape")
            os.makedirs(scrape_work)
            scrape_bench(scrape_work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
