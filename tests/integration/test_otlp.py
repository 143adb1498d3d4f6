# SPDX-License-Identifier: Apache-2.0
"""OTLP profiles in and out: profd -> profd over gRPC and HTTP for every Go
corpus profile, Python grpcio (with classes protoc generates from
proto/otlp) as the client that sends known profiles and as the server that
checks what the exporter sends, and the protocol's answers to bad input."""
import gzip
import os
import re
import shutil
import subprocess
import threading
import time
import unittest
import urllib.error
import urllib.request

from harness import (GO_CORPUS, ROOT, Profd, ProfdTestCase, corpus_files, exported_counts,
                     make_test_certs, metric_value, protoc_modules, push_series, raw_pprof, run,
                     sign_test_cert, TENANT_RULES, wait_until)

EXPORT = "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"

try:
    import grpc
except ImportError:   # the suite installs python3-grpcio; say so rather than fail obscurely
    grpc = None

_pb = None


def pb():
    """The generated OTLP classes (protoc --python_out over proto/otlp), once."""
    global _pb
    if _pb is None:
        names = sorted(os.listdir(os.path.join(ROOT, "proto", "otlp")))
        modules = dict(zip(names, protoc_modules("otlp", names)))
        _pb = (modules["profiles_service.proto"], modules["status.proto"])
    return _pb


def receiver_config(out_dir="profiles", extra="", tls="", metrics="", template="{__file__}"):
    return """
receivers:
  otlp:
    protocols:
      grpc: {endpoint: "127.0.0.1:0"%s}
      http: {endpoint: "127.0.0.1:0"%s}
%s
exporters:
  pprof_file: {directory: ./%s, path_template: "%s"}
service:
  telemetry: {metrics: {address: "%s"}}
  pipelines:
    profiles: {receivers: [otlp], exporters: [pprof_file]}
""" % (tls, tls, extra, out_dir, template, metrics)


def addresses(p):
    """The gRPC and HTTP addresses a receiving profd logged."""
    return p.listening("OTLP/gRPC"), p.listening("OTLP/HTTP")


def known_request(bad_stack=False):
    """A small profile built field by field: main -> foo, two samples, a
    sample attribute, a mapping with a build-id, a resource service name."""
    svc, _ = pb()
    from profiles_pb2 import (Function, KeyValueAndUnit, Line, Location, Mapping, Profile,
                              ProfilesDictionary, ResourceProfiles, Sample, ScopeProfiles, Stack,
                              ValueType)
    from common_pb2 import AnyValue, KeyValue
    from resource_pb2 import Resource
    strings = ["", "cpu", "nanoseconds", "main", "main.go", "foo", "/bin/app", "thread", "t1",
               "process.executable.build_id.gnu", "0123abcd", "samples", "count"]
    s = {v: i for i, v in enumerate(strings)}
    d = ProfilesDictionary(
        string_table=strings,
        mapping_table=[Mapping(), Mapping(memory_start=0x400000, memory_limit=0x500000,
                                          filename_strindex=s["/bin/app"],
                                          attribute_indices=[2])],
        function_table=[Function(), Function(name_strindex=s["main"], filename_strindex=s["main.go"]),
                        Function(name_strindex=s["foo"], filename_strindex=s["main.go"])],
        location_table=[Location(),
                        Location(mapping_index=1, address=0x401000,
                                 lines=[Line(function_index=1, line=10)]),
                        Location(mapping_index=1, address=0x402000,
                                 lines=[Line(function_index=2, line=20)])],
        stack_table=[Stack(), Stack(location_indices=[2, 1]), Stack(location_indices=[1])],
        attribute_table=[KeyValueAndUnit(),
                         KeyValueAndUnit(key_strindex=s["thread"],
                                         value=AnyValue(string_value="t1")),
                         KeyValueAndUnit(key_strindex=s["process.executable.build_id.gnu"],
                                         value=AnyValue(string_value="0123abcd"))])
    prof = Profile(sample_type=ValueType(type_strindex=s["cpu"], unit_strindex=s["nanoseconds"]),
                   period_type=ValueType(type_strindex=s["cpu"], unit_strindex=s["nanoseconds"]),
                   period=10000000, time_unix_nano=1700000000000000000, duration_nano=10**9,
                   samples=[Sample(stack_index=9 if bad_stack else 1, values=[30],
                                   attribute_indices=[1]),
                            Sample(stack_index=2, values=[7, 5])])
    res = Resource(attributes=[KeyValue(key="service.name", value=AnyValue(string_value="app")),
                               KeyValue(key="__file__", value=AnyValue(string_value="known.pb.gz"))])
    return svc.ExportProfilesServiceRequest(
        resource_profiles=[ResourceProfiles(resource=res,
                                            scope_profiles=[ScopeProfiles(profiles=[prof])])],
        dictionary=d)


def varint(n):
    out = b""
    while n >= 0x80:
        out += bytes([n & 0x7f | 0x80])
        n >>= 7
    return out + bytes([n])


def grpc_call(address, request_bytes, compression=None, timeout=20, metadata=None):
    """Sends raw bytes as the Export request; (status code, details, response bytes)."""
    with grpc.insecure_channel(address) as ch:
        call = ch.unary_unary(EXPORT, request_serializer=lambda b: b,
                              response_deserializer=lambda b: b)
        try:
            resp = call(request_bytes, timeout=timeout, compression=compression,
                        metadata=metadata)
            return grpc.StatusCode.OK, "", resp
        except grpc.RpcError as e:
            return e.code(), e.details(), b""


