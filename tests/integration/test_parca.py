# SPDX-License-Identifier: Apache-2.0
"""Parca's WriteRaw in and out: profd -> profd for every Go corpus profile,
Python grpcio (classes protoc generates from proto/parca and proto/profile.proto)
as the client Parca Agent would be and as the Parca server checking what the
exporter sends, and Parca's answers to what it refuses."""
import base64
import gzip
import json
import os
import shutil
import threading
import unittest

from harness import (GO_CORPUS, TENANT_RULES, Profd, ProfdTestCase, corpus_files,
                     exported_counts, h2c_post, http_post, metric_value, protoc_modules,
                     push_series, raw_pprof, wait_until)

WRITE_RAW = "/parca.profilestore.v1alpha1.ProfileStoreService/WriteRaw"

try:
    import grpc
except ImportError:
    grpc = None

_pb = None


def pb():
    """(profilestore_pb2, profile_pb2), generated once."""
    global _pb
    if _pb is None:
        _pb = (protoc_modules("parca", ["profilestore.proto"])[0],
               protoc_modules("", ["profile.proto"])[0])
    return _pb


RECEIVER = """
receivers:
  parca: {endpoint: "127.0.0.1:0"}
exporters:
  pprof_file: {directory: ./profiles, path_template: "{__file__}"}
service:
  telemetry: {metrics: {address: ""}}
  pipelines:
    profiles: {receivers: [parca], exporters: [pprof_file]}
"""

SENDER = """
receivers:
  pprof_file: {include: ["%s/*.pb.gz"], after_ingest: keep, source_label: __file__}
exporters:
  parca: {%s}
service:
  telemetry: {metrics: {address: ""}}
  pipelines:
    profiles: {receivers: [pprof_file], exporters: [parca]}
"""


def address(p):
    return p.listening("Parca WriteRaw (gRPC, and the gateway's JSON)")


def write_raw(addr, series, timeout=20, tenant="", org_id=None):
    """Sends a WriteRawRequest of [(labels dict, [raw profile bytes])],
    with tenant in its deprecated field and org_id as X-Scope-OrgID."""
    store, _ = pb()
    req = store.WriteRawRequest(tenant=tenant, series=[
        store.RawProfileSeries(
            labels=store.LabelSet(labels=[store.Label(name=k, value=v) for k, v in labels.items()]),
            samples=[store.RawSample(raw_profile=raw) for raw in raws])
        for labels, raws in series])
    with grpc.insecure_channel(addr) as ch:
        call = ch.unary_unary(WRITE_RAW, request_serializer=lambda m: m.SerializeToString(),
                              response_deserializer=lambda b: b)
        try:
            call(req, timeout=timeout,
                 metadata=[("x-scope-orgid", org_id)] if org_id is not None else None)
            return grpc.StatusCode.OK, ""
        except grpc.RpcError as e:
            return e.code(), e.details()


