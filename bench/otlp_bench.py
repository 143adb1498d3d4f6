# SPDX-License-Identifier: Apache-2.0
"""OTLP benchmark (section "otlp" of make bench).

1. Codec: bench/otlp_codec times, per Go corpus profile, the pprof decoder
   (gzip'd and raw) next to the OTLP encoder and the OTLP decoder +
   translation into the profile model (what the receiver does per profile).
2. Export -> receive over loopback gRPC: OTLP_CLIENTS grpcio client
   processes (Python grpcio, the real peer), each on its own channel, send
   the corpus profiles as OTLP requests back to back for OTLP_SECONDS to a
   profd whose otlp receiver feeds a nop exporter: accepted profiles/s and
   MB/s, p50/p99 latency, and the receiver's RSS sampled every 0.2 s, its
   peak over the first and the second half of the run (a steady stream must
   not make it grow), next to its configured limits.
"""
import multiprocessing
import os
import statistics
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLIENTS = int(os.environ.get("OTLP_CLIENTS", "4"))
SECONDS = float(os.environ.get("OTLP_SECONDS", "10"))
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


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


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


def load_row(build, work, what, requests):
    """Starts a receiving profd, loads it with requests, prints one row."""
    cfg = os.path.join(work, "otlp.yaml")
    with open(cfg, "w") as f:
        f.write(RECEIVER)
    profd = subprocess.Popen([os.path.join(build, "profd"), "--config", cfg],
                             stderr=subprocess.PIPE, text=True)
    address = None
    for line in profd.stderr:
        if "OTLP/gRPC on " in line:
            address = line.split()[-1]
            break
    out = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=client, args=(address, requests, SECONDS, out))
             for _ in range(CLIENTS)]
    start, cpu0 = time.monotonic(), cpu_seconds(profd.pid)
    for p in procs:
        p.start()
    samples = []
    while any(p.is_alive() for p in procs) and time.monotonic() - start < SECONDS + 30:
        samples.append((time.monotonic() - start, rss_kib(profd.pid)))
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
