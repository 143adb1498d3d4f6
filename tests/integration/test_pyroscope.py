# SPDX-License-Identifier: Apache-2.0
"""Pyroscope in and out: profd -> profd over push.v1 (Connect) and /ingest
for every Go corpus profile, folded stacks and the statuses /ingest answers
with, push.v1 over gRPC from grpcio, and a Python HTTP server playing
Pyroscope (messages from protoc over proto/pyroscope) checking what the
exporter sends, cleaned labels included, and answering as Pyroscope would."""
import base64
import collections
import gzip
import http.server
import json
import os
import re
import shutil
import threading
import time
import unittest

from harness import (DEADLINE, GO_CORPUS, Profd, ProfdTestCase, corpus_files, exported_counts,
                     h2c_post, http_post, metric_value, protoc_modules, push_series, raw_pprof,
                     TENANT_RULES, wait_until)

PUSH = "/push.v1.PusherService/Push"
# /ingest of a profile named app.alloc_space{i=<n>}: % (address, n)
INGEST_I = "http://%s/ingest?name=app.alloc_space%%7Bi%%3D%d%%7D&format=pprof"

try:
    import grpc
except ImportError:
    grpc = None

_pb = None


def pb():
    """push_pb2, generated once."""
    global _pb
    if _pb is None:
        _pb = protoc_modules("pyroscope", ["push.proto"])[0]
    return _pb


RECEIVER = """
receivers:
  pyroscope: {endpoint: "127.0.0.1:0"}
exporters:
  pprof_file: {directory: ./profiles, path_template: "%s"}
service:
  telemetry: {metrics: {address: ""}}
  pipelines:
    profiles: {receivers: [pyroscope], exporters: [pprof_file]}
"""

SENDER = """
receivers:
  pprof_file: {include: ["%s/*.pb.gz"], after_ingest: keep, source_label: __file__}
exporters:
  pyroscope: {%s}
service:
  telemetry: {metrics: {address: "127.0.0.1:0"}}
  pipelines:
    profiles: {receivers: [pprof_file], exporters: [pyroscope]}
"""


def address(p):
    """Where the receiver listens: HTTP/1.1, HTTP/2 and gRPC on one port."""
    return p.listening("Pyroscope ingest and push.v1 (HTTP/1.1, HTTP/2, gRPC)")


def gated_config(port, block_timeout, pipelines, receivers="",
                 telemetry='{metrics: {address: ""}}'):
    """A config with a Pyroscope receiver (and receivers, config lines under
    `receivers:`), a pyroscope exporter in front of a gated_backend on port,
    pprof_file writing ./profiles/{service_name}/{i}.pb.gz, and pipelines
    (lines under `pipelines:`). While the backend refuses, the exporter's
    one sender retries the first batch, its queue of 1 KiB holds the second,
    and the third finds the queue full and waits up to block_timeout."""
    return """
receivers:
  pyroscope: {endpoint: "127.0.0.1:0"}
  %s
exporters:
  pyroscope:
    endpoint: "http://127.0.0.1:%d"
    sending_queue: {queue_size: 1KiB, block_timeout: %s, flush_timeout: 0s, num_consumers: 1}
    shutdown_timeout: 1s
    retry_on_failure: {initial_interval: 20ms, max_interval: 50ms, max_elapsed_time: 0s}
  pprof_file: {directory: ./profiles, path_template: "{service_name}/{i}.pb.gz"}
service:
  telemetry: %s
  pipelines:
    %s
""" % (receivers, port, block_timeout, telemetry, pipelines)