@unittest.skipIf(grpc is None, "python3-grpcio is not installed")
class ParcaTest(ProfdTestCase):

    def test_profd_to_profd_every_corpus_profile(self):
        receiver = self.start(RECEIVER)
        os.makedirs(self.path("spool"))
        for name in corpus_files():
            shutil.copyfile(os.path.join(GO_CORPUS, name), self.path("spool", name))
        os.makedirs(self.path("sender"))
        sender = Profd(self.path("sender"), SENDER % (self.path("spool"),
                                                      'endpoint: "%s"' % address(receiver)))
        self.procs.append(sender)
        outs = [self.path("profiles", n) for n in corpus_files()]
        wait_until(lambda: all(os.path.exists(o) for o in outs), "every profile through Parca")
        for name, out in zip(corpus_files(), outs):
            self.assertEqual(raw_pprof(out), raw_pprof(os.path.join(GO_CORPUS, name)), name)
        self.assertEqual(sender.stop(), 0)
        self.assertEqual(receiver.stop(), 0)

    def test_what_the_receiver_refuses(self):
        p = self.start(RECEIVER)
        addr = address(p)
        heap = open(os.path.join(GO_CORPUS, "heap.pb.gz"), "rb").read()
        code, details = write_raw(addr, [({"job": "x"}, [heap])])
        self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("missing __name__ label", details)
        code, details = write_raw(addr, [({"__name__": "memory", "bad-name": "x"}, [heap])])
        self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("invalid label name", details)
        self.assertIn("bad-name", details)
        code, details = write_raw(addr, [({"__name__": "memory"}, [b"not a profile"])])
        self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("raw_profile", details)
        bomb = gzip.compress(b"\x00" * (80 << 20))   # inflates past max_message_size (64 MiB)
        code, details = write_raw(addr, [({"__name__": "memory"}, [bomb])])
        self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("exceeds the limit", details)
        code, details = write_raw(addr, [({"__name__": "memory", "__file__": "ok.pb.gz"},
                                          [gzip.decompress(heap)])])
        self.assertEqual(code, grpc.StatusCode.OK, details)
        wait_until(lambda: os.path.exists(self.path("profiles", "ok.pb.gz")), "the good one")
        self.assertEqual(raw_pprof(self.path("profiles", "ok.pb.gz")),
                         raw_pprof(os.path.join(GO_CORPUS, "heap.pb.gz")))
        self.assertEqual(p.stop(), 0)

    def test_a_tenant_from_the_header_or_else_the_deprecated_field_is_kept(self):
        p = self.start(RECEIVER.replace('"{__file__}"', '"{__tenant_id__}/{__file__}"'))
        addr = address(p)
        heap = open(os.path.join(GO_CORPUS, "heap.pb.gz"), "rb").read()
        for name, tenant, org_id in (("field.pb.gz", "acme", None),
                                     ("header.pb.gz", "acme", "team-b")):
            code, details = write_raw(addr, [({"__name__": "memory", "__file__": name}, [heap])],
                                      tenant=tenant, org_id=org_id)
            self.assertEqual(code, grpc.StatusCode.OK, details)
        wait_until(lambda: os.path.exists(self.path("profiles", "acme", "field.pb.gz")),
                   "the field's tenant on its profile")
        wait_until(lambda: os.path.exists(self.path("profiles", "team-b", "header.pb.gz")),
                   "the header's tenant, before the field's")
        for tenant, says in (("..", "tenant ID is '.' or '..'"), ("a b", "unsupported byte 0x20"),
                             ("a/b", "unsupported character '/'"),
                             ("a\x00b", "unsupported byte 0x00")):
            code, details = write_raw(addr, [({"__name__": "memory"}, [heap])], tenant=tenant)
            self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT, tenant)
            self.assertIn("tenant: ", details)
            self.assertIn(says, details)
        self.assertEqual(sorted(os.listdir(self.path("profiles"))), ["acme", "team-b"])
        self.assertEqual(p.stop(), 0)

    def test_http_gateway_json_normalized_and_basic_auth(self):
        store, profile_pb2 = pb()
        from google.protobuf import json_format
        p = self.start(RECEIVER.replace('endpoint: "127.0.0.1:0"',
                                        'endpoint: "127.0.0.1:0", '
                                        'basic_auth: {username: agent, password: pw}'))
        h2 = gw = address(p)   # gRPC, and the gateway over HTTP/2 and HTTP/1.1: one port
        # a normalized request: every mapped address made relative to its object
        # file the way Parca Agent does (address - start + offset)
        original = os.path.join(GO_CORPUS, "cpu.pb.gz")
        prof = profile_pb2.Profile.FromString(gzip.decompress(open(original, "rb").read()))
        starts = {m.id: (m.memory_start, m.file_offset) for m in prof.mapping}
        moved = 0
        for loc in prof.location:
            start, offset = starts.get(loc.mapping_id, (0, 0))
            if start:
                loc.address = loc.address - start + offset
                moved += 1
        self.assertGreater(moved, 0)

        def request(name, raw, normalized):
            return json_format.MessageToJson(store.WriteRawRequest(normalized=normalized, series=[
                store.RawProfileSeries(labels=store.LabelSet(labels=[
                    store.Label(name="__name__", value="process_cpu"),
                    store.Label(name="__file__", value=name)]),
                    samples=[store.RawSample(raw_profile=raw)])])).encode()

        auth = {"Authorization": "Basic " + base64.b64encode(b"agent:pw").decode(),
                "Content-Type": "application/json"}
        url = "http://%s/profiles/writeraw"
        status, body = http_post(url % gw, request("n.pb.gz", prof.SerializeToString(), True),
                                 auth)
        self.assertEqual((status, body), (200, b"{}"))
        status, body = h2c_post(url % h2, request("h2.pb.gz", open(original, "rb").read(),
                                                  False), auth)
        self.assertEqual((status, body), (200, b"{}"))
        for name in ("n.pb.gz", "h2.pb.gz"):
            wait_until(lambda: os.path.exists(self.path("profiles", name)), name)
            self.assertEqual(raw_pprof(self.path("profiles", name)), raw_pprof(original), name)
        status, body = http_post(url % gw, request("x", b"", False),
                                 {"Content-Type": "application/json"})
        self.assertEqual(status, 401)
        self.assertEqual(json.loads(body)["code"], 16)
        status, body = http_post(url % gw, b'{"series": [', auth)
        self.assertEqual(status, 400)
        self.assertEqual(json.loads(body)["code"], 3)
        self.assertIn("line 1", json.loads(body)["message"])
        code, _ = write_raw(h2, [({"__name__": "memory"}, [b"x"])])   # gRPC needs it too
        self.assertEqual(code, grpc.StatusCode.UNAUTHENTICATED)
        self.assertEqual(p.stop(), 0)

    def test_exporter_sends_what_parca_checks(self):
        store, profile_pb2 = pb()
        got, lock = [], threading.Lock()

        def write(request, context):
            with lock:
                got.append((store.WriteRawRequest.FromString(request),
                            dict(context.invocation_metadata())))
            return b""

        address = self.serve_grpc("parca.profilestore.v1alpha1.ProfileStoreService", "WriteRaw",
                                  write)
        shutil.copytree(GO_CORPUS, self.path("spool"))
        with open(self.path("token"), "w") as f:
            f.write("t0k\n")
        self.start(SENDER % (self.path("spool"), 'endpoint: "%s", bearer_token_file: %s, '
                             'headers: {projectid: p1}' % (address, self.path("token"))))

        def series():
            with lock:
                return [s for r, _ in got for s in r.series]
        wait_until(lambda: len(series()) >= len(corpus_files()), "every profile sent")
        self.assertEqual(got[0][1].get("authorization"), "Bearer t0k")
        self.assertEqual(got[0][1].get("projectid"), "p1")
        for s in series():
            labels = {l.name: l.value for l in s.labels.labels}
            self.assertIn("__name__", labels)
            self.assertEqual(len(s.samples), 1)
            raw = s.samples[0].raw_profile
            self.assertEqual(raw[:2], b"\x1f\x8b")
            prof = profile_pb2.Profile.FromString(gzip.decompress(raw))
            self.assertEqual(prof.string_table[0], "")
            for table in (prof.mapping, prof.location, prof.function):
                self.assertEqual([e.id for e in table], list(range(1, len(table) + 1)))

    def write_raw_server(self, answers):
        """A grpcio WriteRaw server answering with answers in turn (the last
        repeating): (its address, the f labels of each request's series)."""
        store, _ = pb()
        got = []

        def write(request, context):
            req = store.WriteRawRequest.FromString(request)
            got.append([l.value for s in req.series for l in s.labels.labels if l.name == "f"])
            answer = answers.pop(0) if len(answers) > 1 else answers[0]
            if answer != grpc.StatusCode.OK:
                context.abort(answer, "no")
            return b""
        return self.serve_grpc("parca.profilestore.v1alpha1.ProfileStoreService", "WriteRaw",
                               write), got

    def test_a_retry_sends_only_the_requests_not_taken(self):
        """A batch split into a request per record (max_message_size): after
        the second is refused UNAVAILABLE, the retry starts at it; the first
        is not sent twice."""
        address, got = self.write_raw_server([grpc.StatusCode.OK, grpc.StatusCode.UNAVAILABLE,
                                              grpc.StatusCode.OK])
        self.push_three_until_retried(
            'parca: {endpoint: "%s", max_message_size: 1, '
            'retry_on_failure: {initial_interval: 10ms}}' % address, got)
        self.assertEqual(got, [["a"], ["b"], ["b"], ["c"]])

    def test_a_request_refused_for_good_does_not_stop_the_next(self):
        """The second of three requests refused INVALID_ARGUMENT: the third
        still goes, none twice; two records sent, one failed."""
        address, got = self.write_raw_server([grpc.StatusCode.OK,
                                              grpc.StatusCode.INVALID_ARGUMENT,
                                              grpc.StatusCode.OK])
        self.push_three_until_counted(
            'parca: {endpoint: "%s", max_message_size: 1}' % address, [2, 1])
        self.assertEqual(got, [["a"], ["b"], ["c"]])

    def tenants_sent(self, exporter_options, counts):
        """Pushes six series as one batch (f=t:team-a, none, t:team-b,
        t:bad/one, t:team-a2, t:team-a), relabeled by TENANT_RULES, into a
        parca exporter with exporter_options until it counts [sent, failed]
        records as counts: [(a request's tenant field, the f of its
        series)], in the order sent."""
        store, _ = pb()
        got = []
        address = self.serve_grpc("parca.profilestore.v1alpha1.ProfileStoreService", "WriteRaw",
                                  lambda request, context: got.append(
                                      store.WriteRawRequest.FromString(request)) or b"")
        p, ingest = self.start_pushes_into('parca: {endpoint: "%s"%s}' % (address,
                                                                        exporter_options),
                                           relabel=TENANT_RULES)
        push_series(ingest, "f", ["t:team-a", "none", "t:team-b", "t:bad/one", "t:team-a2",
                                  "t:team-a"])
        wait_until(lambda: [n or 0 for n in exported_counts(p, "parca")] == counts,
                   "[sent, failed] records to be %s" % counts)
        self.assertEqual(p.stop(), 0)
        return [(r.tenant, [l.value for s in r.series for l in s.labels.labels if l.name == "f"])
                for r in got]

    def test_each_records_tenant_goes_in_its_requests_tenant_field(self):
        """With no tenant of its own, a record's __tenant_id__ goes as the
        request's tenant, one request a tenant in the order their first
        records come; a record whose tenant is no tenant ID is left out,
        said and counted failed."""
        self.assertEqual(self.tenants_sent("", [5, 1]),
                         [("team-a", ["t:team-a", "t:team-a"]), ("", ["none"]),
                          ("team-b", ["t:team-b"]), ("team-a2", ["t:team-a2"])])
        self.procs[-1].wait_log("left out tenant ID contains unsupported character")

    def test_a_tenant_of_its_own_goes_for_every_record(self):
        self.assertEqual(self.tenants_sent(", tenant: fixed", [6, 0]),
                         [("fixed", ["t:team-a", "none", "t:team-b", "t:bad/one", "t:team-a2",
                                     "t:team-a"])])

    def test_exporter_makes_labels_what_parca_takes(self):
        store, _ = pb()
        got = []
        address = self.serve_grpc("parca.profilestore.v1alpha1.ProfileStoreService", "WriteRaw",
                                  lambda request, context: got.append(
                                      store.WriteRawRequest.FromString(request)) or b"")
        # the label k.v, and a value that is not UTF-8: Parca refuses the
        # whole request for either; __delta__ and __tenant_id__ are
        # Grafana's stores', left out
        p, _ = self.start_pushes_into('parca: {endpoint: "%s"}' % address,
                                      '{k.v: x, __delta__: "false", __tenant_id__: t}')
        wait_until(lambda: got, "a WriteRaw")
        labels = {l.name: l.value for l in got[0].series[0].labels.labels}
        self.assertEqual((labels.get("k_v"), labels.get("bad")), ("x", "bad\ufffd.pb.gz"))
        self.assertEqual(labels.get("__name__"), "memory")
        self.assertNotIn("__delta__", labels)
        self.assertNotIn("__tenant_id__", labels)
        self.assertEqual(metric_value(p.metrics(), "profd_parca_label_fixes",
                                      component="parca"), 2)

