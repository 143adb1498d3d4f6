# SPDX-License-Identifier: Apache-2.0
"""Push benchmark (section "push" of make bench).

wrk (PUSH_CONNECTIONS connections on 2 threads, PUSH_SECONDS per run) posts
Go corpus profiles round robin, each with its own series label: the seven
runtime profiles an SDK or agent pushes each cycle (0.4-1.9 KB gzip'd),
then the same with the 149 KB CPU profile of the Go compiler among them
(bigheap, 346 KB, is left out). They go to

  - profd's pyroscope receiver, through a relabel processor into a
    pprof_file exporter writing every profile as a file, as `/ingest`
    (format=pprof, the gzip'd profile as the body, the application named
    with the type suffix a legacy client gives it) and as push.v1 over
    Connect (a PushRequest of one series and one sample, application/proto).
    The files go to /dev/shm when there is one with room for them, so the
    figures are the pipeline's rather than the disk's;
  - nginx answering 200 from a static location (`return 200`, the body read
    and dropped) to the same requests: the cost of just HTTP on this
    machine.

Printed per API: accepted requests/s and p99 latency, median of RUNS runs,
the ratio profd/nginx, the CPU each server spent a request (user + system
over the run, all threads or worker processes: steadier than the rates on
a shared machine, and what decides the ratio when the load generator
shares the CPUs), the share of the accepted profiles that were files when
wrk stopped (the rest waited in the exporter's queue and were written while
profd stopped), the CPU the exporter's sender thread (named pprof_file)
took a file of those, to hold against the floor below, and the
lost-profile check: every request profd answered
2xx must be a file once it has stopped (files beyond that were answered
after wrk stopped counting).

Each row has a second one with the same pipeline ending in the nop exporter
instead of pprof_file: what the receiver and relabel cost alone. Under the
table, the floor of the files themselves: bench/file_floor.c writing the
same profiles into the same kind of directory tree the way pprof_file does,
and nothing else: once, then again on the pages the first pass freed.
"""
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from proc_stats import cpu_seconds, thread_cpu_seconds

SECONDS = int(os.environ.get("PUSH_SECONDS", "10"))
CONNECTIONS = int(os.environ.get("PUSH_CONNECTIONS", "64"))

PIPELINE = """
receivers:
  pyroscope: {endpoint: "127.0.0.1:0", max_request_body_size: 16MiB}
processors:
  relabel:
    rules:
      - {action: replace, target_label: env, replacement: bench}
      - {action: labeldrop, regex: "__tenant_id__"}
exporters:
  pprof_file:
    directory: %s
    path_template: "{__name__}/{i}/{unix_nanos}.pb.gz"
    sending_queue: {queue_size: 256MiB}
service:
  telemetry: {metrics: {address: ""}, logs: {level: info}}
  pipelines:
    profiles: {receivers: [pyroscope], processors: [relabel], exporters: [pprof_file]}
"""

# The same pipeline ending in the nop exporter: the receiver and relabel alone.
NOP_PIPELINE = re.sub(r"exporters:\n(  .*\n)+", "exporters: {nop: {}}\n", PIPELINE).replace(
    "exporters: [pprof_file]", "exporters: [nop]")

NGINX = """worker_processes auto;
error_log %(dir)s/nginx.err warn;
pid %(dir)s/nginx.pid;
events { worker_connections 4096; }
http {
    access_log off;
    client_max_body_size 16m;
    client_body_buffer_size 1m;
    server {
        listen 127.0.0.1:%(port)d;
        location / { return 200; }
    }
}
"""

# wrk's script: the requests, one per file, sent round robin; the path and
# content type come first in each file, separated from the body by "\n\n".
WRK_SCRIPT = """
local reqs = {}
function init(args)   -- formatted here, once wrk knows the Host header
  for i, f in ipairs({%s}) do
    local h = io.open(f, "rb"); local all = h:read("*a"); h:close()
    local path, ctype, body = all:match("^([^\\n]*)\\n([^\\n]*)\\n\\n(.*)$")
    reqs[i] = wrk.format("POST", path, {["Content-Type"] = ctype}, body)
  end
end
local n = 0
request = function()
  n = n + 1
  return reqs[(n %% #reqs) + 1]
end
"""


