# SPDX-License-Identifier: Apache-2.0
"""OTLP benchmark (section "otlp" of make bench).

1. Codec: bench/otlp_codec times, per Go corpus profile, the pprof decoder
   (gzip'd and raw) and the quick proof of validity the push receivers
   make (raw), next to the OTLP encoder and the OTLP decoder +
   translation into the profile model (what the receiver does per profile).
2. Export -> receive over loopback gRPC: OTLP_CLIENTS grpcio client
   processes (Python grpcio, the real peer), each on its own channel, send
   the corpus profiles as OTLP requests back to back for OTLP_SECONDS to a
   profd whose otlp receiver feeds a nop exporter: accepted profiles/s and
   MB/s, p50/p99 latency, and the receiver's RSS sampled every 0.2 s, its
   peak over the first and the second half of the run (a steady stream must
   not make it grow), next to its configured limits.
3. A large request as JSON: the largest corpus profile's request posted to
   OTLP/HTTP as application/json and as application/x-protobuf, one at a
   time, each to a fresh profd (JSON_RUNS times): the time to the answer,
   profd's CPU, and how far its peak RSS rose above what it held idle,
   beside Python's json.loads of the same JSON (a reader that builds the
   document's tree) as the reference.
"""
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
import urllib.request

from proc_stats import cpu_seconds, memory_kib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLIENTS = int(os.environ.get("OTLP_CLIENTS", "4"))
SECONDS = float(os.environ.get("OTLP_SECONDS", "10"))
JSON_RUNS = int(os.environ.get("JSON_RUNS", "5"))
EXPORT = "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"

RECEIVER = """
receivers:
  otlp:
    protocols: {grpc: {endpoint: "127.0.0.1:0"}, http: {endpoint: ""}}
    max_request_body_size: 64MiB
exporters:
  nop: {sending_queue: {queue_size: 64MiB}}
service:
  telemetry: {metrics: {address: ""}, logs: {level: info}}
  pipelines:
    profiles: {receivers: [otlp], exporters: [nop]}
"""


def client(address, requests, seconds, out):
    """One load process: sends requests round robin until seconds pass."""
    import grpc
    lat, sent, nbytes, failed = [], 0, 0, 0
    with grpc.insecure_channel(address, options=[("grpc.max_send_message_length", 64 << 20)]) as ch:
        call = ch.unary_unary(EXPORT, request_serializer=lambda b: b,
                              response_deserializer=lambda b: b)
        end = time.monotonic() + seconds
        i = 0
        while time.monotonic() < end:
            body = requests[i % len(requests)]
            i += 1
            t = time.monotonic()
            try:
                call(body, timeout=30)
            except grpc.RpcError:
                failed += 1
                continue
            lat.append(time.monotonic() - t)
            sent += 1
            nbytes += len(body)
    out.put((sent, nbytes, failed, lat))


def otlp_bench(build, corpus, work):
    codec = os.path.join(build, "bench", "otlp_codec")
    names = sorted(f for f in os.listdir(os.path.join(corpus, "go")) if f.endswith(".pb.gz"))
    req_dir = os.path.join(work, "otlp")
    os.makedirs(req_dir, exist_ok=True)
    table = subprocess.run([codec, "-w", req_dir] + [os.path.join(corpus, "go", n) for n in names],
                           capture_output=True, text=True, check=True).stdout
    print(table)
    requests = [open(os.path.join(req_dir, "%d.otlp" % i), "rb").read() for i in range(len(names))]

    big = [r for r in requests if len(r) > 1 << 20]
    small = [r for r in requests if len(r) <= 1 << 20]
    print("| export -> receive (gRPC, %d grpcio clients, %.0f s each) | profiles/s | MB/s | "
          "receiver CPU | p50 / p99 latency | failed | receiver peak RSS, 1st / 2nd half |" %
          (CLIENTS, SECONDS))
    print("|---|---|---|---|---|---|---|")
    load_row(build, work, "%d small corpus profiles, round robin" % len(small), small)
    load_row(build, work, "bigheap (%.1f MB request)" % (len(big[0]) / 1e6), big)

    largest = max(range(len(requests)), key=lambda i: len(requests[i]))
    json_rows(build, work, names[largest], os.path.join(req_dir, "%d" % largest))


def start_receiver(build, work, config, announced):
    """A profd running config: (the process, the address its log line
    starting with announced gives)."""
    cfg = os.path.join(work, "otlp.yaml")
    with open(cfg, "w") as f:
        f.write(config)
    profd = subprocess.Popen([os.path.join(build, "profd"), "--config", cfg],
                             stderr=subprocess.PIPE, text=True)
    for line in profd.stderr:
        if announced in line:
            return profd, line.split()[-1]
    profd.wait(timeout=60)
    sys.exit("profd did not start its OTLP receiver")