def gated_backend(backend, lock, take):
    """A handler playing Pyroscope's push.v1 that answers backend["status"]
    (read under lock) and, when that is 200, hands the request's series to
    take (under lock)."""
    push_pb2 = pb()

    class Backend(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            req = push_pb2.PushRequest.FromString(
                self.rfile.read(int(self.headers["Content-Length"])))
            with lock:
                status = backend["status"]
                if status == 200:
                    take(req.series)
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass
    return Backend


def period_stacks(prof):
    """The distinct stacks of prof (class.method:line, leaf first), each with
    its value in periods: [[periods, [frame, ...]], ...], most first."""
    stacks = collections.Counter()
    for s in prof.sample:
        frames = []
        for loc_id in s.location_id:
            line = prof.location[loc_id - 1].line[0]
            frames.append("%s:%d" % (prof.string_table[prof.function[line.function_id - 1].name],
                                     line.line))
        stacks[tuple(frames)] += s.value[0] // prof.period
    return sorted([[n, list(k)] for k, n in stacks.items()], key=lambda x: (-x[0], x[1]))


def stand_in(got, answers):
    """A handler playing Pyroscope's push.v1: appends (path, headers,
    PushRequest) to got and answers with the next of answers (the last one
    from then on)."""
    push_pb2 = pb()
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            with lock:
                got.append((self.path, dict(self.headers), push_pb2.PushRequest.FromString(body)))
                status = answers.pop(0) if len(answers) > 1 else answers[0]
            self.send_response(status)
            self.send_header("Content-Type", "application/proto")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass
    return Handler


def sdk_form(parts, boundary="profdboundary"):
    """A multipart/form-data upload as Pyroscope's SDKs make it, of parts
    [(field, bytes)]: (body, headers)."""
    body = b"".join(b"--%s\r\nContent-Disposition: form-data; name=\"%s\"; "
                    b"filename=\"%s\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                    % (boundary.encode(), n.encode(), n.encode()) + data + b"\r\n"
                    for n, data in parts) + b"--%s--\r\n" % boundary.encode()
    return body, {"Content-Type": "multipart/form-data; boundary=" + boundary}


class PyroscopeTest(ProfdTestCase):

    def spool_corpus(self):
        os.makedirs(self.path("spool"))
        for name in corpus_files():
            shutil.copyfile(os.path.join(GO_CORPUS, name), self.path("spool", name))

    def round_trip(self, api, template, exporter_extra=""):
        receiver = self.start(RECEIVER % template)
        http_addr = address(receiver)
        self.spool_corpus()
        os.makedirs(self.path("sender"))
        sender = Profd(self.path("sender"), SENDER % (
            self.path("spool"), 'endpoint: "http://%s", api: %s%s' % (http_addr, api,
                                                                      exporter_extra)))
        self.procs.append(sender)
        return receiver, sender

    def test_push_profd_to_profd_with_tenant_and_external_labels(self):
        receiver, sender = self.round_trip(
            "push", "{__tenant_id__}/{env}/{__file__}",
            ", tenant: team-a, external_labels: {env: test}")
        outs = [self.path("profiles", "team-a", "test", n) for n in corpus_files()]
        wait_until(lambda: all(os.path.exists(o) for o in outs), "every profile pushed")
        for name, out in zip(corpus_files(), outs):
            self.assertEqual(raw_pprof(out), raw_pprof(os.path.join(GO_CORPUS, name)), name)
        self.assertEqual(sender.stop(), 0)
        self.assertEqual(receiver.stop(), 0)

    def test_a_gateway_carries_each_tenant_through(self):
        """profd as a gateway between agents and a store (another profd):
        what each agent pushed with its X-Scope-OrgID arrives under that
        tenant, over push.v1, over OTLP and over Parca's WriteRaw, with no
        tenant of the gateway's own."""
        store = self.start(RECEIVER.replace(
            'pyroscope: {endpoint: "127.0.0.1:0"}',
            'pyroscope: {endpoint: "127.0.0.1:0"}\n  otlp: {protocols: {grpc: {endpoint: '
            '"127.0.0.1:0"}, http: {endpoint: ""}}}\n  parca: {endpoint: "127.0.0.1:0"}').replace(
            "receivers: [pyroscope]", "receivers: [pyroscope, otlp, parca]") %
            "{route}/{__tenant_id__}/{f}")
        gateway_yaml = """
receivers:
  pyroscope: {endpoint: "127.0.0.1:0"}
processors:
  relabel/push: {rules: [{target_label: route, replacement: push}]}
  relabel/otlp: {rules: [{target_label: route, replacement: otlp}]}
  relabel/parca: {rules: [{target_label: route, replacement: parca}]}
exporters:
  pyroscope: {endpoint: "http://%s"}
  otlp: {endpoint: "%s"}
  parca: {endpoint: "%s"}
service:
  telemetry: {metrics: {address: ""}}
  pipelines:
    profiles/push: {receivers: [pyroscope], processors: [relabel/push], exporters: [pyroscope]}
    profiles/otlp: {receivers: [pyroscope], processors: [relabel/otlp], exporters: [otlp]}
    profiles/parca: {receivers: [pyroscope], processors: [relabel/parca], exporters: [parca]}
""" % (address(store), store.listening("OTLP/gRPC"),
       store.listening("Parca WriteRaw (gRPC, and the gateway's JSON)"))
        os.makedirs(self.path("gateway"))
        gateway = Profd(self.path("gateway"), gateway_yaml)
        self.procs.append(gateway)
        for tenant, f in (("team-x", "a"), ("team-y", "b")):
            push_series(address(gateway), "f", [f], {"X-Scope-OrgID": tenant})
        want = [route + "/" + t for route in ("otlp", "parca", "push") for t in ("team-x/a", "team-y/b")]
        for path in want:
            wait_until(lambda: os.path.exists(self.path("profiles", path)), path)
        self.assertEqual(gateway.stop(), 0)
        self.assertEqual(store.stop(), 0)
        self.assertEqual(sorted(os.path.relpath(os.path.join(d, f), self.path("profiles"))
                                for d, _, fs in os.walk(self.path("profiles")) for f in fs),
                         want)

    def test_status_says_where_the_receiver_listens(self):
        """/status.json gives the receiver's address, its port resolved
        (127.0.0.1:0 in the config); /status shows it in its row."""
        import json
        import urllib.request
        p = self.start(RECEIVER.replace('address: ""', 'address: "127.0.0.1:0"') % "{__file__}")
        url = p.telemetry_url()
        with urllib.request.urlopen(url + "/status.json", timeout=10) as r:
            receiver = json.loads(r.read())["components"][0]
        self.assertEqual((receiver["kind"], receiver["listening"]), ("receiver", [address(p)]))
        with urllib.request.urlopen(url + "/status", timeout=10) as r:
            self.assertIn("<td>running</td><td>%s</td>" % address(p), r.read().decode())
        self.assertEqual(p.stop(), 0)

    def test_tenant_ids_are_held_to_pyroscopes_rules(self):
        """X-Scope-OrgID becomes __tenant_id__ when it is a tenant ID as
        Pyroscope's multi-tenant mode takes one; else the request is
        refused 401, saying why."""
        p = self.start(RECEIVER % "{__tenant_id__}.{service_name}")
        url = "http://%s/ingest?format=folded&name=" % address(p)
        status, resp = http_post(url + "app", b"main 1\n", {"X-Scope-OrgID": "team-a.(1)*!'_"})
        self.assertEqual(status, 200, resp)
        out = self.path("profiles", "team-a._1_____.app")   # made a safe file name
        wait_until(lambda: os.path.exists(out), "the tenant's profile")
        for tenant, why in [("team a", b"unsupported byte 0x20"),
                            ("team/a", b"unsupported character '/'"),
                            ("t" * 151, b"too long: max 150 characters"),
                            ("..", b"'.' or '..'")]:
            status, resp = http_post(url + "app", b"main 1\n", {"X-Scope-OrgID": tenant})
            self.assertEqual((status, why in resp), (401, True), (tenant, resp))
        status, resp = http_post(url + "app", b"main 1\n", {"X-Scope-OrgID": "t" * 150})
        self.assertEqual(status, 200, resp)
        self.assertEqual(p.stop(), 0)

    def test_ingest_profd_to_profd(self):
        receiver, sender = self.round_trip("ingest", "{pyroscope_spy}/{__file__}",
                                           ", external_labels: {pyroscope_spy: rbspy}")
        outs = [self.path("profiles", "rbspy", n) for n in corpus_files()]
        wait_until(lambda: all(os.path.exists(o) for o in outs), "every profile ingested")
        for name, out in zip(corpus_files(), outs):
            self.assertEqual(raw_pprof(out), raw_pprof(os.path.join(GO_CORPUS, name)), name)

    def test_ingest_folded_stacks_and_its_errors(self):
        p = self.start(RECEIVER % "{service_name}.{__name__}.{env}")
        http_addr = address(p)
        base = "http://%s/ingest?name=app.cpu%%7Benv%%3Dprod%%7D&from=1700000000" \
               "&until=1700000010&sampleRate=100" % http_addr
        status, body = http_post(base, b"main;foo;bar 3\nmain;baz 2\n")
        self.assertEqual(status, 200, body)
        out = self.path("profiles", "app.process_cpu.prod")
        wait_until(lambda: os.path.exists(out), "the folded profile")
        raw = raw_pprof(out)
        self.assertIn("samples/count cpu/nanoseconds", raw)
        self.assertRegex(raw, r"\n +3 +30000000: 1 2 3 \n")   # bar foo main, 10 ms each
        self.assertRegex(raw, r"\n +2 +20000000: 4 3 \n")
        self.assertRegex(raw, r"1: 0x0 (M=1 )?bar :0 s=0")
        status, body = http_post(base, b"main;foo 1\nmain;;x 2\n")
        self.assertEqual(status, 422)
        self.assertIn(b"line 2", body)
        status, body = http_post(base, b"main;foo one\n")
        self.assertEqual(status, 422)
        self.assertIn(b"line 1", body)
        status, body = http_post("http://%s/ingest?from=1" % http_addr, b"main 1\n")
        self.assertEqual(status, 400)
        self.assertIn(b"name", body)
        status, body = http_post(base.replace("from=1700000000", "from=1800000000"), b"main 1\n")
        self.assertEqual(status, 400)
        status, body = http_post(base + "&format=trie", b"\x05ab")
        self.assertEqual((status, body), (422, b"trie body: a node cut short at byte 0\n"))
        status, body = http_post(base, b"x", {"Content-Type": "binary/octet-stream+tree"})
        self.assertEqual((status, body), (422, b"tree body: a node cut short at byte 0\n"))
        status, body = http_post(base, b"x", {"Content-Type": "binary/octet-stream+speedscope"})
        self.assertEqual(status, 422)   # no Content-Type of its own: folded, as in Pyroscope
        status, body = http_post(base + "&format=speedscope", b"{}")
        self.assertEqual((status, body), (422, b'speedscope body: $schema is not '
                                               b'"https://www.speedscope.app/file-format-'
                                               b'schema.json"\n'))
        status, body = http_post(base + "&format=flamegraph", b"main 1\n")
        self.assertEqual(status, 415)
        self.assertIn(b'format "flamegraph" is not supported', body)
        status, body = http_post(base + "&format=pprof", b"not a profile")
        self.assertEqual(status, 422)
        self.assertEqual(p.stop(), 0)

    def test_ingest_formats_as_pyroscope_names_them(self):
        """folded (what pyroscope-rs agents send) and groups are "stack count"
        lines; lines is a stack a line, each one sample, as Pyroscope reads it
        (a trailing number is part of the leaf's name)."""
        p = self.start(RECEIVER % "{env}")
        def url(fmt):
            return "http://%s/ingest?name=app.cpu%%7Benv%%3D%s%%7D&format=%s" % (address(p), fmt,
                                                                                 fmt)
        for fmt in ("folded", "groups", "lines"):
            status, body = http_post(url(fmt), b"main;foo 2\nmain;foo 2\nmain;bar\n")
            self.assertEqual(status, 200 if fmt == "lines" else 422, (fmt, body))
        status, body = http_post(url("folded"), b"main;foo 2\nmain;bar 1\n")
        self.assertEqual(status, 200, body)
        outs = {f: self.path("profiles", f) for f in ("folded", "lines")}
        wait_until(lambda: all(os.path.exists(o) for o in outs.values()), "both profiles")
        lines = raw_pprof(outs["lines"])
        self.assertRegex(lines, r"\d+: 0x0 (M=1 )?foo 2 :0 s=0")
        self.assertRegex(lines, r"\n +2 +20000000: 1 2 \n")   # "main;foo 2" twice: one each
        self.assertRegex(lines, r"\n +1 +10000000: 3 2 \n")
        folded = raw_pprof(outs["folded"])
        self.assertRegex(folded, r"\n +2 +20000000: \d+ \d+ \n")
        self.assertNotIn("foo 2", folded)
        self.assertEqual(p.stop(), 0)

    def test_ingest_speedscope_files(self):
        """format=speedscope: a profile a record, named by profile_name, its
        family from its unit; go tool pprof reads the time each stack took
        (a sampled profile's weights, an evented one's time between events)
        and the frames' files and lines."""
        frames = [{"name": "main", "file": "app.py", "line": 1},
                  {"name": "handle", "file": "app.py", "line": 20}, {"name": "parse"}]
        doc = {"$schema": "https://www.speedscope.app/file-format-schema.json",
               "shared": {"frames": frames},
               "profiles": [
                   {"type": "sampled", "name": "MainThread", "unit": "seconds",
                    "startValue": 0, "endValue": 2,
                    "samples": [[0, 1, 2], [0, 1], [0, 1, 2]], "weights": [0.25, 0.5, 0.125]},
                   {"type": "evented", "name": "worker", "unit": "milliseconds",
                    "startValue": 0, "endValue": 50,
                    "events": [{"type": "O", "frame": 0, "at": 0},
                               {"type": "O", "frame": 2, "at": 5},
                               {"type": "C", "frame": 2, "at": 45},
                               {"type": "C", "frame": 0, "at": 50}]},
                   {"type": "sampled", "name": "heap", "unit": "bytes", "startValue": 0,
                    "samples": [[0, 1]], "weights": [1048576]}]}
        p = self.start(RECEIVER % "{__name__}.{profile_name}.{service_name}")
        url = "http://%s/ingest?name=app&format=speedscope&from=1700000000&until=1700000002" \
              % address(p)
        status, body = http_post(url, json.dumps(doc).encode())
        self.assertEqual(status, 200, body)
        outs = {n: self.path("profiles", n + ".app")
                for n in ("process_cpu.MainThread", "process_cpu.worker", "memory.heap")}
        wait_until(lambda: all(os.path.exists(o) for o in outs.values()), "three profiles")
        cpu = raw_pprof(outs["process_cpu.MainThread"])
        self.assertIn("cpu/nanoseconds", cpu)
        self.assertRegex(cpu, r"\n +375000000: 1 2 3 \n")   # parse handle main, twice
        self.assertRegex(cpu, r"\n +500000000: 2 3 \n")
        self.assertRegex(cpu, r"\d+: 0x0 (M=1 )?handle app.py:20 s=0")
        worker = raw_pprof(outs["process_cpu.worker"])
        self.assertRegex(worker, r"\n +10000000: \d+ \n")   # main alone, 5 + 5 ms
        self.assertRegex(worker, r"\n +40000000: \d+ \d+ \n")
        heap = raw_pprof(outs["memory.heap"])
        self.assertIn("inuse_space/bytes", heap)
        self.assertRegex(heap, r"\n +1048576: \d+ \d+ \n")
        doc["profiles"][1]["events"][2]["frame"] = 1   # closes a frame not open
        status, body = http_post(url, json.dumps(doc).encode())
        self.assertEqual((status, body), (422, b'speedscope body: profile 1 ("worker"): event 2 '
                                               b'closes frame 1, which is not the innermost '
                                               b'open\n'))
        self.assertEqual(p.stop(), 0)

    def test_ingest_trie_and_tree_of_older_agents(self):
        """format=trie and format=tree (or their Content-Types): the same two
        stacks as the folded test, serialized the way Pyroscope's older
        agents serialize them, give the same samples."""
        def varint(n):
            out = b""
            while True:
                out += bytes([n & 0x7f | (0x80 if n > 0x7f else 0)])
                n >>= 7
                if not n:
                    return out

        def nodes(*items):   # (name, value, children) depth first
            return b"".join(varint(len(n)) + n + varint(v) + varint(c) for n, v, c in items)
        # the trie's labels are byte runs of the keys; the tree's are frames
        trie = nodes((b"", 0, 1), (b"main;", 0, 2), (b"foo;bar", 3, 0), (b"baz", 2, 0))
        tree = nodes((b"", 0, 1), (b"main", 0, 2), (b"foo", 0, 1), (b"bar", 3, 0),
                     (b"baz", 2, 0))
        p = self.start(RECEIVER % "{env}")
        url = "http://%s/ingest?name=app.cpu%%7Benv%%3D%%s%%7D&sampleRate=100" % address(p)
        for env, body, query, headers in [
                ("trie", trie, "&format=trie", {}),
                ("trie_type", trie, "", {"Content-Type": "binary/octet-stream+trie"}),
                ("tree", tree, "&format=tree", {}),
                ("tree_type", tree, "", {"Content-Type": "binary/octet-stream+tree"})]:
            status, resp = http_post(url.replace("%s", env) + query, body, headers)
            self.assertEqual(status, 200, (env, resp))
            out = self.path("profiles", env)
            wait_until(lambda: os.path.exists(out), "the %s profile" % env)
            raw = raw_pprof(out)
            self.assertRegex(raw, r"\n +3 +30000000: 1 2 3 \n", env)   # bar foo main
            self.assertRegex(raw, r"\n +2 +20000000: 4 3 \n", env)     # baz main
            self.assertRegex(raw, r"1: 0x0 (M=1 )?bar :0 s=0", env)
        self.assertEqual(p.stop(), 0)

    def jfr_profiles(self, directory):
        """The profiles written under ./profiles/directory, by their sample
        types' names joined: {types: [Profile]}."""
        profile_pb2 = protoc_modules("", ["profile.proto"])[0]
        found = {}
        for path in self.outputs(os.path.join("profiles", directory)):
            prof = profile_pb2.Profile.FromString(gzip.decompress(open(path, "rb").read()))
            types = " ".join(prof.string_table[t.type] for t in prof.sample_type)
            found.setdefault(types, []).append(prof)
        return found

    def test_ingest_jfr_as_the_jdk_reads_it(self):
        """format=jfr: pyroscope-java's form (the recording gzip'd in its jfr
        field) and a bare recording each give a profile per kind of event,
        named as Pyroscope names them, with the stacks and totals the JDK's
        own jfr tool reads (tests/integration/jfr)."""
        here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jfr")
        recording = open(os.path.join(here, "burn.jfr.gz"), "rb").read()
        want = json.load(open(os.path.join(here, "burn.expected.json")))
        p = self.start(RECEIVER % "{i}/{__name__}.pb.gz")
        url = "http://%s/ingest?name=burn%%7Bi%%3D%s%%7D&format=jfr&sampleRate=100"
        status, body = http_post(url % (address(p), "form"), *sdk_form([("jfr", recording)]))
        self.assertEqual(status, 200, body)
        status, body = http_post(url % (address(p), "bare"), gzip.decompress(recording))
        self.assertEqual(status, 200, body)
        for directory in ("form", "bare"):
            wait_until(lambda: len(self.outputs(os.path.join("profiles", directory))) == 4,
                       "four profiles of the %s recording" % directory)
            names = sorted(re.sub(r"(-\d+)?\.pb\.gz$", "", os.path.basename(f)) for f in
                           self.outputs(os.path.join("profiles", directory)))
            self.assertEqual(names, ["memory"] * 3 + ["process_cpu"])   # the __name__s
            found = self.jfr_profiles(directory)
            cpu, = found["cpu"]
            self.assertEqual(cpu.period, 10000000)
            self.assertEqual(period_stacks(cpu), want["cpu_stacks"])
            for kind in ("alloc_in_new_tlab", "alloc_outside_tlab", "alloc_sample"):
                prof, = found["%s_objects %s_bytes" % (kind, kind)]
                self.assertEqual([sum(s.value[i] for s in prof.sample) for i in (0, 1)],
                                 [want[kind]["events"], want[kind]["sum"]])
        status, body = http_post(url % (address(p), "bad"), b"FLR\0not a recording")
        self.assertEqual(status, 422)
        self.assertIn(b"jfr body: JFR: ", body)
        status, body = http_post(url % (address(p), "bad"), *sdk_form([("profile", recording)]))
        self.assertEqual(status, 422)
        self.assertIn(b"no jfr field", body)
        self.assertEqual(p.stop(), 0)

    def test_jfr_and_speedscope_are_converted_on_a_worker_however_small(self):
        """Converting a recording takes a millisecond or so even when its
        gzip'd body is small: format=jfr (over HTTP/1.1 and HTTP/2) and
        format=speedscope are handled on a worker, not on the loop every push
        waits for; a small body of folded stacks is not."""
        recording = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "jfr",
                                      "burn.jfr.gz"), "rb").read()
        self.assertLess(len(recording), 64 << 10)   # a size the loop would serve itself
        p = self.start((RECEIVER % "{i}/{__name__}.pb.gz").replace(
            '{address: ""}}', '{address: ""}, logs: {level: debug}}'))
        url = "http://%s/ingest?name=burn%%7Bi%%3D%s%%7D&format=jfr"
        status, body = http_post(url % (address(p), "form"), *sdk_form([("jfr", recording)]))
        self.assertEqual(status, 200, body)
        p.wait_log(r"a request of \d+ bytes on a worker")
        status, body = h2c_post(url % (address(p), "h2"), recording)
        self.assertEqual(status, 200, body)
        p.wait_log(r"a request of \d+ bytes on a worker", count=2)
        speedscope = {"$schema": "https://www.speedscope.app/file-format-schema.json",
                      "shared": {"frames": [{"name": "main"}]},
                      "profiles": [{"type": "sampled", "name": "t", "unit": "none",
                                    "samples": [[0]], "weights": [1]}]}
        status, body = http_post(url.replace("jfr", "speedscope") % (address(p), "s"),
                                 json.dumps(speedscope).encode())
        self.assertEqual(status, 200, body)
        p.wait_log(r"a request of \d+ bytes on a worker", count=3)
        status, body = http_post("http://%s/ingest?name=app.cpu%%7Bi%%3Df%%7D&format=folded"
                                 % address(p), b"main;f 1\n")
        self.assertEqual(status, 200, body)
        self.assertEqual(len(p.wait_log(r"a request of \d+ bytes on a worker")), 3)
        self.assertEqual(p.stop(), 0)

    def test_ingest_jfr_wall_clock_and_malloc_as_async_profiler_writes_them(self):
        """async-profiler's wall mode (its ActiveSetting event=wall) makes
        every execution sample wall time too, and its profiler.WallClockSample
        counts its samples; profiler.Malloc is native allocations. The
        recording is the JDK's, of events named and shaped as async-profiler
        writes them (tests/integration/jfr/Wall.java)."""
        here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jfr")
        want = json.load(open(os.path.join(here, "wall.expected.json")))
        p = self.start(RECEIVER % "{__name__}.pb.gz")
        status, body = http_post("http://%s/ingest?name=wall&format=jfr&sampleRate=100"
                                 % address(p), open(os.path.join(here, "wall.jfr.gz"), "rb").read())
        self.assertEqual(status, 200, body)
        wait_until(lambda: len(self.outputs("profiles")) == 3, "three profiles")
        self.assertEqual(sorted(os.path.basename(f) for f in self.outputs("profiles")),
                         ["memory.pb.gz", "process_cpu.pb.gz", "wall.pb.gz"])
        found = self.jfr_profiles("")
        cpu, = found["cpu"]
        self.assertEqual(period_stacks(cpu), want["cpu_stacks"])
        wall, = found["wall"]
        self.assertEqual(wall.period, 10000000)
        self.assertEqual(sum(n for n, _ in period_stacks(wall)),
                         sum(n for n, _ in want["cpu_stacks"]) + want["wall_clock"]["sum"])
        in_wall = {tuple(stack): n for n, stack in period_stacks(wall)}
        for n, stack in want["cpu_stacks"]:   # every execution sample is wall time too
            self.assertGreaterEqual(in_wall.get(tuple(stack), 0), n, stack)
        malloc, = found["malloc_objects malloc_bytes"]
        self.assertEqual([sum(s.value[i] for s in malloc.sample) for i in (0, 1)],
                         [want["malloc"]["events"], want["malloc"]["sum"]])
        self.assertEqual(p.stop(), 0)

    def test_ingest_labels_and_times_as_pyroscope_reads_them(self):
        p = self.start(RECEIVER % "{service_name}.{__name__}.{pyroscope_spy}.{app_name}."
                                  "{unix_nanos}")
        url = "http://%s/ingest?" % address(p)
        profile_pb2 = protoc_modules("", ["profile.proto"])[0]
        heap = open(os.path.join(GO_CORPUS, "heap.pb.gz"), "rb").read()
        block = open(os.path.join(GO_CORPUS, "block.pb.gz"), "rb").read()
        # a pprof keeps its own time, as in Pyroscope; from and until are its
        # when it has none, and folded stacks'
        heap_time = profile_pb2.Profile.FromString(gzip.decompress(heap)).time_nanos
        parsed = profile_pb2.Profile.FromString(gzip.decompress(block))
        block_time = parsed.time_nanos
        parsed.ClearField("time_nanos")
        timeless = gzip.compress(parsed.SerializeToString())
        sent = [  # (query, body, the file it must make)
            # an SDK's push: no type suffix, so the family is the profile's
            ("name=myapp%7Benv%3Dprod%7D&format=pprof&spyName=gospy&from=20231114&until=now",
             heap, "myapp.memory.gospy.unknown.%d" % heap_time),
            ("name=myapp.block&format=pprof&from=1700000000001&until=1700000000002",
             block, "myapp.block.block.unknown.unknown.%d" % block_time),
            ("name=old.block&format=pprof&from=1700000000001&until=1700000000002",
             timeless, "old.block.block.unknown.unknown.1700000000001000000"),
            # braces naming the service: the application is app_name; a date
            ("name=app.cpu%7Bservice_name%3Dsvc%7D&from=20231114&units=bogus",
             b"main;work 2\n", "svc.process_cpu.unknown.app.1699920000000000000"),
        ]
        # pyroscope-go's block upload: the types renamed by the form's config
        config = b'{"contentions": {"display-name": "block_count", "units": "lock_samples"}, ' \
                 b'"delay": {"display-name": "block_duration", "units": "lock_nanoseconds"}}'
        form = sdk_form([("profile", block), ("sample_type_config", config)])
        sent.append(("name=sdkapp&spyName=gospy&from=1700000000&until=1700000010", form,
                     "sdkapp.block.gospy.unknown.%d" % block_time))
        for query, body, _ in sent:
            body, headers = body if isinstance(body, tuple) else (body, {})
            status, resp = http_post(url + query, body, headers)
            self.assertEqual(status, 200, (query, resp))
        for _, _, name in sent:
            out = self.path("profiles", name)
            wait_until(lambda: os.path.exists(out), name)
        # units it does not know are samples, as in Pyroscope
        self.assertIn("samples/count cpu/nanoseconds", raw_pprof(self.path("profiles", sent[3][2])))
        before = time.time_ns()
        status, resp = http_post(url + "name=rel&from=now-1h&until=now", b"main 1\n")
        self.assertEqual(status, 200, resp)
        wait_until(lambda: any(n.startswith("rel.") for n in os.listdir(self.path("profiles"))),
                   "the relative-time profile")
        got = next(n for n in os.listdir(self.path("profiles")) if n.startswith("rel."))
        start = int(got.rsplit(".", 1)[1])
        self.assertLess(abs(start - (before - 3600 * 10**9)), 60 * 10**9, got)
        for query, why in [("name=x&from=99999999999999999999", b"from is out of range"),
                           ("name=x&from=now&until=now-1d", b"from is after until")]:
            status, resp = http_post(url + query, b"main 1\n")
            self.assertEqual((status, why in resp), (400, True), (query, resp))
        self.assertEqual(p.stop(), 0)

    def test_ingest_name_labels_are_checked_as_pyroscope_checks_them(self):
        """The braces' labels are checked as Pyroscope's distributor checks
        them: names of 1024 bytes at most, values of 2048; a name parameter
        too long is refused, not cut."""
        p = self.start(RECEIVER % "{service_name}.{k}")
        url = "http://%s/ingest?format=folded&name=" % address(p)
        status, resp = http_post(url + "app%7Bk%3D" + "v" * 2048 + "%7D", b"main 1\n")
        self.assertEqual(status, 200, resp)
        status, resp = http_post(url + "s" * 2048, b"main 1\n")   # service_name's longest
        self.assertEqual(status, 200, resp)
        status, resp = http_post(url + "app%7Bk%3D" + "w" * 200 + "%7D", b"main 1\n")
        self.assertEqual(status, 200, resp)
        wait_until(lambda: len(os.listdir(self.path("profiles"))) == 3, "the three profiles")
        # each file named by the labels' first bytes and a hash of each
        names = sorted(os.listdir(self.path("profiles")))
        for name, start in zip(names, ["app." + "v" * 103 + "~", "app." + "w" * 103 + "~",
                                       "s" * 103 + "~"]):
            self.assertTrue(name.startswith(start), name)
        for name, why in [("app%7Bbad-name%3Dx%7D", b'name: invalid label name "bad-name"'),
                          ("app%7Bk%3Dv%2Ck%20v%3Dx%7D", b'invalid label name "k v"'),
                          ("app%7B%3Dx%7D", b'invalid label name ""'),
                          ("app%7Bk%7D", b"not key=value"),
                          ("app%7Bk%3D%FF%7D", b"name: not valid UTF-8"),
                          ("app&spyName=%C3", b"spyName: not valid UTF-8"),
                          ("app%7Bk%3D" + "v" * 2049 + "%7D", b"value over 2048 bytes"),
                          ("app%7B" + "n" * 1025 + "%3Dv%7D", b"name over 1024 bytes"),
                          ("a" * 2049, b"application name is over 2048 bytes"),
                          ("app&spyName=" + "s" * 2049, b"spyName is over 2048 bytes"),
                          ("app%7Bk%3D" + "v" * 16384 + "%7D", b"name parameter is over 16384")]:
            status, resp = http_post(url + name, b"main 1\n")
            self.assertEqual((status, why in resp), (400, True), (name[:40], resp))
        self.assertEqual(p.stop(), 0)

    def test_dotted_label_names_are_stored_with_underscores_as_pyroscope_stores_them(self):
        """OpenTelemetry's service.name arrives as service_name by either API,
        as Pyroscope's distributor makes it; a dotted name whose underscored
        form the series names too is dropped when the values agree, refused
        when they differ, in either order; other bad characters are refused."""
        push_pb2 = pb()
        p = self.start(RECEIVER % "{service_name}.{service_version}.{__file__}")
        url = "http://%s" % address(p)
        heap = open(os.path.join(GO_CORPUS, "heap.pb.gz"), "rb").read()

        def push(*pairs):
            req = push_pb2.PushRequest(series=[push_pb2.RawProfileSeries(
                labels=[push_pb2.LabelPair(name=n, value=v) for n, v in pairs],
                samples=[push_pb2.RawSample(raw_profile=heap)])])
            return http_post(url + PUSH, req.SerializeToString(),
                             {"Content-Type": "application/proto"})

        def ingest(braces):
            return http_post(url + "/ingest?format=folded&name=app.cpu%7B" +
                             braces.replace("=", "%3D").replace(",", "%2C") + "%7D"
                             "&from=1700000000&until=1700000010", b"main;work 1\n")

        ok = [push(("service.name", "checkout"), ("service.version", "1.2"), ("__file__", "a")),
              push(("service_version", "1.3"), ("service.version", "1.3"),
                   ("service.name", "checkout"), ("__file__", "b")),
              push(("service.version", "1.4"), ("service_version", "1.4"),
                   ("service_name", "checkout"), ("__file__", "c")),
              ingest("service.version=2.0,__file__=d"),
              ingest("service.version=2.1,service_version=2.1,__file__=e"),
              # the same name twice: the last, as Pyroscope reads the name
              ingest("service.version=2.1,service.version=2.2,__file__=f")]
        self.assertEqual([status for status, _ in ok], [200] * 6, ok)
        want = ["app.2.0.d", "app.2.1.e", "app.2.2.f", "checkout.1.2.a", "checkout.1.3.b",
                "checkout.1.4.c"]
        wait_until(lambda: len(os.listdir(self.path("profiles"))) == 6, "the six profiles")
        self.assertEqual(sorted(os.listdir(self.path("profiles"))), want)
        refused = [(push(("a.b", "1"), ("a_b", "2")), b"duplicate label name \\\"a_b\\\""),
                   (push(("a_b", "2"), ("a.b", "1")), b"duplicate label name \\\"a_b\\\""),
                   (push(("a-b", "1")), b"invalid label name \\\"a-b\\\""),
                   (ingest("a.b=1,a_b=2"), b'duplicate label name "a_b"'),
                   (ingest("a_b=2,a.b=1"), b'duplicate label name "a_b"'),
                   (ingest("1st=x"), b'invalid label name "1st"')]
        for (status, body), why in refused:
            self.assertEqual((status, why in body), (400, True), body)
        self.assertEqual(p.stop(), 0)

    def test_ingest_multipart_with_prev_profile_and_sample_type_config(self):
        from harness import pprof_samples, subtract
        p = self.start(RECEIVER % "{service_name}.{__name__}")
        http_addr = address(p)
        allocs = open(os.path.join(GO_CORPUS, "allocs.pb.gz"), "rb").read()
        config = b'{"alloc_space": {"units": "bytes", "cumulative": true, "aggregation": "sum", ' \
                 b'"display-name": "space_allocated"}, ' \
                 b'"alloc_objects": {"units": "objects", "cumulative": false}}'
        boundary = "profdboundary"
        parts = [("profile", allocs), ("prev_profile", allocs), ("sample_type_config", config)]
        status, resp = http_post("http://%s/ingest?name=app.alloc_space&from=1700000000"
                            "&until=1700000010" % http_addr, *sdk_form(parts))
        self.assertEqual(status, 200, resp)
        out = self.path("profiles", "app.memory")
        wait_until(lambda: os.path.exists(out), "the multipart upload")
        columns, got = pprof_samples(out)
        original, whole = pprof_samples(os.path.join(GO_CORPUS, "allocs.pb.gz"))
        self.assertEqual(original[:2], ["alloc_objects/count", "alloc_space/bytes"])
        self.assertEqual(columns, ["alloc_objects/objects", "space_allocated/bytes"] + original[2:])
        cumulative = [c == "alloc_space/bytes" for c in original]
        self.assertEqual(got, subtract(whole, whole, cumulative))   # computed independently
        parts[2] = ("sample_type_config", b'{"alloc_space": ')
        body = b"".join(b"--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n"
                        % (boundary.encode(), n.encode()) + data + b"\r\n"
                        for n, data in parts) + b"--%s--\r\n" % boundary.encode()
        # a form is the SDKs' pprof form whatever other format names it, as in Pyroscope
        status, resp = http_post("http://%s/ingest?name=app.alloc_space&format=groups" % http_addr,
                                 body, {"Content-Type": "multipart/form-data; boundary=" + boundary})
        self.assertEqual(status, 422)
        self.assertIn(b"sample_type_config", resp)
        # read where it lies, with no tree of it: a large config costs no more than its bytes
        big = b'{"alloc_space": {"display-name": "big"}, "x": "%s"}' % (b"y" * 70000)
        parts[2] = ("sample_type_config", big)
        status, resp = http_post("http://%s/ingest?name=big.alloc_space" % http_addr,
                                 *sdk_form(parts))
        self.assertEqual(status, 200, resp)
        out = self.path("profiles", "big.memory")
        wait_until(lambda: os.path.exists(out), "the upload with a large config")
        self.assertEqual(pprof_samples(out)[0][1], "big/bytes")
        status, resp = http_post("http://%s/ingest?name=app.cpu" % http_addr, b"--x--\r\n",
                            {"Content-Type": "multipart/form-data; boundary=x"})
        self.assertEqual(status, 422)
        self.assertIn(b"profile", resp)

    @unittest.skipIf(grpc is None, "python3-grpcio is not installed")
    def test_push_over_grpc_and_connect_errors(self):
        push_pb2 = pb()
        p = self.start(RECEIVER % "{service_name}.{__file__}")
        http_addr = grpc_addr = address(p)
        heap = open(os.path.join(GO_CORPUS, "heap.pb.gz"), "rb").read()
        req = push_pb2.PushRequest(series=[push_pb2.RawProfileSeries(
            labels=[push_pb2.LabelPair(name="__name__", value="memory"),
                    push_pb2.LabelPair(name="__file__", value="g.pb.gz")],
            samples=[push_pb2.RawSample(raw_profile=heap)])])
        with grpc.insecure_channel(grpc_addr) as ch:
            call = ch.unary_unary(PUSH, request_serializer=lambda m: m.SerializeToString(),
                                  response_deserializer=lambda b: b)
            call(req, timeout=20)
        out = self.path("profiles", "unknown_service.g.pb.gz")   # Pyroscope's default
        wait_until(lambda: os.path.exists(out), "the gRPC push")
        self.assertEqual(raw_pprof(out), raw_pprof(os.path.join(GO_CORPUS, "heap.pb.gz")))
        bad = push_pb2.PushRequest(series=[push_pb2.RawProfileSeries(
            labels=[push_pb2.LabelPair(name="bad-name", value="x")],
            samples=[push_pb2.RawSample(raw_profile=heap)])])
        status, body = http_post("http://%s%s" % (http_addr, PUSH), bad.SerializeToString(),
                            {"Content-Type": "application/proto", "Connect-Protocol-Version": "1"})
        self.assertEqual(status, 400)
        self.assertIn(b'"code":"invalid_argument"', body)
        self.assertIn(b'invalid label name \\"bad-name\\"', body)
        # Pyroscope's limits: names of 1024 bytes, values of 2048
        for name, value, want in [("n" * 1024, "v" * 2048, 200), ("n" * 1025, "v", 400),
                                  ("n", "v" * 2049, 400)]:
            req = push_pb2.PushRequest(series=[push_pb2.RawProfileSeries(
                labels=[push_pb2.LabelPair(name=name, value=value)],
                samples=[push_pb2.RawSample(raw_profile=heap)])])
            status, body = http_post("http://%s%s" % (http_addr, PUSH), req.SerializeToString(),
                                     {"Content-Type": "application/proto"})
            self.assertEqual(status, want, body)
        self.assertIn(b"value over 2048 bytes", body)
        status, body = http_post("http://%s%s" % (http_addr, PUSH), b"{}",
                                 {"Content-Type": "text/plain"})
        self.assertEqual(status, 415)

    @unittest.skipIf(grpc is None, "python3-grpcio is not installed")
    def test_a_call_cancelled_while_its_request_is_on_a_worker(self):
        """A gRPC call reset while its large request is worked on aside: the
        stream goes, the connection and the daemon serve on."""
        import gzip
        push_pb2 = pb()
        p = self.start((RECEIVER % "{__file__}").replace(
            '{address: ""}}', '{address: ""}, logs: {level: debug}}'))
        # 40 MB of strings, a MB of them random: a body past 64 KiB that
        # takes tens of milliseconds to inflate and prove valid
        strings = [b""] + [b"s" * 1000] * 40000 + [os.urandom(1000) for _ in range(1000)]
        raw = b"".join(b"\x32" + bytes([0xe8, 0x07]) + t if t else b"\x32\x00" for t in strings)
        large = push_pb2.PushRequest(series=[push_pb2.RawProfileSeries(
            labels=[push_pb2.LabelPair(name="__file__", value="large.pb.gz")],
            samples=[push_pb2.RawSample(raw_profile=gzip.compress(raw, 1))])])
        small = push_pb2.PushRequest(series=[push_pb2.RawProfileSeries(
            labels=[push_pb2.LabelPair(name="__file__", value="small.pb.gz")],
            samples=[push_pb2.RawSample(
                raw_profile=open(os.path.join(GO_CORPUS, "cpu.pb.gz"), "rb").read())])])
        with grpc.insecure_channel(address(p)) as ch:
            call = ch.unary_unary(PUSH, request_serializer=lambda m: m.SerializeToString(),
                                  response_deserializer=lambda b: b)
            future = call.future(large, timeout=60)
            p.wait_log(r"a request of \d+ bytes on a worker")
            future.cancel()
            call(small, timeout=20)   # the same connection
        wait_until(lambda: os.path.exists(self.path("profiles", "small.pb.gz")), "the small push")
        self.assertEqual(p.stop(), 0)

    def test_push_connect_json_and_http2(self):
        push_pb2 = pb()
        from google.protobuf import json_format
        p = self.start(RECEIVER % "{__file__}")
        http_addr = h2_addr = address(p)
        want = {}
        for i, name in enumerate(("heap.pb.gz", "cpu.pb.gz")):
            raw = open(os.path.join(GO_CORPUS, name), "rb").read()
            req = push_pb2.PushRequest(series=[push_pb2.RawProfileSeries(
                labels=[push_pb2.LabelPair(name="__name__", value="x"),
                        push_pb2.LabelPair(name="__file__", value="%d.json.pb.gz" % i)],
                samples=[push_pb2.RawSample(raw_profile=raw, ID="id-%d" % i)])])
            # the JSON mapping as protobuf's own library writes it
            status, body = http_post("http://%s%s" % (http_addr, PUSH),
                                     json_format.MessageToJson(req).encode(),
                                     {"Content-Type": "application/json"})
            self.assertEqual((status, body), (200, b"{}"))
            req.series[0].labels[1].value = "%d.h2.pb.gz" % i
            status, body = h2c_post("http://%s%s" % (h2_addr, PUSH), req.SerializeToString(),
                                    {"Content-Type": "application/proto"})
            self.assertEqual((status, body), (200, b""))
            want["%d.json.pb.gz" % i] = want["%d.h2.pb.gz" % i] = name
        for out, name in want.items():
            wait_until(lambda: os.path.exists(self.path("profiles", out)), out)
            self.assertEqual(raw_pprof(self.path("profiles", out)),
                             raw_pprof(os.path.join(GO_CORPUS, name)), out)
        status, body = http_post("http://%s%s" % (http_addr, PUSH), b'{"series": [{"samples": '
                                 b'[{"rawProfile": "not base64!"}]}]}',
                                 {"Content-Type": "application/json"})
        self.assertEqual(status, 400)
        self.assertIn(b"rawProfile: not a base64 string", body)
        status, body = h2c_post("http://%s/ingest?name=app.cpu&format=folded" % h2_addr,
                                b"main;work 3\n", {"Content-Type": "text/plain"})
        self.assertEqual(status, 200)
        status, body = h2c_post("http://%s/ingest?name=app.cpu&format=folded" % h2_addr,
                                b"main;work three\n")
        self.assertEqual(status, 422)
        self.assertIn(b"line 1", body)
        self.assertEqual(p.stop(), 0)

    def test_basic_auth(self):
        p = self.start(RECEIVER.replace('endpoint: "127.0.0.1:0"',
                                        'endpoint: "127.0.0.1:0", '
                                        'basic_auth: {username: agent, password: "s3:cret"}')
                       % "{service_name}")
        url = "http://%s/ingest?name=app.cpu&format=folded" % address(p)
        good = "Basic " + base64.b64encode(b"agent:s3:cret").decode()
        wrong = "Basic " + base64.b64encode(b"agent:nope").decode()
        for headers in ({}, {"Authorization": wrong}, {"Authorization": "Bearer s3:cret"}):
            self.assertEqual(http_post(url, b"a;b 1\n", headers)[0], 401, headers)
        self.assertEqual(h2c_post(url, b"a;b 1\n")[0], 401)
        self.assertEqual(http_post(url, b"a;b 1\n", {"Authorization": good})[0], 200)
        wait_until(lambda: os.path.exists(self.path("profiles", "app")), "the authorized one")
        self.assertEqual(p.stop(), 0)

    def test_exporter_against_a_pyroscope_stand_in(self):
        got, answers = [], [500, 200]
        port = self.serve_http(stand_in(got, answers))
        self.spool_heap()
        many = ", ".join("l%d: v" % i for i in range(40))
        p = self.start(SENDER % (self.path("spool"),
                                 'endpoint: "http://127.0.0.1:%d", tenant: t1, '
                                 'basic_auth: {username: u, password: pw}, '
                                 'retry_on_failure: {initial_interval: 10ms}, '
                                 'external_labels: {? %s : z, "bad-name": x, 9lives: y, %s}'
                                 % (port, "k" * 1100, many)))
        wait_until(lambda: len(got) >= 2, "a retry after the 500")
        path, headers, req = got[1]
        self.assertEqual(path, PUSH)
        self.assertEqual(headers.get("Content-Type"), "application/proto")
        self.assertEqual(headers.get("Connect-Protocol-Version"), "1")
        self.assertEqual(headers.get("X-Scope-OrgID"), "t1")
        self.assertTrue(headers.get("Authorization", "").startswith("Basic "))
        labels = {l.name: l.value for l in req.series[0].labels}
        self.assertLessEqual(len(labels), 30)
        self.assertIn("__name__", labels)
        self.assertEqual(labels.get("bad_name"), "x")
        self.assertEqual(labels.get("_9lives"), "y")
        self.assertEqual(labels.get("k" * 1024), "z")   # a name cut to Pyroscope's 1024
        raw = req.series[0].samples[0].raw_profile
        self.assertEqual(raw[:2], b"\x1f\x8b")
        from harness import metric_value
        wait_until(lambda: metric_value(p.metrics(), "profd_pyroscope_label_fixes",
                                        component="pyroscope"), "the fixes counted")

    def test_what_pyroscope_makes_deltas_of_is_marked_as_pyroscope_marks_it(self):
        """A Pyroscope server makes deltas of a memory profile's alloc_*
        columns unless its series says __delta__="false". What /ingest takes
        is so marked, as Pyroscope's own ingest path marks it; a push.v1
        series keeps the mark it came with, or none; a pprof file has none,
        so the server makes deltas of its cumulative columns."""
        push_pb2 = pb()
        got = []
        port = self.serve_http(stand_in(got, [200]))
        p, ingest = self.start_pushes_into('pyroscope: {endpoint: "http://127.0.0.1:%d"}' % port,
                                           "{f: file}")
        heap = open(os.path.join(GO_CORPUS, "heap.pb.gz"), "rb").read()
        status, body = http_post("http://%s/ingest?name=app.alloc_space%%7Bf%%3Dingest%%7D"
                                 "&format=pprof" % ingest, heap)
        self.assertEqual(status, 200, body)
        for f, mark in (("push", None), ("push-marked", "false")):
            labels = [("__name__", "memory"), ("f", f)] + ([("__delta__", mark)] if mark else [])
            req = push_pb2.PushRequest(series=[push_pb2.RawProfileSeries(
                labels=[push_pb2.LabelPair(name=k, value=v) for k, v in labels],
                samples=[push_pb2.RawSample(raw_profile=heap)])])
            status, body = http_post("http://%s%s" % (ingest, PUSH), req.SerializeToString(),
                                     {"Content-Type": "application/proto"})
            self.assertEqual(status, 200, body)

        def marks():
            found = {}
            for _, _, req in list(got):
                for series in req.series:
                    labels = {l.name: l.value for l in series.labels}
                    found[labels.get("f")] = labels.get("__delta__")
            return found
        wait_until(lambda: len(marks()) == 4, "the four series")
        self.assertEqual(marks(), {"ingest": "false", "push": None, "push-marked": "false",
                                   "file": None})
        self.assertEqual(p.stop(), 0)

    def test_exporter_gives_every_series_a_valid_name_and_utf8_values(self):
        push_pb2 = pb()
        got = []
        port = self.serve_http(stand_in(got, [200]))
        # a label value that is not UTF-8, which Pyroscope refuses the request for
        p, _ = self.start_pushes_into('pyroscope: {endpoint: "http://127.0.0.1:%d"}' % port,
                                      '{i: "2", __name__: process_cpu}')
        for i, (name, profile) in enumerate([(None, "heap"), ("process-cpu.v2", "cpu")]):
            labels = [push_pb2.LabelPair(name="i", value=str(i))]
            if name:
                labels.append(push_pb2.LabelPair(name="__name__", value=name))
            raw = open(os.path.join(GO_CORPUS, profile + ".pb.gz"), "rb").read()
            req = push_pb2.PushRequest(series=[push_pb2.RawProfileSeries(
                labels=labels, samples=[push_pb2.RawSample(raw_profile=raw)])])
            status, body = http_post("http://%s%s" % (address(p), PUSH),
                                     req.SerializeToString(), {"Content-Type": "application/proto"})
            self.assertEqual(status, 200, body)
        names, bad = {}, []

        def all_pushed():
            for _, _, req in list(got):
                for series in req.series:
                    labels = {l.name: l.value for l in series.labels}
                    names[labels["i"]] = labels.get("__name__")
                    bad.append(labels.get("bad"))
            return len(names) == 3
        wait_until(all_pushed, "the three profiles pushed on")
        # none: the family from the profile's types; not a metric name: made one
        self.assertEqual(names, {"0": "memory", "1": "process_cpu_v2", "2": "process_cpu"})
        self.assertIn("bad\ufffd.pb.gz", bad)

    def test_exporter_renames_perf_event_types_pyroscope_refuses(self):
        """perf's events are named cpu-clock, page-faults...: Pyroscope refuses
        a request with a sample type holding '-'."""
        from harness import CORPUS
        profile_pb2 = protoc_modules("", ["profile.proto"])[0]
        got, ingested = [], []
        port = self.serve_http(stand_in(got, [200]))
        ingest_port = self.serve_posts(lambda path, headers, body: ingested.append(body) or (200, {}))
        p = self.start("""
receivers:
  perf_data: {include: ["%s"], watch: true, poll_interval: 100ms}
exporters:
  pyroscope: {endpoint: "http://127.0.0.1:%d"}
  pyroscope/old: {endpoint: "http://127.0.0.1:%d", api: ingest}
service:
  telemetry: {metrics: {address: "127.0.0.1:0"}}
  pipelines:
    profiles: {receivers: [perf_data], exporters: [pyroscope, pyroscope/old]}
""" % (os.path.join(CORPUS, "perf", "burn.2events.data"), port, ingest_port))
        wait_until(lambda: got and ingested, "a push and an /ingest")
        raws = [s.samples[0].raw_profile for _, _, req in got for s in req.series]
        for raw in raws + ingested:   # push.v1's and /ingest's alike
            prof = profile_pb2.Profile.FromString(gzip.decompress(raw))
            types = {prof.string_table[t.type] for t in prof.sample_type}
            self.assertTrue("cpu_clock" in types and not any("-" in t for t in types), types)
            self.assertEqual(prof.string_table[prof.default_sample_type],
                             prof.string_table[prof.period_type.type])
        self.assertEqual(metric_value(p.metrics(), "profd_pyroscope_type_fixes",
                                      component="pyroscope"), len(raws))

    def test_ingest_exporter_names_the_spy_by_its_parameter(self):
        import urllib.parse
        got = []
        port = self.serve_posts(lambda path, headers, body: got.append(path) or (200, {}))
        self.spool_heap()
        self.start(SENDER % (self.path("spool"), 'endpoint: "http://127.0.0.1:%d", api: ingest, '
                             'external_labels: {pyroscope_spy: rbspy, env: test, '
                             '__delta__: "false"}' % port))
        wait_until(lambda: got, "an /ingest")
        path, query = got[0].split("?", 1)
        params = urllib.parse.parse_qs(query)
        self.assertEqual(path, "/ingest")
        self.assertEqual(params["spyName"], ["rbspy"])
        # Pyroscope adds pyroscope_spy from spyName: in the braces it would be there twice
        self.assertNotIn("pyroscope_spy", params["name"][0])
        self.assertNotIn("__delta__", params["name"][0])   # the server marks /ingest itself
        self.assertIn("env=test", params["name"][0])

    def test_exporter_secrets_from_files_and_a_proxy(self):
        """bearer_token_file and basic_auth.password_file are read again
        when they change: a rotated secret goes from the next request on,
        and one that cannot be read is said with the server's refusal;
        proxy_url sends a server's requests through a forward proxy
        (nginx), and so does http_proxy unless proxy_from_environment is
        off; authorization sends its type and credentials."""
        from harness import ForwardProxy
        proxy = ForwardProxy(self.path("proxy"))
        self.addCleanup(proxy.stop)
        got_a, got_b, got_c = [], [], []
        port_a = self.serve_posts(lambda path, headers, body: got_a.append(
            (path, headers, body)) or (401 if headers.get("Authorization") == "Bearer" else 200,
                                      {}))
        port_b = self.serve_http(stand_in(got_b, [200]))
        port_c = self.serve_http(stand_in(got_c, [200]))
        token, password = self.path("token"), self.path("password")

        def write(path, secret):
            with open(path + ".new", "w") as f:
                f.write(secret + "\n")
            os.utime(path + ".new", (len(secret), len(secret)))   # each its own mtime
            os.rename(path + ".new", path)
        write(token, "t1")
        write(password, "p1")
        p, ingest = self.start_pushes_into(
            'pyroscope: {servers: [{endpoint: "http://127.0.0.1:%d", bearer_token_file: %s, '
            'proxy_url: "%s"}, {endpoint: "http://127.0.0.1:%d", '
            'basic_auth: {username: u, password_file: %s}, proxy_from_environment: false}, '
            '{endpoint: "http://127.0.0.1:%d", authorization: {type: ApiKey, credentials: k1}}]}'
            % (port_a, token, proxy.url, port_b, password, port_c),
            wrapper=("env", "http_proxy=" + proxy.url, "no_proxy=", "NO_PROXY="))

        def sent(got, header):
            return [h.get(header) for _, h, _ in list(got)]
        basic = lambda pw: "Basic " + base64.b64encode(b"u:" + pw).decode()
        push_series(ingest, "f", ["a"])
        wait_until(lambda: got_a and got_b, "both servers' first push")
        write(token, "t22")
        write(password, "p22")
        push_series(ingest, "f", ["b"])
        wait_until(lambda: len(got_a) == 2 and len(got_b) == 2, "both servers' second push")
        os.unlink(token)
        push_series(ingest, "f", ["c"])
        p.wait_log(r"push to http://127\.0\.0\.1:%d failed: HTTP status 401 \(%s could not "
                   r"be read\)" % (port_a, re.escape(token)))
        self.assertEqual(p.stop(), 0)
        self.assertEqual(sent(got_a, "Authorization")[:3], ["Bearer t1", "Bearer t22", "Bearer"])
        self.assertEqual(sent(got_b, "Authorization")[:2], [basic(b"p1"), basic(b"p22")])
        self.assertEqual(sent(got_a, "Via")[:2], ["1.1 nginx"] * 2)
        self.assertEqual(sent(got_b, "Via")[:2], [None] * 2)
        self.assertEqual(sent(got_c, "Authorization")[:2], ["ApiKey k1"] * 2)
        self.assertEqual(sent(got_c, "Via")[:2], ["1.1 nginx"] * 2)
        for auth, says in [("bearer_token: x, bearer_token_file: %s" % token,
                            "bearer_token and bearer_token_file cannot both be set"),
                           ("bearer_token: x, basic_auth: {username: u}",
                            "at most one of bearer_token (or bearer_token_file), authorization, "
                            "basic_auth and oauth2 may be set"),
                           ("bearer_token: x, oauth2: {client_id: i, token_url: 'http://t'}",
                            "at most one of bearer_token (or bearer_token_file), authorization, "
                            "basic_auth and oauth2 may be set"),
                           ("oauth2: {client_id: i}", "oauth2 needs client_id and token_url"),
                           ("oauth2: {client_id: i, token_url: 'http://t', client_secret: s, "
                            "client_secret_file: f}",
                            "oauth2's client_secret and client_secret_file cannot both be set"),
                           ("basic_auth: {username: u, password: x, password_file: %s}" % password,
                            "basic_auth's password and password_file cannot both be set"),
                           ('proxy_url: "ftp://127.0.0.1:1"',
                            "proxy_url 'ftp://127.0.0.1:1' is not http://, https:// or socks5://")]:
            self.assert_config_refused(SENDER % (self.path("spool"), auth), says)

    def test_exporter_fetches_an_oauth2_token(self):
        """oauth2: a token fetched from token_url with the client's
        credentials (basic auth, each form-encoded), the grant, scopes and
        endpoint_params; kept while fresh, fetched again within 10 s of its
        end; a token endpoint's refusal said, and the push retried."""
        token_url, tokens = self.token_endpoint([
            (200, {"access_token": "tok1", "token_type": "bearer", "expires_in": 5}),
            (200, {"access_token": "tok2", "expires_in": "3600"})])
        got = []
        port = self.serve_http(stand_in(got, [200]))
        oauth2 = ('oauth2: {client_id: "my id", client_secret: "s&cret", token_url: "%s", '
                  'scopes: [read, write], endpoint_params: {audience: pyro}}')
        p, ingest = self.start_pushes_into('pyroscope: {endpoint: "http://127.0.0.1:%d", %s}' % (
            port, oauth2 % token_url))
        for n, f in enumerate("abc"):
            push_series(ingest, "f", [f])
            wait_until(lambda: len(got) == n + 1, "push %s" % f)
        self.assertEqual(p.stop(), 0)
        self.assertEqual([h.get("Authorization") for _, h, _ in got],
                         ["Bearer tok1", "Bearer tok2", "Bearer tok2"])   # tok1 near its end
        self.assertEqual(len(tokens), 2)
        basic = "Basic " + base64.b64encode(b"my%20id:s%26cret").decode()
        self.assertEqual(tokens[0], (basic, {"grant_type": ["client_credentials"],
                                             "scope": ["read write"], "audience": ["pyro"]}))
        refusing, _ = self.token_endpoint([(400, {"error": "invalid_client"})])
        p, ingest = self.start_pushes_into(
            'pyroscope: {endpoint: "http://127.0.0.1:%d", retry_on_failure: '
            '{initial_interval: 10ms}, %s}' % (port, oauth2 % refusing))
        push_series(ingest, "f", ["d"])
        p.wait_log(r"push to http://127\.0\.0\.1:%d failed \(will retry\): token from %s: "
                   r"HTTP status 400: \{\"error\": \"invalid_client\"\}" % (port, re.escape(refusing)),
                   count=2)
        self.assertEqual(len(got), 3)   # nothing sent without a token

    def test_a_profile_over_pyroscopes_size_limit_goes_alone(self):
        """A profile over 4 MiB uncompressed, Pyroscope's default
        max_profile_size_bytes for which it refuses a whole push.v1
        request, goes in a request of its own between the others': the
        server refuses it alone, the others taken."""
        push_pb2 = pb()
        profile_pb2 = protoc_modules("", ["profile.proto"])[0]
        heap = open(os.path.join(GO_CORPUS, "heap.pb.gz"), "rb").read()
        big = profile_pb2.Profile.FromString(gzip.decompress(heap))
        big.string_table.append("x" * (4 << 20))   # a comment of 4 MiB
        big.comment.append(len(big.string_table) - 1)
        got = []

        def answer(path, headers, body):
            req = push_pb2.PushRequest.FromString(body)
            fs = [{l.name: l.value for l in s.labels}["f"] for s in req.series]
            got.append(fs)
            return (400 if "big" in fs else 200), {}
        port = self.serve_posts(answer)
        p, ingest = self.start_pushes_into('pyroscope: {endpoint: "http://127.0.0.1:%d"}' % port)
        req = push_pb2.PushRequest(series=[push_pb2.RawProfileSeries(
            labels=[push_pb2.LabelPair(name="__name__", value="memory"),
                    push_pb2.LabelPair(name="f", value=f)],
            samples=[push_pb2.RawSample(raw_profile=raw)])
            for f, raw in (("a", heap), ("big", gzip.compress(big.SerializeToString())),
                           ("b", heap))])
        status, body = http_post("http://%s%s" % (ingest, PUSH), req.SerializeToString(),
                                 {"Content-Type": "application/proto"})
        self.assertEqual(status, 200, body)
        wait_until(lambda: [n or 0 for n in exported_counts(p, "pyroscope")] == [2, 1],
                   "two sent, the large one refused")
        self.assertEqual(p.stop(), 0)
        self.assertEqual(sorted(got), [["a", "b"], ["big"]])

    def test_exporter_sends_to_several_servers_retrying_each_alone(self):
        got_a, got_b = [], []
        port_a = self.serve_http(stand_in(got_a, [503, 200]))
        port_b = self.serve_http(stand_in(got_b, [200]))
        self.spool_heap()
        p = self.start(SENDER % (self.path("spool"),
                                 'servers: [{endpoint: "http://127.0.0.1:%d", tenant: a}, '
                                 '{endpoint: "http://127.0.0.1:%d", tenant: b}], '
                                 'retry_on_failure: {initial_interval: 10ms}' % (port_a, port_b)))
        wait_until(lambda: len(got_a) >= 2, "server a's retry after its 503")
        p.wait_log(r"export failed \(retryable\)")
        self.assertEqual(p.stop(), 0)
        self.assertEqual(len(got_b), 1)   # b took it the first time: not sent again
        self.assertEqual([h.get("X-Scope-OrgID") for _, h, _ in got_a + got_b], ["a", "a", "b"])
        self.assertEqual(got_a[1][2], got_b[0][2])

    TENANT_SERIES = ["t:team-a", "none", "t:team-b", "t:bad/one", "t:team-a2"]

    def tenants_sent(self, exporter_options, api, counts):
        """Pushes TENANT_SERIES as one batch, relabeled by TENANT_RULES (the
        tenant from the f label), and a series f=hdr with X-Scope-OrgID
        team-h, into a pyroscope exporter with exporter_options and api,
        until it counts [sent, failed] records as counts: ({f: the
        X-Scope-OrgID it was sent with}, the X-Scope-OrgID of each request,
        the label names sent)."""
        import urllib.parse
        push_pb2 = pb()
        got, names, lock = [], set(), threading.Lock()

        def answer(path, headers, body):
            if api == "push":
                series = push_pb2.PushRequest.FromString(body).series
                labels = [{l.name: l.value for l in s.labels} for s in series]
            else:
                name = urllib.parse.parse_qs(path.split("?", 1)[1])["name"][0]
                labels = [dict(kv.split("=", 1) for kv in name[name.index("{") + 1:-1].split(","))]
            with lock:
                got.append((headers.get("X-Scope-OrgID"), [l["f"] for l in labels]))
                names.update(n for l in labels for n in l)
            return 200, {}
        port = self.serve_posts(answer)
        p, ingest = self.start_pushes_into(
            'pyroscope: {endpoint: "http://127.0.0.1:%d", api: %s%s}' % (
                port, api, exporter_options), relabel=TENANT_RULES)
        push_series(ingest, "f", self.TENANT_SERIES)
        push_series(ingest, "f", ["hdr"], {"X-Scope-OrgID": "team-h"})
        wait_until(lambda: [n or 0 for n in exported_counts(p, "pyroscope")] == counts,
                   "[sent, failed] records to be %s" % counts)
        self.assertEqual(p.stop(), 0)
        return {f: tenant for tenant, fs in got for f in fs}, [t for t, _ in got], names

    def test_each_records_tenant_goes_as_x_scope_orgid(self):
        """With no tenant of its own, the exporter sends each record's
        __tenant_id__ (the X-Scope-OrgID it was pushed with, or one that
        relabeling set) as X-Scope-OrgID, never as a label: with push.v1
        one request per tenant of a batch, with /ingest one per record. A
        record whose tenant is no tenant ID is left out, said and counted
        failed."""
        want = {"t:team-a": "team-a", "none": None, "t:team-b": "team-b",
                "t:team-a2": "team-a2", "hdr": "team-h"}
        for api in ("push", "ingest"):
            sent, requests, names = self.tenants_sent("", api, [5, 1])
            self.assertEqual(sent, want, api)
            self.assertEqual(sorted(requests, key=str), sorted(want.values(), key=str), api)
            self.assertNotIn("__tenant_id__", names)
            self.assertEqual(self.procs[-1].log_text().count(
                "left out a record: tenant ID contains unsupported character '/'"), 1)

    def test_a_servers_own_tenant_goes_for_every_record(self):
        """A server's tenant option wins over what records name: one
        request a batch, every record sent, even one whose own tenant no
        store would take."""
        sent, requests, _ = self.tenants_sent(", tenant: fixed", "push", [6, 0])
        self.assertEqual(sent, dict.fromkeys(self.TENANT_SERIES + ["hdr"], "fixed"))
        self.assertIn(requests, (["fixed"], ["fixed", "fixed"]))   # the pushes' batches merged or not

    def test_a_bad_tenant_is_left_out_only_where_it_would_go(self):
        """Of two servers, one with a tenant of its own: a record whose own
        tenant is no tenant ID still goes to that one; the other, which
        sends records' tenants, leaves it out, said and counted failed."""
        push_pb2 = pb()
        got, lock = [], threading.Lock()

        def answer(path, headers, body):
            with lock:
                got.extend((headers.get("X-Scope-OrgID"), {l.name: l.value for l in s.labels}["f"])
                           for s in push_pb2.PushRequest.FromString(body).series)
            return 200, {}
        port = self.serve_posts(answer)
        p, ingest = self.start_pushes_into(
            'pyroscope: {servers: [{endpoint: "http://127.0.0.1:%d", tenant: fixed}, '
            '{endpoint: "http://127.0.0.1:%d"}]}' % (port, port), relabel=TENANT_RULES)
        push_series(ingest, "f", self.TENANT_SERIES)
        wait_until(lambda: [n or 0 for n in exported_counts(p, "pyroscope")] == [4, 1],
                   "four records sent to both, one failed")
        self.assertEqual(p.stop(), 0)
        self.assertEqual(sorted(f for t, f in got if t == "fixed"), sorted(self.TENANT_SERIES))
        self.assertEqual(sorted((t or "", f) for t, f in got if t != "fixed"),
                         [("", "none"), ("team-a", "t:team-a"), ("team-a2", "t:team-a2"),
                          ("team-b", "t:team-b")])
        self.assertEqual(p.log_text().count(
            "left out a record for the servers with no tenant of their own: tenant ID contains "
            "unsupported character '/'"), 1)

    def ingest_server(self, answers):
        """An /ingest server answering with the statuses in answers in turn
        (the last repeating): (its port, the f label of each /ingest)."""
        import urllib.parse
        got = []

        def answer(path, headers, body):
            name = urllib.parse.parse_qs(path.split("?", 1)[1])["name"][0]
            got.append(re.search(r"f=(\w)", name).group(1))
            return answers.pop(0) if len(answers) > 1 else answers[0], {}
        return self.serve_posts(answer), got

    def test_an_ingest_retry_sends_only_what_was_not_taken(self):
        """With /ingest a batch goes as a request per record: after the second
        is answered 503, the retry starts at it; the first is not sent twice."""
        port, got = self.ingest_server([200, 503, 200])
        self.push_three_until_retried(
            'pyroscope: {endpoint: "http://127.0.0.1:%d", api: ingest, '
            'retry_on_failure: {initial_interval: 10ms}}' % port, got)
        self.assertEqual(got, ["a", "b", "b", "c"])

    def test_an_ingest_refused_for_good_does_not_stop_the_next(self):
        """The second /ingest of a batch answered 400: the third still goes,
        none twice; two records sent, one failed."""
        port, got = self.ingest_server([200, 400, 200])
        self.push_three_until_counted(
            'pyroscope: {endpoint: "http://127.0.0.1:%d", api: ingest}' % port, [2, 1])
        self.assertEqual(got, ["a", "b", "c"])

    def test_several_servers_count_each_record_once(self):
        """Two servers: a record one of them refused for good counts failed,
        once, whatever the other did; the rest count sent once both took
        them. With /ingest the refusing server still gets the records after
        the one it refused."""
        port_a, got_a = self.ingest_server([200, 400, 200])
        port_b, got_b = self.ingest_server([200])
        self.push_three_until_counted(
            'pyroscope: {api: ingest, servers: [{endpoint: "http://127.0.0.1:%d"}, '
            '{endpoint: "http://127.0.0.1:%d"}]}' % (port_a, port_b), [2, 1])
        self.assertEqual((got_a, got_b), (["a", "b", "c"], ["a", "b", "c"]))
        got_a, got_b = [], []
        port_a = self.serve_http(stand_in(got_a, [400]))
        port_b = self.serve_http(stand_in(got_b, [200]))
        self.push_three_until_counted(
            'pyroscope: {servers: [{endpoint: "http://127.0.0.1:%d"}, '
            '{endpoint: "http://127.0.0.1:%d"}]}' % (port_a, port_b), [0, 3])
        self.assertEqual((len(got_a), len(got_b)), (1, 1))

    def test_fixes_are_counted_once_however_often_a_batch_is_tried(self):
        got = []
        port = self.serve_http(stand_in(got, [503, 200]))
        p, ingest = self.start_pushes_into('pyroscope: {endpoint: "http://127.0.0.1:%d", '
                                           'retry_on_failure: {initial_interval: 10ms}}' % port)
        # 27 labels of its own, service_name, __name__, pyroscope_spy and
        # __delta__: one over 30
        braces = "%2C".join("k%d%%3Dx" % i for i in range(27))
        status, body = http_post("http://%s/ingest?name=app.cpu%%7B%s%%7D&format=folded"
                                 % (ingest, braces), b"a;b 1\n")
        self.assertEqual(status, 200, body)
        wait_until(lambda: len(got) >= 2, "a push and its retry")
        self.assertEqual(len(got[1][2].series[0].labels), 30)
        self.assertEqual(metric_value(p.metrics(), "profd_pyroscope_label_fixes",
                                      component="pyroscope"), 1)

    def fill_a_pipeline(self, backend, taken, lock, shutdown_timeout="30s"):
        """profd with two Pyroscope receivers: one into an exporter whose
        backend answers backend["status"] (the i labels of what it takes
        with 200 go into taken), with a queue of 1 KiB that fills while it
        answers 503; the other into files. Six pushes go to the first one
        by one on a thread (until one is refused), and this returns once one
        waits for room on a worker: (profd, the first receiver's address,
        the other's, the thread, the statuses the pushes got so far)."""
        def take(series):
            taken.update(l.value for sr in series for l in sr.labels if l.name == "i")
        p = self.start("""
receivers:
  pyroscope/full: {endpoint: "127.0.0.1:0"}
  pyroscope/other: {endpoint: "127.0.0.1:0"}
exporters:
  pyroscope:
    endpoint: "http://127.0.0.1:%d"
    sending_queue: {queue_size: 1KiB, block_timeout: 60s, flush_timeout: 0s}
    retry_on_failure: {initial_interval: 20ms, max_interval: 50ms, max_elapsed_time: 0s}
    shutdown_timeout: %s
  pprof_file: {directory: ./profiles, path_template: "{service_name}/{i}.pb.gz"}
service:
  telemetry: {metrics: {address: ""}, logs: {level: debug}}
  pipelines:
    profiles/full: {receivers: [pyroscope/full], exporters: [pyroscope]}
    profiles/other: {receivers: [pyroscope/other], exporters: [pprof_file]}
""" % (self.serve_http(gated_backend(backend, lock, take)), shutdown_timeout))
        full, other = (p.listening("%s: Pyroscope ingest and push.v1 (HTTP/1.1, HTTP/2, gRPC)" % r)
                       for r in ("pyroscope/full", "pyroscope/other"))
        heap = open(os.path.join(GO_CORPUS, "heap.pb.gz"), "rb").read()
        sent = []    # statuses, in order: each push waits for the one before
        marks = []   # where profd's log stood as each push was sent

        def push_in_turn():   # until one is refused
            for i in range(1, 7):
                marks.append(p.mark())
                sent.append(http_post(INGEST_I % (full, i), heap)[0])
                if sent[-1] != 200:
                    return
        pusher = threading.Thread(target=push_in_turn)
        pusher.start()
        # The sender retries the first and the queue holds the second, so
        # the third waits for room. The second may wait a moment too (until
        # the sender takes the first), so the wait looked for is the third's.
        wait_until(lambda: len(marks) >= 3, "the third push")
        p.wait_log(r"a request of \d+ bytes on a worker", start=marks[2])
        return p, full, other, pusher, sent

    def test_a_pipeline_through_symbolize_is_served_on_a_worker(self):
        """symbolize may read binaries or fetch them for a long time: every
        request of a pipeline through it is handled on a worker thread, so
        the event loop never does that work, whatever the request's size."""
        p = self.start("""
receivers:
  pyroscope: {endpoint: "127.0.0.1:0"}
processors:
  symbolize: {}
exporters:
  pprof_file: {directory: ./profiles, path_template: "{service_name}/{i}.pb.gz"}
service:
  telemetry: {metrics: {address: ""}, logs: {level: debug}}
  pipelines:
    profiles: {receivers: [pyroscope], processors: [symbolize], exporters: [pprof_file]}
""")
        address = p.listening("pyroscope: Pyroscope ingest and push.v1 (HTTP/1.1, HTTP/2, gRPC)")
        heap = open(os.path.join(GO_CORPUS, "heap.pb.gz"), "rb").read()
        self.assertEqual(http_post(INGEST_I % (address, 3), heap)[0], 200)
        p.wait_log(r"pyroscope: a request of \d+ bytes on a worker")
        wait_until(lambda: os.path.exists(self.path("profiles", "app", "3.pb.gz")),
                   "the profile's file")
        self.assertEqual(p.stop(), 0)

    def test_a_full_pipeline_waits_on_a_worker_and_stalls_no_other(self):
        """Requests meeting a full queue (block policy) wait for room on a
        worker thread: the other receivers on the event loop keep answering
        meanwhile, and once the backend takes profiles again the waiting
        request is accepted, and every accepted profile arrives."""
        backend, taken, lock = {"status": 503}, set(), threading.Lock()
        p, _, other, pusher, sent = self.fill_a_pipeline(backend, taken, lock)
        heap = open(os.path.join(GO_CORPUS, "heap.pb.gz"), "rb").read()
        t0 = time.monotonic()
        self.assertEqual(http_post(INGEST_I % (other, 99), heap)[0], 200)
        self.assertLess(time.monotonic() - t0, 10)   # not the 60 s block_timeout
        self.assertTrue(pusher.is_alive())   # the full pipeline's push still waits
        wait_until(lambda: os.path.exists(self.path("profiles", "app", "99.pb.gz")),
                   "the other pipeline's file")
        with lock:
            backend["status"] = 200
        pusher.join(DEADLINE)
        self.assertEqual(sent, [200] * 6)
        wait_until(lambda: len(taken) == 6, "every accepted profile at the backend")
        self.assertEqual(taken, {str(i) for i in range(1, 7)})
        self.assertEqual(p.stop(), 0)

    def test_stopping_answers_a_waiting_request_retry_later(self):
        """SIGTERM while a push waits for room: it is answered 429 at once
        (not accepted, so nothing is lost) and profd stops within the
        exporter's shutdown_timeout, not block_timeout."""
        backend, taken, lock = {"status": 503}, set(), threading.Lock()
        p, _, _, pusher, sent = self.fill_a_pipeline(backend, taken, lock,
                                                     shutdown_timeout="1s")
        t0 = time.monotonic()
        self.assertEqual(p.stop(), 0)
        self.assertLess(time.monotonic() - t0, 15)   # not the 60 s block_timeout
        pusher.join(DEADLINE)
        self.assertEqual(sent, [200] * (len(sent) - 1) + [429])

    @unittest.skipIf(grpc is None, "python3-grpcio is not installed")
    def test_a_request_waits_for_room_no_longer_than_its_deadline(self):
        """A push with a deadline (gRPC's grpc-timeout, Connect's
        Connect-Timeout-Ms) that meets a full queue waits until its
        deadline, not block_timeout: it is not accepted after its client
        gave up, so once the backend takes profiles again it is not among
        them (its client was told to retry it)."""
        push_pb2 = pb()
        backend, taken, lock = {"status": 503}, set(), threading.Lock()
        p, full, _, pusher, sent = self.fill_a_pipeline(backend, taken, lock)
        heap = open(os.path.join(GO_CORPUS, "heap.pb.gz"), "rb").read()

        def late(i):
            return push_pb2.PushRequest(series=[push_pb2.RawProfileSeries(
                labels=[push_pb2.LabelPair(name="__name__", value="app.alloc_space"),
                        push_pb2.LabelPair(name="i", value=i)],
                samples=[push_pb2.RawSample(raw_profile=heap)])]).SerializeToString()
        refused = len(p.wait_log("asking the sender to retry", count=0))
        with grpc.insecure_channel(full) as ch:
            call = ch.unary_unary(PUSH, request_serializer=lambda m: m,
                                  response_deserializer=lambda b: b)
            with self.assertRaises(grpc.RpcError) as e:
                call(late("77"), timeout=1.5)
        # the worker answers "retry" at the deadline the request gave it, which
        # races the client's own timer: either way it was not accepted
        self.assertIn(e.exception.code(), (grpc.StatusCode.DEADLINE_EXCEEDED,
                                           grpc.StatusCode.RESOURCE_EXHAUSTED))
        p.wait_log("asking the sender to retry", count=refused + 1)   # its worker gave up
        t0 = time.monotonic()
        status, _ = http_post("http://%s%s" % (full, PUSH), late("78"),
                              {"Content-Type": "application/proto",
                               "Connect-Protocol-Version": "1", "Connect-Timeout-Ms": "1500"})
        self.assertEqual(status, 429)
        self.assertLess(time.monotonic() - t0, 10)   # not the 60 s block_timeout
        with lock:
            backend["status"] = 200
        pusher.join(DEADLINE)
        self.assertEqual(sent, [200] * 6)
        self.assertEqual(p.stop(), 0)   # everything accepted is sent before it exits
        self.assertEqual(taken, {str(i) for i in range(1, 7)})

    def test_oversize_bodies_and_gzip_bombs(self):
        push_pb2 = pb()
        p = self.start(RECEIVER.replace('endpoint: "127.0.0.1:0"',
                                        'endpoint: "127.0.0.1:0", max_request_body_size: 1MiB')
                       % "{service_name}")
        url = "http://%s" % address(p)
        bomb = gzip.compress(b"\x00" * (64 << 20))   # 64 KiB that inflate to 64 MiB
        ingest = url + "/ingest?name=app.cpu&format=pprof"
        status, body = http_post(ingest, b"\x00" * (2 << 20))
        self.assertEqual(status, 413)   # over max_request_body_size as sent
        status, body = http_post(ingest, bomb, {"Content-Encoding": "gzip"})
        self.assertEqual(status, 413)   # over it once Content-Encoding is undone
        self.assertIn(b"limit", body)
        status, body = http_post(ingest, bomb)   # a gzip'd "profile" that inflates past it
        self.assertEqual(status, 422)
        self.assertIn(b"exceeds the limit", body)
        req = push_pb2.PushRequest(series=[push_pb2.RawProfileSeries(
            labels=[push_pb2.LabelPair(name="__name__", value="x")],
            samples=[push_pb2.RawSample(raw_profile=bomb)])])
        status, body = http_post(url + PUSH, req.SerializeToString(),
                                 {"Content-Type": "application/proto"})
        self.assertEqual(status, 400)
        self.assertIn(b"exceeds the limit", body)
        heap = open(os.path.join(GO_CORPUS, "heap.pb.gz"), "rb").read()
        status, _ = http_post(url + "/ingest?name=ok.alloc_space&format=pprof", heap)
        self.assertEqual(status, 200)   # and it still serves
        wait_until(lambda: os.path.exists(self.path("profiles", "ok")), "the good one")
        self.assertEqual(p.stop(), 0)