def push_request(labels, raw):
    """A push.v1 PushRequest of one series with one sample, encoded by the
    classes protoc makes from proto/pyroscope/push.proto (the tests' way)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, os.path.join(root, "tests", "integration"))
    from harness import protoc_modules
    push_pb2 = protoc_modules("pyroscope", ["push.proto"])[0]
    return push_pb2.PushRequest(series=[push_pb2.RawProfileSeries(
        labels=[push_pb2.LabelPair(name=k, value=v) for k, v in labels],
        samples=[push_pb2.RawSample(raw_profile=raw)])]).SerializeToString()


# The type suffix a legacy Pyroscope client names each corpus profile's
# application with on /ingest (app.cpu, app.inuse_space, ...). threadcreate
# has none, so the receiver reads its family from the profile (a decode).
INGEST_SUFFIX = {"allocs": "alloc_space", "block": "block_count", "cpu": "cpu",
                 "goroutine": "goroutines", "heap": "inuse_space", "mutex": "mutex_count"}


def write_requests(corpus, work, names):
    """The request files for each API: {api: [paths]}."""
    out = {"ingest": [], "push": []}
    for i, name in enumerate(names):
        raw = open(os.path.join(corpus, "go", name), "rb").read()
        family = name.split(".")[0]
        kind = name.split(".")[-3]   # compile-nethttp.cpu.pb.gz: cpu
        reqs = {
            "ingest": ("/ingest?name=bench.%s%%7Bi%%3D%d%%7D&format=pprof&from=1700000000"
                       "&until=1700000010" % (INGEST_SUFFIX.get(kind, kind), i),
                       "application/octet-stream", raw),
            "push": ("/push.v1.PusherService/Push", "application/proto",
                     push_request([("__name__", family), ("service_name", "bench"),
                                         ("i", str(i))], raw)),
        }
        for api, (path, ctype, body) in reqs.items():
            p = os.path.join(work, "%s-%d.req" % (api, i))
            with open(p, "wb") as f:
                f.write(path.encode() + b"\n" + ctype.encode() + b"\n\n" + body)
            out[api].append(p)
    return out


def wrk(url, script):
    """One wrk run: (2xx requests, requests/s of them, p99 ms, non-2xx)."""
    r = subprocess.run(["wrk", "-t", "2", "-c", str(CONNECTIONS), "-d", "%ds" % SECONDS,
                        "--latency", "-s", script, url],
                       capture_output=True, text=True, timeout=SECONDS + 120)
    text = r.stdout
    done = re.search(r"(\d+) requests in ([\d.]+)s", text)
    if not done:
        sys.exit("wrk: " + (text + r.stderr).strip())
    total, secs = int(done.group(1)), float(done.group(2))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    bad = int(bad.group(1)) if bad else 0
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)",
                       text)
    if errors and int(errors.group(1)) + int(errors.group(4)):
        print("  (wrk: %s)" % errors.group(0), file=sys.stderr)
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)\b", text)
    scale = {"us": 1e-3, "ms": 1.0, "s": 1e3}[p99.group(2)]
    return total - bad, (total - bad) / secs, float(p99.group(1)) * scale, bad


def children_of(pid):
    """The pids whose parent is pid."""
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        kids.append(int(entry))
            except OSError:
                pass
    return kids


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def count_files(root):
    return sum(len(files) for _, _, files in os.walk(root))


def profd_run(build, work, out, script, files=True):
    """One run against profd, its pipeline ending in pprof_file (files) or
    nop: (accepted, rate, p99, refused, lost, CPU us a request, the share of
    the accepted that were files when wrk stopped, the CPU us the exporter's
    sender thread took a file written while wrk ran); no files, no losses."""
    shutil.rmtree(out, ignore_errors=True)
    cfg = os.path.join(work, "push.yaml")
    with open(cfg, "w") as f:
        f.write(PIPELINE % out if files else NOP_PIPELINE)
    profd = subprocess.Popen([os.path.join(build, "profd"), "--config", cfg],
                             stderr=subprocess.PIPE, text=True)
    address = None
    for line in profd.stderr:
        if "Pyroscope ingest and push.v1" in line and " on " in line:
            address = line.split(" on ")[1].split()[0]
            break
    if not address:
        sys.exit("profd did not start")
    # its log is read on, so a full pipe never stops it
    drain = threading.Thread(target=lambda: [None for _ in profd.stderr], daemon=True)
    drain.start()
    try:
        before = cpu_seconds(profd.pid)
        writer_before = thread_cpu_seconds(profd.pid, "pprof_file")
        accepted, rate, p99, refused = wrk("http://" + address, script)
        cpu = cpu_seconds(profd.pid) - before
        writer = thread_cpu_seconds(profd.pid, "pprof_file") - writer_before
        on_time = count_files(out)
    finally:
        profd.send_signal(signal.SIGTERM)
        profd.wait(timeout=120)
        drain.join(timeout=10)
    lost = max(0, accepted - count_files(out)) if files else 0
    return (accepted, rate, p99, refused, lost, cpu * 1e6 / max(1, accepted + refused),
            min(1.0, on_time / max(1, accepted)), writer * 1e6 / max(1, on_time))


def nginx_run(work, script):
    port = free_port()
    conf = os.path.join(work, "nginx.conf")
    with open(conf, "w") as f:
        f.write(NGINX % {"dir": work, "port": port})
    nginx = subprocess.Popen(["nginx", "-c", conf, "-p", work, "-g", "daemon off;"])
    try:
        deadline = time.monotonic() + 30
        # up: it accepts, and has its worker_processes auto (one per CPU)
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                workers = children_of(nginx.pid)
                if len(workers) >= os.cpu_count():
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                sys.exit("nginx did not come up")
            time.sleep(0.05)
        before = sum(cpu_seconds(w) for w in workers)
        accepted, rate, p99, refused = wrk("http://127.0.0.1:%d" % port, script)
        cpu = sum(cpu_seconds(w) for w in workers) - before
    finally:
        nginx.terminate()
        nginx.wait(timeout=30)
    return accepted, rate, p99, refused, cpu * 1e6 / max(1, accepted + refused)


# The files a run may leave (a run of the small mix makes about a million)
# and the room each may take: a file system with less room than that for
# them would lose profiles for want of it, not for anything profd did.
ROOM_FILES = 2000000


def room_for_the_files(path):
    """Whether path's file system has inodes and 4 KiB blocks free for
    ROOM_FILES files."""
    st = os.statvfs(path)
    return st.f_favail >= ROOM_FILES and st.f_bavail * st.f_frsize >= ROOM_FILES * 4096


def push_bench(build, corpus, work, runs):
    if not shutil.which("wrk"):
        sys.exit("wrk is missing: scripts/deps.sh test installs it")
    work = os.path.join(work, "push")
    os.makedirs(work)
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else work
    if shm != work and not room_for_the_files(shm):
        print("(%s has room for fewer than %d files of 4 KiB: the files go to %s)"
              % (shm, ROOM_FILES, work))
        shm = work
    out = tempfile.mkdtemp(prefix="profd-push-", dir=shm)
    go = sorted(f for f in os.listdir(os.path.join(corpus, "go")) if f.endswith(".pb.gz"))
    small = [n for n in go if os.path.getsize(os.path.join(corpus, "go", n)) < 4096]
    mixes = [("%d runtime profiles" % len(small), small),
             ("+ compile-nethttp.cpu", small + ["compile-nethttp.cpu.pb.gz"])]
    print("| push, wrk %d connections, %d s | profd accepted/s | p99 | nginx 200s/s | p99 | "
          "profd / nginx | CPU a request, profd / nginx | files by wrk's end | CPU a file, "
          "the writer | refused (429) | lost |" % (CONNECTIONS, SECONDS))
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    try:
        for what, names in mixes:
            requests = write_requests(corpus, work, names)
            for api in ("ingest", "push"):
                one_row(build, work, out, runs, api, requests[api], what)
        floor = [file_floor(build, out, [os.path.join(corpus, "go", n) for n in small])
                 for _ in range(runs)]
        first, again = [f[0] for f in floor], [f[1] for f in floor]
        print("\nThe files alone (bench/file_floor.c: the %d runtime profiles written %d "
              "times the way pprof_file writes them, into the same kind of tree on the same "
              "file system): %.1f us of CPU a file (min %.1f, max %.1f); written again at once "
              "on the pages the first pass freed, %.1f us (min %.1f, max %.1f)." % (
                  len(small), FLOOR_FILES, statistics.median(first), min(first), max(first),
                  statistics.median(again), min(again), max(again)))
    finally:
        shutil.rmtree(out, ignore_errors=True)


FLOOR_FILES = 200000


def file_floor(build, out, profiles):
    """CPU microseconds the kernel and libc take to write one profile as a
    file, alone: bench/file_floor.c, its files removed afterwards. Two
    figures: the first pass, then a second at once on the pages the first
    freed (on a virtual machine that gives freed memory back to its host,
    the first pays the host's faults on pages it gets back)."""
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    r = subprocess.run([os.path.join(build, "bench", "file_floor"), out, str(FLOOR_FILES)]
                       + profiles, capture_output=True, text=True, check=True, timeout=600)
    shutil.rmtree(out, ignore_errors=True)
    figures = r.stdout.split()
    return float(figures[0]), float(figures[2])


def one_row(build, work, out, runs, api, requests, what):
    script = os.path.join(work, api + ".lua")
    with open(script, "w") as f:
        f.write(WRK_SCRIPT % ", ".join('"%s"' % p for p in requests))
    # profd (with files, then without) and nginx runs alternate so all see
    # the same machine load
    ours, nop, theirs = [], [], []
    for _ in range(runs):
        ours.append(profd_run(build, work, out, script))
        nop.append(profd_run(build, work, out, script, files=False))
        theirs.append(nginx_run(work, script))
    name = "/ingest (pprof)" if api == "ingest" else "push.v1 (Connect, proto)"
    print_row("%s, %s" % (name, what), ours, theirs, True)
    print_row("%s, %s, relabel -> nop" % (name, what), nop, theirs, False)


def print_row(what, ours, theirs, files):
    """A table row: profd's runs against nginx's, medians."""
    rate = statistics.median(r[1] for r in ours)
    ref = statistics.median(r[1] for r in theirs)
    print("| %s | %.0f (min %.0f, max %.0f) | %.1f ms | %.0f | %.1f ms | %.2f | "
          "%.1f / %.1f us | %s | %s | %d | %s |" % (
              what, rate, min(r[1] for r in ours), max(r[1] for r in ours),
              statistics.median(r[2] for r in ours), ref,
              statistics.median(r[2] for r in theirs), rate / ref,
              statistics.median(r[5] for r in ours), statistics.median(r[4] for r in theirs),
              "%.0f%%" % (100 * statistics.median(r[6] for r in ours)) if files else "-",
              "%.1f us" % statistics.median(r[7] for r in ours) if files else "-",
              sum(r[3] for r in ours), sum(r[4] for r in ours) if files else "-"), flush=True)