def http_post(address, body, content_type="application/x-protobuf", headers=None,
              path="/v1development/profiles"):
    """(status, body) of a POST to the receiver's HTTP server."""
    req = urllib.request.Request("http://%s%s" % (address, path), data=body, method="POST",
                                 headers=dict({"Content-Type": content_type}, **(headers or {})))
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


@unittest.skipIf(grpc is None, "python3-grpcio is not installed")
class OtlpReceiverTest(ProfdTestCase):

    def test_known_profile_from_grpcio_arrives_whole(self):
        p = self.start(receiver_config())
        grpc_addr, http_addr = addresses(p)
        code, details, resp = grpc_call(grpc_addr, known_request().SerializeToString())
        self.assertEqual(code, grpc.StatusCode.OK, details)
        svc, _ = pb()
        self.assertFalse(svc.ExportProfilesServiceResponse.FromString(resp).HasField("partial_success"))
        out = self.path("profiles", "known.pb.gz")
        wait_until(lambda: os.path.exists(out), "the known profile written")
        raw = raw_pprof(out)
        self.assertIn("Samples:\ncpu/nanoseconds\n", raw)
        self.assertRegex(raw, r"\n +30: 1 2 \n\s+thread:\[t1\]")
        self.assertRegex(raw, r"\n +12: 2 \n")   # values of one sample are summed
        self.assertRegex(raw, r"1: 0x402000 M=1 foo main.go:20 s=0")
        self.assertRegex(raw, r"2: 0x401000 M=1 main main.go:10 s=0")
        self.assertIn("/bin/app 0123abcd", raw)

    def test_bad_requests_get_the_protocols_errors_and_the_server_keeps_serving(self):
        p = self.start(receiver_config(extra="    max_request_body_size: 64KiB\n",
                                       metrics="127.0.0.1:0"))
        grpc_addr, http_addr = addresses(p)
        code, details, _ = grpc_call(grpc_addr, b"\xff\xff\xff garbage")
        self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("at byte", details)
        req = known_request()
        req.dictionary.location_table[1].lines[0].function_index = 99
        code, details, _ = grpc_call(grpc_addr, req.SerializeToString())
        self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("function_index 99 out of range", details)
        code, details, _ = grpc_call(grpc_addr, b"\x0a" + b"\x00" * 100000)
        self.assertEqual(code, grpc.StatusCode.RESOURCE_EXHAUSTED)
        # a gzip bomb: small on the wire, over the limit once inflated
        code, details, _ = grpc_call(grpc_addr, b"\x2a\x00" * 2000000, grpc.Compression.Gzip)
        self.assertEqual(code, grpc.StatusCode.RESOURCE_EXHAUSTED)
        # a stack pointing nowhere: that profile refused alone (partial success)
        code, details, resp = grpc_call(grpc_addr, known_request(bad_stack=True).SerializeToString())
        self.assertEqual(code, grpc.StatusCode.OK, details)
        svc, status_pb2 = pb()
        ps = svc.ExportProfilesServiceResponse.FromString(resp).partial_success
        self.assertEqual(ps.rejected_profiles, 1)
        self.assertIn("stack_index 9 out of range", ps.error_message)
        # HTTP: wrong content type, garbage, oversize, gzip bomb, wrong method and path
        status, body = http_post(http_addr, b"{}", content_type="application/xml")
        self.assertEqual(status, 415)
        status, body = http_post(http_addr, b"\xff\xff\xff")
        self.assertEqual(status, 400)
        self.assertEqual(status_pb2.Status.FromString(body).code, 3)
        self.assertIn("at byte", status_pb2.Status.FromString(body).message)
        status, _ = http_post(http_addr, b"\x00" * 100000)
        self.assertEqual(status, 413)
        status, _ = http_post(http_addr, gzip.compress(b"\x2a\x00" * 2000000),
                              headers={"Content-Encoding": "gzip"})
        self.assertEqual(status, 413)
        status, _ = http_post(http_addr, b"", path="/elsewhere")
        self.assertEqual(status, 404)
        # a truncated gRPC frame, sent by hand over h2c
        with open(self.path("truncated"), "wb") as f:
            f.write(b"\x00\x00\x00\x01\x00ab")   # says 256 bytes, has 2
        r = subprocess.run(["curl", "-sS", "-v", "--http2-prior-knowledge", "-H",
                            "content-type: application/grpc", "-H", "te: trailers",
                            "--data-binary", "@" + self.path("truncated"), "http://%s%s" %
                            (grpc_addr, EXPORT)], capture_output=True, text=True, timeout=20)
        self.assertIn("grpc-status: 3", r.stderr)
        self.assertIn("truncated gRPC message", r.stderr)
        # still serving, and what it refused was logged with the reason
        code, details, _ = grpc_call(grpc_addr, known_request().SerializeToString())
        self.assertEqual(code, grpc.StatusCode.OK, details)
        wait_until(lambda: os.path.exists(self.path("profiles", "known.pb.gz")), "a good profile")
        p.wait_log(r"function_index 99 out of range")
        # every refusal counted: 5 over gRPC (the partial success's profile
        # among them), 5 over HTTP, the truncated frame
        refused = metric_value(p.metrics(), "profd_component_refused_records_total",
                               kind="receiver", id="otlp")
        self.assertEqual(refused, 11)
        self.assertEqual(metric_value(p.metrics(), "profd_component_accepted_records_total",
                                      kind="receiver", id="otlp"), 1)
        self.assertEqual(p.stop(), 0)

    def test_json_from_protobufs_own_json_printer(self):
        from google.protobuf import json_format
        p = self.start(receiver_config())
        _, http_addr = addresses(p)
        body = json_format.MessageToJson(known_request()).encode()
        status, resp = http_post(http_addr, body, content_type="application/json")
        self.assertEqual(status, 200, resp)
        self.assertEqual(resp.strip(), b"{}")
        out = self.path("profiles", "known.pb.gz")
        wait_until(lambda: os.path.exists(out), "the known profile written")
        self.assertRegex(raw_pprof(out), r"\n +30: 1 2 \n\s+thread:\[t1\]")
        status, resp = http_post(http_addr, b'{"resourceProfiles": [', content_type="application/json")
        self.assertEqual(status, 400)
        self.assertIn(b'"code":3', resp)
        self.assertIn(b"line 1", resp)
        body = json_format.MessageToJson(known_request(bad_stack=True)).encode()
        status, resp = http_post(http_addr, body, content_type="application/json")
        self.assertEqual(status, 200)
        self.assertIn(b'"rejectedProfiles":"1"', resp)

    def test_tls_on_both_protocols(self):
        import ssl
        ca, cert, key = make_test_certs(self.dir)
        p = self.start(receiver_config(tls=", tls: {cert_file: %s, key_file: %s}" % (cert, key)))
        grpc_addr, http_addr = addresses(p)
        creds = grpc.ssl_channel_credentials(root_certificates=open(ca, "rb").read())
        with grpc.secure_channel(grpc_addr, creds) as ch:
            call = ch.unary_unary(EXPORT, request_serializer=lambda b: b,
                                  response_deserializer=lambda b: b)
            call(known_request().SerializeToString(), timeout=20)
        wait_until(lambda: os.path.exists(self.path("profiles", "known.pb.gz")), "via gRPC+TLS")
        os.unlink(self.path("profiles", "known.pb.gz"))
        ctx = ssl.create_default_context(cafile=ca)
        req = urllib.request.Request("https://%s/v1development/profiles" % http_addr,
                                     data=known_request().SerializeToString(), method="POST",
                                     headers={"Content-Type": "application/x-protobuf"})
        with urllib.request.urlopen(req, timeout=20, context=ctx) as r:
            self.assertEqual(r.status, 200)
        wait_until(lambda: os.path.exists(self.path("profiles", "known.pb.gz")), "via HTTPS")
        # profd -> profd over TLS, verified against the private CA
        self.spool_heap()
        os.makedirs(self.path("sender"))
        sender = Profd(self.path("sender"), sender_config(
            self.path("spool"), 'endpoint: "https://%s", tls: {ca_file: %s}' % (grpc_addr, ca)))
        self.procs.append(sender)
        wait_until(lambda: os.path.exists(self.path("profiles", "heap.pb.gz")), "profd over TLS")
        self.assertEqual(sender.stop(), 0)

    def test_exporter_tunnels_through_a_proxy_that_asks_for_credentials(self):
        """An exporter whose proxy (tinyproxy) asks for basic auth: with
        proxy_connect_header's Proxy-Authorization its CONNECT opens the
        tunnel and the profile arrives over gRPC+TLS; without it the export
        fails saying the proxy refused the tunnel with 407."""
        import base64
        from harness import TunnelProxy
        ca, cert, key = make_test_certs(self.dir)
        p = self.start(receiver_config(tls=", tls: {cert_file: %s, key_file: %s}" % (cert, key)))
        proxy = TunnelProxy(self.path("proxy"), "agent", "s3cret")
        self.addCleanup(proxy.stop)
        self.spool_heap()
        through = 'endpoint: "https://%s", tls: {ca_file: %s}, proxy_url: "%s", ' \
                  'shutdown_timeout: 100ms' % (addresses(p)[0], ca, proxy.url)
        header = ", proxy_connect_header: {Proxy-Authorization: ['Basic %s']}" % (
            base64.b64encode(b"agent:s3cret").decode())
        for sender, options in (("refused", through), ("let", through + header)):
            os.makedirs(self.path(sender))
            self.procs.append(Profd(self.path(sender),
                                    sender_config(self.path("spool"), options)))
        self.procs[1].wait_log(r"export to https://.* failed.*: the proxy refused the tunnel: "
                               r"HTTP 407")
        wait_until(lambda: os.path.exists(self.path("profiles", "heap.pb.gz")),
                   "the profile through the tunnel")
        for sender in self.procs[1:]:
            self.assertEqual(sender.stop(), 0)

    def test_exporter_asks_for_its_tls_server_name(self):
        """A receiver whose certificate names otlp.example alone: a sender
        given its address takes it with tls.server_name, over gRPC and
        HTTP, and without it refuses the certificate."""
        make_test_certs(self.dir)
        cert, key = sign_test_cert(self.dir, "named", "otlp.example",
                                   "subjectAltName=DNS:otlp.example")
        p = self.start(receiver_config(tls=", tls: {cert_file: %s, key_file: %s}" % (cert, key)))
        self.spool_heap()
        ca = self.path("ca.pem")
        grpc_addr, http_addr = addresses(p)
        named = "ca_file: %s, server_name: otlp.example" % ca
        for sender, protocol, address, tls in [("grpc", "grpc", grpc_addr, named),
                                               ("http", "http", http_addr, named),
                                               ("unnamed", "grpc", grpc_addr, "ca_file: " + ca)]:
            os.makedirs(self.path(sender))
            self.procs.append(Profd(self.path(sender), sender_config(
                self.path("spool"), 'endpoint: "https://%s", protocol: %s, tls: {%s}, '
                'shutdown_timeout: 100ms' % (address, protocol, tls))))
            if sender == "unnamed":
                self.procs[-1].wait_log(r"export to https://%s failed.*: .*(SSL|certificate)" %
                                        re.escape(address))
            else:
                wait_until(lambda: os.path.exists(self.path("profiles", "heap.pb.gz")), sender)
                os.unlink(self.path("profiles", "heap.pb.gz"))
        for sender in self.procs[1:]:
            self.assertEqual(sender.stop(), 0)
        self.assertEqual(os.listdir(self.path("profiles")), [])

    def test_tenant_and_delta_mark_as_pyroscopes_otlp_endpoint_sets_them(self):
        """X-Scope-OrgID (gRPC metadata or an HTTP header) becomes
        __tenant_id__, and every profile gets __delta__="false", as
        Pyroscope reads OTLP profiles as deltas; a tenant that is no tenant
        ID is refused UNAUTHENTICATED, or 401."""
        p = self.start(receiver_config(template="{__tenant_id__}-{__delta__}-{__file__}"))
        grpc_addr, http_addr = addresses(p)

        def named(file):
            req = known_request()
            req.resource_profiles[0].resource.attributes[1].value.string_value = file
            return req.SerializeToString()
        code, details, _ = grpc_call(grpc_addr, named("g"), metadata=[("x-scope-orgid", "team-g")])
        self.assertEqual(code, grpc.StatusCode.OK, details)
        status, body = http_post(http_addr, named("h"), headers={"X-Scope-OrgID": "team-h"})
        self.assertEqual(status, 200, body)
        for name in ("team-g-false-g", "team-h-false-h"):
            wait_until(lambda: os.path.exists(self.path("profiles", name)), name)
        code, details, _ = grpc_call(grpc_addr, named("x"), metadata=[("x-scope-orgid", "a/b")])
        self.assertEqual((code, details), (grpc.StatusCode.UNAUTHENTICATED,
                                           "tenant ID contains unsupported character '/'"))
        status, body = http_post(http_addr, named("y"), headers={"X-Scope-OrgID": "a b"})
        self.assertEqual(status, 401, body)
        self.assertEqual(p.stop(), 0)
        self.assertEqual(sorted(os.listdir(self.path("profiles"))),
                         ["team-g-false-g", "team-h-false-h"])

    def test_bearer_token(self):
        p = self.start(receiver_config(extra="    bearer_token: s3cret\n"))
        grpc_addr, http_addr = addresses(p)
        code, _, _ = grpc_call(grpc_addr, known_request().SerializeToString())
        self.assertEqual(code, grpc.StatusCode.UNAUTHENTICATED)
        status, _ = http_post(http_addr, known_request().SerializeToString(),
                              headers={"Authorization": "Bearer s3cret"})
        self.assertEqual(status, 200)
        self.assertNotIn("s3cret", p.log_text())