HTTP_RECEIVER = RECEIVER.replace('{grpc: {endpoint: "127.0.0.1:0"}, http: {endpoint: ""}}',
                                 '{grpc: {endpoint: ""}, http: {endpoint: "127.0.0.1:0"}}')


def one_post(build, work, body, content_type):
    """Posts body to a fresh profd's OTLP/HTTP: (seconds to the answer,
    profd's CPU seconds, its peak RSS rise in MB)."""
    profd, address = start_receiver(build, work, HTTP_RECEIVER, "OTLP/HTTP on ")
    try:
        idle, cpu = memory_kib(profd.pid, "VmHWM"), cpu_seconds(profd.pid)
        req = urllib.request.Request("http://%s/v1development/profiles" % address, data=body,
                                     headers={"Content-Type": content_type})
        start = time.monotonic()
        urllib.request.urlopen(req, timeout=120).read()
        took = time.monotonic() - start
        return (took, cpu_seconds(profd.pid) - cpu,
                (memory_kib(profd.pid, "VmHWM") - idle) / 1024)
    finally:
        profd.terminate()
        profd.wait(timeout=60)


PYTHON_LOADS = """
import json, resource, sys, time
body = open(sys.argv[1], "rb").read()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.monotonic()
json.loads(body)
took = time.monotonic() - start
print(took, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)
"""


def json_rows(build, work, name, path):
    """Part 3: the request at path (.otlp and .json) as JSON and protobuf."""
    json_body = open(path + ".json", "rb").read()
    proto_body = open(path + ".otlp", "rb").read()
    rows = []
    for what, body, ctype in [("OTLP/JSON", json_body, "application/json"),
                              ("OTLP/protobuf", proto_body, "application/x-protobuf")]:
        runs = [one_post(build, work, body, ctype) for _ in range(JSON_RUNS)]
        rows.append((what, len(body), [statistics.median(c) for c in zip(*runs)]))
    ref = [subprocess.run([sys.executable, "-c", PYTHON_LOADS, path + ".json"], check=True,
                          capture_output=True, text=True).stdout.split() for _ in range(JSON_RUNS)]
    ref_took, ref_mb = (statistics.median(float(r[k]) for r in ref) for k in (0, 1))
    print()
    print("| %s's request, OTLP/HTTP, median of %d | bytes | profd to the answer | profd CPU | "
          "profd peak RSS rise | Python json.loads | its peak RSS rise |" % (name, JSON_RUNS))
    print("|---|---|---|---|---|---|---|")
    for what, size, (took, cpu, rise) in rows:
        loads = "%.2f s | %.0f MB" % (ref_took, ref_mb) if what == "OTLP/JSON" else "- | -"
        print("| %s | %d | %.2f s | %.2f s | %.0f MB | %s |" % (what, size, took, cpu, rise,
                                                                   loads))


def load_row(build, work, what, requests):
    """Starts a receiving profd, loads it with requests, prints one row."""
    profd, address = start_receiver(build, work, RECEIVER, "OTLP/gRPC on ")
    out = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=client, args=(address, requests, SECONDS, out))
             for _ in range(CLIENTS)]
    start, cpu0 = time.monotonic(), cpu_seconds(profd.pid)
    for p in procs:
        p.start()
    samples = []
    while any(p.is_alive() for p in procs) and time.monotonic() - start < SECONDS + 30:
        samples.append((time.monotonic() - start, memory_kib(profd.pid)))
        time.sleep(0.2)
    results = [out.get() for _ in procs]
    for p in procs:
        p.join()
    elapsed = time.monotonic() - start
    cpu = cpu_seconds(profd.pid) - cpu0
    profd.terminate()
    profd.wait(timeout=60)
    sent = sum(r[0] for r in results)
    nbytes = sum(r[1] for r in results)
    failed = sum(r[2] for r in results)
    lat = sorted(x for r in results for x in r[3])
    first = max((k for t, k in samples if t < SECONDS / 2), default=0)
    second = max((k for t, k in samples if t >= SECONDS / 2), default=0)
    print("| %s | %.0f | %.1f | %.0f%% | %.1f / %.1f ms | %d | %.1f / %.1f MB |" % (
        what, sent / elapsed, nbytes / elapsed / 1e6, 100 * cpu / elapsed,
        statistics.median(lat) * 1e3 if lat else 0,
        lat[int(len(lat) * 0.99)] * 1e3 if lat else 0, failed, first / 1024, second / 1024))