def without_orphans(raw):
    """go tool pprof -raw output, less the mappings of a profile without
    samples: OTLP reaches mappings only through locations, so a mapping that
    no sample uses has nothing to travel with (the Go runtime lists its
    binary even in an empty mutex profile)."""
    head = raw.partition("Mappings\n")[0]
    return head if head.endswith("\nLocations\n") else raw


def f_labels(requests):
    """The f labels of each request's profiles, requests as serve() gets them."""
    return [[kv.value.string_value for rp in r.resource_profiles
             for kv in rp.resource.attributes if kv.key == "f"] for r, _, _ in requests]


# What a partial success says: long enough that its message's length, and
# the partial success's, take two bytes each.
PARTIAL_MESSAGE = "no stacks: " + ", ".join("profile %d has no sample with a location" % i
                                             for i in range(4))


def sender_config(spool, exporter):
    return """
receivers:
  pprof_file: {include: ["%s/*.pb.gz"], after_ingest: keep, source_label: __file__}
exporters:
  otlp: {%s}
service:
  telemetry: {metrics: {address: ""}}
  pipelines:
    profiles: {receivers: [pprof_file], exporters: [otlp]}
""" % (spool, exporter)


@unittest.skipIf(grpc is None, "python3-grpcio is not installed")
class ProfdToProfdTest(ProfdTestCase):
    """What one profd's exporter sends, a second profd's receiver takes, and
    every corpus profile comes out as it went in (go tool pprof -raw)."""

    def round_trip(self, protocol, compression, encoding="proto"):
        receiver = self.start(receiver_config())
        grpc_addr, http_addr = addresses(receiver)
        spool = self.path("spool")
        os.makedirs(spool)
        names = corpus_files()
        for name in names:
            shutil.copyfile(os.path.join(GO_CORPUS, name), os.path.join(spool, name))
        endpoint = grpc_addr if protocol == "grpc" else http_addr
        sender_dir = self.path("sender")
        os.makedirs(sender_dir)
        sender = Profd(sender_dir, sender_config(spool, 'endpoint: "%s", protocol: %s, '
                                                 'compression: %s, encoding: %s' % (
                                                     endpoint, protocol, compression, encoding)))
        self.procs.append(sender)
        outs = [self.path("profiles", n) for n in names]
        wait_until(lambda: all(os.path.exists(o) for o in outs), "every corpus profile received")
        for name, out in zip(names, outs):
            self.assertEqual(without_orphans(raw_pprof(out)),
                             without_orphans(raw_pprof(os.path.join(GO_CORPUS, name))), name)
        self.assertEqual(sender.stop(), 0)
        self.assertEqual(receiver.stop(), 0)

    def test_grpc_gzip(self):
        self.round_trip("grpc", "gzip")

    def test_grpc_uncompressed(self):
        self.round_trip("grpc", "none")

    def test_http_gzip(self):
        self.round_trip("http", "gzip")

    def test_http_zstd(self):
        self.round_trip("http", "zstd")

    def test_http_json(self):
        self.round_trip("http", "gzip", "json")


@unittest.skipIf(grpc is None, "python3-grpcio is not installed")
class OtlpExporterTest(ProfdTestCase):
    """A grpcio server as the receiving end: it checks the request field by
    field and answers as a backend would (UNAVAILABLE first: retried;
    INVALID_ARGUMENT: not retried)."""

    def serve(self, answers):
        """A grpcio Export server answering with answers in turn (the last
        repeating): a status code, (code, retry delay in seconds) for an
        error carrying a google.rpc.RetryInfo, or a number n for a partial
        success refusing n profiles. Returns (address, requests), each
        request (message, metadata as (key, value) pairs, monotonic arrival
        time)."""
        svc, status_pb2 = pb()
        got, lock = [], threading.Lock()

        def export(request, context):
            with lock:
                got.append((svc.ExportProfilesServiceRequest.FromString(request),
                            list(context.invocation_metadata()), time.monotonic()))
                answer = answers.pop(0) if len(answers) > 1 else answers[0]
            if isinstance(answer, int):
                return svc.ExportProfilesServiceResponse(partial_success=dict(
                    rejected_profiles=answer, error_message=PARTIAL_MESSAGE)).SerializeToString()
            if isinstance(answer, tuple):   # RetryInfo{retry_delay: Duration{nanos}}
                answer, delay = answer
                nanos = int(delay * 1e9)
                duration = b"\x10" + varint(nanos)
                info = b"\x0a" + varint(len(duration)) + duration
                st = status_pb2.Status(code=answer.value[0], message="slow down", details=[
                    status_pb2.Any(type_url="type.googleapis.com/google.rpc.RetryInfo",
                                   value=info)])
                context.set_trailing_metadata([("grpc-status-details-bin",
                                                st.SerializeToString())])
            if answer != grpc.StatusCode.OK:
                context.abort(answer, "backend says %s" % answer.name)
            return b""

        return self.serve_grpc(
            "opentelemetry.proto.collector.profiles.v1development.ProfilesService", "Export",
            export), got

    def perf_profile(self):
        """A symbolless pprof of a corpus perf.data: mappings with build-ids."""
        src = os.path.join(os.path.dirname(GO_CORPUS), "perf", "burn.fp.data")
        out = self.path("spool", "perf.pb.gz")
        os.makedirs(self.path("spool"), exist_ok=True)
        r = run(["convert", "--no-symbolize", src, "-o", out])
        self.assertEqual(r.returncode, 0, r.stderr)
        shutil.copyfile(os.path.join(GO_CORPUS, "heap.pb.gz"), self.path("spool", "heap.pb.gz"))

    def test_request_fields_and_retry_on_unavailable(self):
        self.perf_profile()
        address, got = self.serve([grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.OK])
        p = self.start(sender_config(self.path("spool"),
                                     'endpoint: "%s", headers: {x-tenant: t1}, '
                                     'retry_on_failure: {initial_interval: 10ms}' % address))
        def delivered():
            """The files in the requests after the first (which was refused)."""
            return {kv.value.string_value for r, _, _ in got[1:] for rp in r.resource_profiles
                    for kv in rp.resource.attributes if kv.key == "__file__"}
        wait_until(lambda: delivered() == {"heap.pb.gz", "perf.pb.gz"}, "every file, retried")
        p.wait_log(r"will retry")
        requests = [r for r, _, _ in got]
        self.assertEqual(dict(got[0][1]).get("x-tenant"), "t1")
        by_file = {}
        for req in requests:
            d = req.dictionary
            self.assertEqual(d.string_table[0], "")
            self.assertEqual(d.mapping_table[0].ByteSize(), 0)
            self.assertEqual(d.location_table[0].ByteSize(), 0)
            self.assertEqual(d.link_table[0].trace_id, b"\0" * 16)
            self.assertEqual(len(set(d.string_table)), len(d.string_table))   # deduplicated
            for rp in req.resource_profiles:
                attrs = {kv.key: kv.value.string_value for kv in rp.resource.attributes}
                by_file[attrs["__file__"]] = (req, rp)
        heap_req, heap = by_file["heap.pb.gz"]
        types = [heap_req.dictionary.string_table[p.sample_type.type_strindex]
                 for p in heap.scope_profiles[0].profiles]
        self.assertEqual(types, ["alloc_objects", "alloc_space", "inuse_objects", "inuse_space"])
        perf_req, perf = by_file["perf.pb.gz"]
        d = perf_req.dictionary
        build_ids = set()
        for m in d.mapping_table[1:]:
            for i in m.attribute_indices:
                a = d.attribute_table[i]
                if d.string_table[a.key_strindex] == "process.executable.build_id.gnu":
                    build_ids.add(a.value.string_value)
        raw = raw_pprof(self.path("spool", "perf.pb.gz"))
        for bid in build_ids:
            self.assertIn(bid, raw)
        self.assertTrue(build_ids)
        for prof in perf.scope_profiles[0].profiles:
            for s in prof.samples:
                self.assertEqual(len(s.values), 1)
                self.assertLess(s.stack_index, len(d.stack_table))

    def test_a_stored_queue_sends_after_a_restart_what_a_backend_outage_left(self):
        """sending_queue.storage: the backend refuses everything (UNAVAILABLE)
        until profd stops, whose drain gives up; the records stay in the
        storage, taken (the spooled files are deleted as delivered), and the
        next profd, once the backend is back, sends each of them once and
        leaves the storage empty. The files are synced (storage_fsync), and
        /metrics counts them."""
        self.outage_then_restart("storage_fsync: true", "profd_exporter_queue_stored_records", 3)

    def test_a_stored_queue_beyond_memory_reads_its_records_back(self):
        """The same with memory_size smaller than any record: each is kept in
        its file alone (nothing of the queue in memory, /metrics says) and
        read back when its turn comes, before the restart and after."""
        self.outage_then_restart("memory_size: 1", "profd_exporter_queue_memory_bytes", 0)

    def outage_then_restart(self, queue_options, gauge, while_refused):
        """A backend outage over a profd restart, sending_queue.storage with
        queue_options: the gauge of /metrics named is while_refused once the
        three records are stored, and each is delivered once after."""
        answers = [grpc.StatusCode.UNAVAILABLE]
        address, got = self.serve(answers)
        spool, storage = self.path("spool"), self.path("queue")
        os.makedirs(spool)
        names = ["heap.pb.gz", "goroutine.pb.gz", "mutex.pb.gz"]
        for name in names:
            shutil.copyfile(os.path.join(GO_CORPUS, name), os.path.join(spool, name))
        config = sender_config(spool, 'endpoint: "%s", shutdown_timeout: 500ms, '
                               'sending_queue: {storage: %s, %s}, '
                               'retry_on_failure: {initial_interval: 10ms, max_interval: 50ms}'
                               % (address, storage, queue_options)).replace(
                                   "after_ingest: keep", "after_ingest: delete").replace(
                                   'address: ""', 'address: "127.0.0.1:0"')

        stored = os.path.join(storage, "otlp")

        def stored_records(p):
            return metric_value(p.metrics(), "profd_exporter_queue_stored_records", id="otlp")
        first = self.start(config)
        wait_until(lambda: len(got) >= 3, "the backend refusing a few tries")
        wait_until(lambda: stored_records(first) == 3, "/metrics counting the stored records")
        self.assertEqual(metric_value(first.metrics(), gauge, id="otlp"), while_refused)
        self.assertEqual(first.stop(), 0)
        first.wait_log(r"record\(s\) kept in %s for the next start" % re.escape(stored))
        self.assertEqual(len([f for f in os.listdir(stored) if f.endswith(".rec")]), 3)
        self.assertEqual(os.listdir(spool), [])   # taken: the storage has them
        answers[:] = [grpc.StatusCode.OK]
        before = len(got)
        second = self.start(config)
        second.wait_log(r"3 record\(s\) queued again from %s" % re.escape(stored))

        def delivered():
            return sorted(kv.value.string_value for r, _, _ in got[before:]
                          for rp in r.resource_profiles for kv in rp.resource.attributes
                          if kv.key == "__file__")
        wait_until(lambda: delivered() == sorted(names), "each stored record, once")
        wait_until(lambda: not [f for f in os.listdir(stored) if f.endswith(".rec")],
                   "the storage emptied")
        self.assertEqual(stored_records(second), 0)
        self.assertEqual(second.stop(), 0)
        self.assertEqual(delivered(), sorted(names))

    def test_a_retry_sends_only_the_requests_not_taken(self):
        """A batch split into a request per record (send_batch_size 1): after
        the second is refused UNAVAILABLE, the retry starts at it; the first
        is not sent twice (OTLP receivers do not deduplicate)."""
        address, got = self.serve([grpc.StatusCode.OK, grpc.StatusCode.UNAVAILABLE,
                                   grpc.StatusCode.OK])
        self.push_three_until_retried(
            'otlp: {endpoint: "%s", send_batch_size: 1, '
            'retry_on_failure: {initial_interval: 10ms}}' % address, got)
        self.assertEqual(f_labels(got), [["a"], ["b"], ["b"], ["c"]])

    def test_a_request_refused_for_good_does_not_stop_the_next(self):
        """The second of three requests refused INVALID_ARGUMENT (permanent):
        the third still goes, none is retried, and the records count as
        they went: two sent, one failed."""
        address, got = self.serve([grpc.StatusCode.OK, grpc.StatusCode.INVALID_ARGUMENT,
                                   grpc.StatusCode.OK])
        self.push_three_until_counted(
            'otlp: {endpoint: "%s", send_batch_size: 1}' % address, [2, 1])
        self.assertEqual(f_labels(got), [["a"], ["b"], ["c"]])

    def tenants_sent(self, exporter_options, counts):
        """Pushes five series as one batch (f=t:team-a, none, t:team-b,
        t:bad/one, t:team-a2), relabeled by TENANT_RULES and marked
        __delta__="false", into an otlp exporter with exporter_options until
        it counts [sent, failed] records as counts: ({f: the x-scope-orgid
        values it was sent with}, the attribute keys sent)."""
        address, got = self.serve([grpc.StatusCode.OK])
        p, ingest = self.start_pushes_into(
            'otlp: {endpoint: "%s"%s}' % (address, exporter_options),
            relabel=TENANT_RULES[:-1] + ", {target_label: __delta__, replacement: 'false'}]")
        push_series(ingest, "f", ["t:team-a", "none", "t:team-b", "t:bad/one", "t:team-a2"])
        wait_until(lambda: [n or 0 for n in exported_counts(p, "otlp")] == counts,
                   "[sent, failed] records to be %s" % counts)
        self.assertEqual(p.stop(), 0)
        sent, keys = {}, set()
        for (req, metadata, _), fs in zip(got, f_labels(got)):
            sent.update(dict.fromkeys(fs, [v for k, v in metadata if k == "x-scope-orgid"]))
            keys.update(kv.key for rp in req.resource_profiles for kv in rp.resource.attributes)
        return sent, keys

    def test_each_records_tenant_goes_as_x_scope_orgid(self):
        """A record's __tenant_id__ goes as X-Scope-OrgID, one request a
        tenant, and neither it nor __delta__ as an attribute; a record whose
        tenant is no tenant ID is left out, said and counted failed."""
        sent, keys = self.tenants_sent("", [4, 1])
        self.assertEqual(sent, {"t:team-a": ["team-a"], "none": [], "t:team-b": ["team-b"],
                                "t:team-a2": ["team-a2"]})
        self.assertTrue({"f", "__name__"} <= keys and not {"__tenant_id__", "__delta__"} & keys,
                        keys)
        self.procs[-1].wait_log("left out a record: tenant ID contains unsupported character")

    def test_a_tenant_in_the_headers_goes_for_every_record(self):
        sent, _ = self.tenants_sent(", headers: {X-Scope-OrgID: fixed}", [5, 0])
        self.assertEqual(set(map(tuple, sent.values())), {("fixed",)})
        self.assertEqual(len(sent), 5)

    def test_credentials_go_as_grpc_metadata(self):
        """authorization, and a token fetched with oauth2, go as gRPC's
        authorization metadata."""
        address, got = self.serve([grpc.StatusCode.OK])
        token_url, tokens = self.token_endpoint([(200, {"access_token": "tok",
                                                         "expires_in": 3600})])
        for auth, want in [
                ("authorization: {type: ApiKey, credentials: k1}", "ApiKey k1"),
                ("oauth2: {client_id: c, client_secret: s, token_url: '%s'}" % token_url,
                 "Bearer tok")]:
            del got[:]
            p, ingest = self.start_pushes_into('otlp: {endpoint: "%s", %s}' % (address, auth))
            push_series(ingest, "f", ["a"])
            wait_until(lambda: got, "a request")
            self.assertEqual(p.stop(), 0)
            self.assertEqual([v for k, v in got[0][1] if k == "authorization"], [want])
        self.assertEqual(len(tokens), 1)

    def test_a_partial_success_is_logged_and_its_profiles_counted_apart(self):
        """Refused profiles in a partial success are the receiver's; the
        response does not say of which records, which count as sent."""
        address, _ = self.serve([2])
        p, ingest = self.start_pushes_into('otlp: {endpoint: "%s"}' % address)
        push_series(ingest, "f", ["a"])
        p.wait_log(r"the receiver refused 2 profiles: %s$" % re.escape(PARTIAL_MESSAGE))
        wait_until(lambda: exported_counts(p, "otlp") == [1, 0], "the record counted as sent")
        self.assertEqual(metric_value(p.metrics(), "profd_otlp_rejected_profiles",
                                      component="otlp"), 2)
        self.assertEqual(p.stop(), 0)

    def test_a_refused_file_alone_is_kept_for_the_next_scan(self):
        """Three spooled files reach the exporter as one batch and go as a
        request each; the backend refuses the second for good (and any
        later one). Only that file's ack fails: the other two are deleted,
        it is kept to be read again."""
        spool = self.path("spool")
        os.makedirs(spool)
        for name in ("a", "b", "c"):
            shutil.copyfile(os.path.join(GO_CORPUS, "heap.pb.gz"),
                            os.path.join(spool, name + ".pb.gz"))
        address, got = self.serve([grpc.StatusCode.OK, grpc.StatusCode.INVALID_ARGUMENT,
                                   grpc.StatusCode.OK, grpc.StatusCode.INVALID_ARGUMENT])
        p = self.start(sender_config(spool, 'endpoint: "%s", send_batch_size: 1, '
                                     'sending_queue: {flush_timeout: 2s, flush_size: 3}' % address)
                       .replace("after_ingest: keep", "after_ingest: delete"))
        wait_until(lambda: len(os.listdir(spool)) == 1, "two files deleted")

        def source(request):
            return [kv.value.string_value for rp in request.resource_profiles
                    for kv in rp.resource.attributes if kv.key == "__file__"]
        refused = source(got[1][0])
        self.assertEqual(len(refused), 1)
        self.assertEqual(os.listdir(spool), [refused[0]])
        self.assertEqual(p.stop(), 0)

    def test_strings_that_are_not_utf8_go_as_valid_utf8(self):
        """proto3 string fields must be UTF-8 (grpcio's protobuf refuses the
        request otherwise): a label value and a frame with byte ff."""
        address, got = self.serve([grpc.StatusCode.OK])
        # the label bad: a file's name with byte ff
        _, ingest = self.start_pushes_into('otlp: {endpoint: "%s"}' % address, "{}")
        req = urllib.request.Request("http://%s/ingest?name=app.cpu&format=folded" % ingest,
                                     data=b"main;f\xff 1\n", method="POST")
        self.assertEqual(urllib.request.urlopen(req, timeout=20).status, 200)

        def bad_and_strings():
            requests = [request for request, *_ in list(got)]
            return ([kv.value.string_value for r in requests for rp in r.resource_profiles
                     for kv in rp.resource.attributes if kv.key == "bad"],
                    [s for r in requests for s in r.dictionary.string_table])
        wait_until(lambda: bad_and_strings()[0] and "f\ufffd" in bad_and_strings()[1],
                   "both profiles exported")
        self.assertEqual(bad_and_strings()[0], ["bad\ufffd.pb.gz"])

    def test_retry_info_sets_the_wait_and_is_needed_for_resource_exhausted(self):
        self.spool_heap()
        address, got = self.serve([(grpc.StatusCode.RESOURCE_EXHAUSTED, 0.5),
                                   grpc.StatusCode.RESOURCE_EXHAUSTED])
        p = self.start(sender_config(self.path("spool"), 'endpoint: "%s", '
                                     'retry_on_failure: {initial_interval: 10ms}' % address))
        p.wait_log(r"export to .* failed: backend says RESOURCE_EXHAUSTED")
        self.assertEqual(len(got), 2)   # retried once (RetryInfo), then not (no RetryInfo)
        self.assertGreaterEqual(got[1][2] - got[0][2], 0.5)

    def serve_one_refusal(self, status, headers):
        """An HTTP server answering the first POST with status and headers,
        every later one 200: (its port, the times the POSTs came)."""
        arrivals = []

        def answer(path, got_headers, body):
            arrivals.append(time.monotonic())
            return (status, headers) if len(arrivals) == 1 else (200, {})
        return self.serve_posts(answer), arrivals

    def test_http_retry_after(self):
        port, arrivals = self.serve_one_refusal(429, {"Retry-After": "1"})
        self.spool_heap()
        self.start(sender_config(self.path("spool"), 'endpoint: "127.0.0.1:%d", protocol: http, '
                                 'retry_on_failure: {initial_interval: 10ms}' % port))
        wait_until(lambda: len(arrivals) >= 2, "the retry")
        self.assertGreaterEqual(arrivals[1] - arrivals[0], 1.0)

    def test_a_wait_past_max_elapsed_time_ends_the_retries(self):
        """A server asking for an hour (Retry-After) when retries may go on
        for 2 s: the batch fails at once instead of holding the sender for
        the hour; the next file is sent."""
        port, arrivals = self.serve_one_refusal(429, {"Retry-After": "3600"})
        self.spool_heap()
        p = self.start(sender_config(self.path("spool"), 'endpoint: "127.0.0.1:%d", protocol: http, '
                                     'retry_on_failure: {initial_interval: 10ms, '
                                     'max_elapsed_time: 2s}' % port))
        p.wait_log(r"otlp: failed to export 1 record\(s\): the server asked to wait past "
                   r"max_elapsed_time")
        shutil.copyfile(os.path.join(GO_CORPUS, "allocs.pb.gz"), self.path("spool", "allocs.pb.gz"))
        wait_until(lambda: len(arrivals) >= 2, "the next file sent")
        self.assertLess(arrivals[1] - arrivals[0], 60)
        self.assertEqual(p.stop(), 0)

    def test_invalid_argument_is_not_retried(self):
        shutil.copytree(GO_CORPUS, self.path("spool"))
        address, got = self.serve([grpc.StatusCode.INVALID_ARGUMENT])
        config = sender_config(self.path("spool"), 'endpoint: "%s", '
                               'retry_on_failure: {initial_interval: 10ms}' % address)
        p = self.start(config.replace("after_ingest: keep", "after_ingest: keep, oneshot: true"))
        p.proc.wait(timeout=60)   # one-shot: exits once every file was exported or refused
        self.assertEqual(p.stop(), 0)
        self.assertNotIn("will retry", p.log_text())
        # one request per failure logged: none was sent again
        self.assertEqual(len(got), len(re.findall(r"backend says INVALID_ARGUMENT", p.log_text())))
        self.assertGreaterEqual(len(got), 1, p.log_text())
        # and a refusal did not keep the files after it from being sent
        self.assertEqual(sum(len(r.resource_profiles) for r, _, _ in got),
                         len(os.listdir(self.path("spool"))))

    def test_a_file_refused_for_good_is_tried_again_after_a_growing_wait(self):
        self.spool_heap()
        address, got = self.serve([grpc.StatusCode.INVALID_ARGUMENT])
        config = sender_config(self.path("spool"), 'endpoint: "%s"' % address)
        p = self.start(config.replace("after_ingest: keep", "after_ingest: keep, "
                                                            "poll_interval: 50ms")
                       .replace('address: ""', 'address: "127.0.0.1:0"'))
        p.wait_log(r"accepted .*heap.pb.gz; it stays, tried again in 1 s")
        p.wait_log(r"accepted .*heap.pb.gz; it stays, tried again in 2 s")
        # scanned every 50 ms, but sent twice: once, and once a second later
        self.assertEqual(len(got), 2, p.log_text())
        self.assertGreaterEqual(got[1][2] - got[0][2], 0.9)
        # remembered while it waits; forgotten once removed
        self.assertEqual(metric_value(p.metrics(), "profd_pprof_file_seen_files",
                                      component="pprof_file"), 1)
        os.unlink(self.path("spool", "heap.pb.gz"))
        wait_until(lambda: metric_value(p.metrics(), "profd_pprof_file_seen_files",
                                        component="pprof_file") == 0,
                   "the file removed while it waited to be forgotten")
        self.assertEqual(p.stop(), 0)

