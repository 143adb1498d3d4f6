# SPDX-License-Identifier: Apache-2.0
"""Runs the real profd binary for integration tests.

Every test gets a temporary working directory. profd's log lines are read
on a thread; tests wait for the events they expect (a log line, a file), with
a deadline, never for a fixed time.
"""
import importlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
PROFD = os.path.join(BUILD, "profd")
CORPUS = os.environ.get("PROFD_CORPUS", os.path.join(os.path.dirname(ROOT), "shared", "corpus"))
GO_CORPUS = os.path.join(CORPUS, "go")
DEADLINE = float(os.environ.get("PROFD_TEST_DEADLINE", "20"))


def corpus_files():
    return sorted(f for f in os.listdir(GO_CORPUS) if f.endswith(".pb.gz"))


def wait_until(predicate, what, deadline=DEADLINE):
    """Re-checks predicate as things change on disk; fails after deadline."""
    end = time.monotonic() + deadline
    delay = 0.005
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


LSAN_TRACER_CRASH = "LeakSanitizer has encountered a fatal error"


def run_command(cmd, **kw):
    """subprocess.run(cmd, **kw), once more when a sanitized build's
    LeakSanitizer crashed in its own stop-the-world tracer at exit (a known
    intermittent fault of the tool, not a leak: it reports nothing, and
    it comes back under load): the second time without the leak check,
    which could not look the first time either, so that the exit status
    is the program's."""
    r = subprocess.run(cmd, **kw)
    err = r.stderr.decode(errors="replace") if isinstance(r.stderr, bytes) else r.stderr or ""
    if r.returncode and LSAN_TRACER_CRASH in err and "Tracer caught signal" in err:
        if "input" not in kw and kw.get("stdin") not in (None, subprocess.DEVNULL):
            return r   # a stream already consumed cannot be given again
        env = dict(kw.pop("env", None) or os.environ)
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
        r = subprocess.run(cmd, env=env, **kw)
    return r


def raw_pprof(path):
    """`go tool pprof -raw` of path, as profd wrote it: -symbolize=none, or
    pprof would symbolize from local binaries by itself."""
    return subprocess.run(["go", "tool", "pprof", "-raw", "-symbolize=none", path],
                          capture_output=True, text=True, timeout=120).stdout


_protoc_out = None
_protoc_done = set()


def protoc_modules(directory, names):
    """The Python modules protoc makes of proto files `names` in proto/
    `directory` (which is their import root), generated once into this
    run's temporary directory and imported: one per name, in order."""
    global _protoc_out
    if _protoc_out is None:
        _protoc_out = tempfile.mkdtemp(prefix="profd-protoc-")
        sys.path.insert(0, _protoc_out)
    src = os.path.join(ROOT, "proto", directory)
    todo = [n for n in names if (directory, n) not in _protoc_done]
    if todo:
        subprocess.run(["protoc", "--proto_path=" + src, "--python_out=" + _protoc_out] +
                       [os.path.join(src, n) for n in todo], check=True)
        _protoc_done.update((directory, n) for n in todo)
    return [importlib.import_module(n[:-len(".proto")] + "_pb2") for n in names]


def http_post(url, body, headers=None):
    """POSTs body over HTTP/1.1 (urllib): (status, response body)."""
    req = urllib.request.Request(url, data=body, method="POST", headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=DEADLINE) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


# Relabel rules that give a record the tenant its f label names after "t:".
TENANT_RULES = "[{source_labels: [f], regex: 't:(.*)', target_label: __tenant_id__}]"


def push_series(address, label, values, headers=None):
    """One push.v1 request (Connect, proto) to the Pyroscope receiver at
    address, with headers besides its Content-Type: a series per value,
    labelled __name__=memory and label=value, each the Go corpus heap
    profile; so one batch of as many records, in order. Asserts it was
    taken."""
    push_pb2 = protoc_modules("pyroscope", ["push.proto"])[0]
    heap = open(os.path.join(GO_CORPUS, "heap.pb.gz"), "rb").read()
    req = push_pb2.PushRequest(series=[push_pb2.RawProfileSeries(
        labels=[push_pb2.LabelPair(name="__name__", value="memory"),
                push_pb2.LabelPair(name=label, value=v)],
        samples=[push_pb2.RawSample(raw_profile=heap)]) for v in values])
    status, body = http_post("http://%s/push.v1.PusherService/Push" % address,
                             req.SerializeToString(),
                             dict(headers or {}, **{"Content-Type": "application/proto"}))
    assert status == 200, (status, body)


def h2c_post(url, body, headers=None):
    """POSTs body over HTTP/2 with prior knowledge (curl, the real client):
    (status, response body)."""
    cmd = ["curl", "-sS", "--http2-prior-knowledge", "--max-time", str(int(DEADLINE)),
           "--data-binary", "@-", "-o", "-", "-w", "\n%{http_code} %{http_version}", url]
    for k, v in (headers or {}).items():
        cmd += ["-H", "%s: %s" % (k, v)]
    r = subprocess.run(cmd, input=body, capture_output=True, check=True)
    out, _, status = r.stdout.rpartition(b"\n")
    code, version = status.decode().split()
    assert version == "2", "curl spoke HTTP/%s, not HTTP/2" % version
    return int(code), out


def make_test_certs(directory):
    """A private CA and a server certificate for 127.0.0.1 signed by it:
    returns the paths (ca.pem, srv.pem, srv.key)."""
    ca_key, ca = os.path.join(directory, "ca.key"), os.path.join(directory, "ca.pem")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca,
            "-days", "1", "-subj", "/CN=profd test CA")
    cert, key = sign_test_cert(directory, "srv", "127.0.0.1", "subjectAltName=IP:127.0.0.1")
    return ca, cert, key


def make_client_cert(directory):
    """A client certificate signed by the CA make_test_certs made in
    directory: returns the paths (client.pem, client.key)."""
    return sign_test_cert(directory, "client", "profd", "extendedKeyUsage=clientAuth")


def openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, capture_output=True)


def sign_test_cert(directory, name, common_name, extension):
    """A key and a certificate for common_name with extension, signed by
    directory's ca.pem: returns the paths (<name>.pem, <name>.key)."""
    key, csr, cert, ext = (os.path.join(directory, name + e) for e in
                           (".key", ".csr", ".pem", ".cnf"))
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr,
            "-subj", "/CN=" + common_name)
    with open(ext, "w") as f:
        f.write(extension + "\n")
    openssl("x509", "-req", "-in", csr, "-CA", os.path.join(directory, "ca.pem"),
            "-CAkey", os.path.join(directory, "ca.key"), "-CAcreateserial", "-out", cert,
            "-days", "1", "-extfile", ext)
    return cert, key


def serve_tls(server, cert, key, client_ca=None, sni=None, versions=None):
    """Makes server (a socketserver) speak TLS with cert and key; with
    client_ca, only to clients whose certificate that CA signed; with
    versions, a (minimum, maximum) pair of ssl.TLSVersion names such as
    "TLSv1_3", only those. The name each client's handshake asks for (SNI)
    is appended to the list sni."""
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    if versions:
        ctx.minimum_version, ctx.maximum_version = (getattr(ssl.TLSVersion, v) for v in versions)
    if sni is not None:
        ctx.sni_callback = lambda sock, name, context: sni.append(name)
    if client_ca:
        ctx.load_verify_locations(client_ca)
        ctx.verify_mode = ssl.CERT_REQUIRED
    server.socket = ctx.wrap_socket(server.socket, server_side=True)


FORWARD_PROXY = """worker_processes 1;
error_log %(dir)s/error.log warn;
pid %(dir)s/nginx.pid;
events { worker_connections 256; }
http {
    access_log %(dir)s/access.log;
    proxy_temp_path %(dir)s/proxy_temp;
    client_body_temp_path %(dir)s/body_temp;
    server {
        listen 127.0.0.1:%(port)d;
        location / {
            proxy_pass http://$http_host;
            proxy_http_version 1.1;
            proxy_buffering off;
            proxy_read_timeout 300s;
            proxy_set_header Via "1.1 nginx";
        }
    }
}
"""


def serve_on_free_port(start, attempts=5):
    """Starts a server that binds the port it is given: start(port) returns
    its Popen (stderr a text or bytes pipe). The port is one the kernel had
    free a moment before; when another process took it meanwhile the
    server exits, and it is started again on another (up to attempts
    times, then the last one's stderr is the error). Returns (process,
    port) once it accepts connections."""
    why = ""
    for _ in range(attempts):
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        probe.close()
        proc = start(port)

        def up():
            if proc.poll() is not None:
                return True
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return True
            except OSError:
                return False
        wait_until(up, "a server accepting on port %d" % port)
        if proc.poll() is None:
            return proc, port
        why = proc.stderr.read()
        why = why.decode() if isinstance(why, bytes) else why
    raise AssertionError("the server did not start: " + why)


class LoopbackProxy:
    """A proxy process listening on a loopback port: `url` is its
    address, `proc` its Popen (stderr a pipe); stop() ends it."""

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.proc.stderr.close()


class ForwardProxy(LoopbackProxy):
    """nginx as a plain HTTP forward proxy on a free loopback port, in
    directory: a request in the absolute form clients send a proxy goes on
    to the host it names with "Via: 1.1 nginx" added, the response
    streamed as it comes (a Kubernetes watch). `url` is its address."""

    def __init__(self, directory):
        os.makedirs(directory, exist_ok=True)
        conf = os.path.join(directory, "nginx.conf")

        def start(port):
            with open(conf, "w") as f:
                f.write(FORWARD_PROXY % {"dir": directory, "port": port})
            return subprocess.Popen(["nginx", "-c", conf, "-p", directory, "-g", "daemon off;"],
                                    stderr=subprocess.PIPE)
        self.proc, port = serve_on_free_port(start)
        self.url = "http://127.0.0.1:%d" % port


TUNNEL_PROXY = """Port %(port)d
Listen 127.0.0.1
Timeout 60
MaxClients 64
BasicAuth %(user)s %(password)s
LogFile "%(log)s"
LogLevel Connect
"""


class TunnelProxy(LoopbackProxy):
    """tinyproxy on a free loopback port, in directory, asking every
    request for basic auth as user with password: a CONNECT without the
    Proxy-Authorization they make is answered 407. `url` is its
    address; connects() the host:port of each CONNECT it logged."""

    def __init__(self, directory, user, password):
        os.makedirs(directory, exist_ok=True)
        conf = os.path.join(directory, "tinyproxy.conf")
        self.log = os.path.join(directory, "tinyproxy.log")

        def start(port):
            with open(conf, "w") as f:
                f.write(TUNNEL_PROXY % {"port": port, "user": user, "password": password,
                                        "log": self.log})
            return subprocess.Popen(["tinyproxy", "-d", "-c", conf], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE)
        self.proc, port = serve_on_free_port(start)
        self.url = "http://127.0.0.1:%d" % port

    def connects(self):
        with open(self.log) as f:
            return re.findall(r"Request \(file descriptor \d+\): CONNECT (\S+)", f.read())


def valgrind(log):
    """The command prefix running profd under valgrind's leak check, its
    report written to log (for Profd's wrapper). profd's allocator is
    jemalloc, linked into the executable, whose malloc and free valgrind is
    told to replace there as it does glibc's (else it would see none of the
    heap); jemalloc, which then serves nothing, is told not to start its
    background thread, which it never joins."""
    return ["env", "MALLOC_CONF=background_thread:false",
            "valgrind", "--soname-synonyms=somalloc=NONE", "--leak-check=full",
            "--errors-for-leak-kinds=definite,indirect,possible",
            "--error-exitcode=99", "--log-file=" + log]


def run(args, **kw):
    """Runs profd with args to completion; returns CompletedProcess."""
    return run_command([PROFD] + args, capture_output=True, text=True, timeout=120, **kw)


class Profd:
    """One profd process with its log lines collected as they arrive."""

    def __init__(self, workdir, config_text=None, args=(), log_level="debug", wrapper=()):
        self.workdir = workdir
        cmd = list(wrapper) + [PROFD, "--log-level", log_level]
        if config_text is not None:
            self.config = os.path.join(workdir, "profd.yaml")
            with open(self.config, "w") as f:
                f.write(config_text)
            cmd += ["--config", self.config]
        cmd += list(args)
        self.lines = []
        self.cond = threading.Condition()
        self.proc = subprocess.Popen(cmd, cwd=workdir, stderr=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stderr:
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.lines.append(None)   # end of output
            self.cond.notify_all()

    def listening(self, what):
        """The address a server logged as "<what> on <address>" (what is
        matched literally)."""
        line = self.wait_log(re.escape(what) + " on ")[0]
        return line.split(what + " on ")[1].split()[0]

    def wait_log(self, pattern, count=1, deadline=DEADLINE, start=0):
        """Waits until `count` log lines from index `start` match pattern."""
        rx = re.compile(pattern)
        end = time.monotonic() + deadline
        with self.cond:
            while True:
                hits = [l for l in self.lines[start:] if l is not None and rx.search(l)]
                if len(hits) >= count:
                    return hits
                if None in self.lines:
                    raise AssertionError("profd exited before logging %r; log:\n%s" %
                                         (pattern, self.log_text()))
                left = end - time.monotonic()
                if left <= 0:
                    raise AssertionError("timed out waiting for %d x %r; log:\n%s" %
                                         (count, pattern, self.log_text()))
                self.cond.wait(left)

    def mark(self):
        with self.cond:
            return len(self.lines)

    def log_text(self):
        return "\n".join(l for l in self.lines if l is not None)

    def telemetry_url(self):
        line = self.wait_log(r"serving /metrics, /healthz and /status on ")[0]
        return "http://" + line.rsplit(" ", 1)[1]

    def metrics(self):
        with urllib.request.urlopen(self.telemetry_url() + "/metrics", timeout=10) as r:
            return r.read().decode()

    def send(self, sig):
        self.proc.send_signal(sig)

    def stop(self, sig=signal.SIGTERM, timeout=60):
        """Stops profd; its exit status. A sanitized build whose only fault
        was LeakSanitizer's own tracer crashing at exit (see run_command;
        it found no leak, it could not look) counts as a clean exit."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        rc = self.proc.wait(timeout=timeout)
        self.reader.join(timeout=10)
        log = self.log_text()
        if (rc and LSAN_TRACER_CRASH in log and "Tracer caught signal" in log and
                "ERROR: AddressSanitizer" not in log and "runtime error" not in log):
            return 0
        return rc


def metric_value(text, name, **labels):
    """The value of one sample in Prometheus text, or None."""
    want = ",".join('%s="%s"' % kv for kv in sorted(labels.items(), key=lambda kv: kv[0]))
    for line in text.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        series, value = line.rsplit(" ", 1)
        got = series[len(name):]
        if got.startswith("{"):
            got = ",".join(sorted(got.strip("{}").split(",")))
        if got == want:
            return float(value)
    return None


def exported_counts(p, exporter):
    """[sent, failed] records of the exporter with id exporter, as the
    /metrics of profd p count them (None where not counted yet)."""
    m = p.metrics()
    return [metric_value(m, "profd_component_%s_records_total" % what, kind="exporter",
                         id=exporter) for what in ("sent", "failed")]


class ProfdTestCase(unittest.TestCase):
    """A temporary working directory per test; profd processes stopped after."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="profd-it-")
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            if p.proc.poll() is None:
                p.proc.kill()
                p.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def assert_config_refused(self, config_text, says):
        """`profd validate` refuses config_text (written to bad.yaml),
        exiting 2 with an error that holds says."""
        with open(self.path("bad.yaml"), "w") as f:
            f.write(config_text)
        r = run(["validate", "--config", self.path("bad.yaml")])
        self.assertEqual(r.returncode, 2, "%s\n%s" % (says, r.stderr))
        self.assertIn(says, r.stderr)

    def start(self, config_text=None, **kw):
        p = Profd(self.dir, config_text, **kw)
        self.procs.append(p)
        return p

    def spool(self, name, data=None, src=None, spool_dir="spool"):
        """Drops a file into the spool the way writers should: write, then rename."""
        os.makedirs(self.path(spool_dir), exist_ok=True)
        tmp = self.path(spool_dir, "." + name + ".tmp")
        if src:
            shutil.copyfile(src, tmp)
        else:
            with open(tmp, "wb") as f:
                f.write(data)
        os.rename(tmp, self.path(spool_dir, name))

    def serve_grpc(self, service, method, fn):
        """A grpcio server on a free loopback port answering service/method
        with fn(request bytes, context) -> response bytes; its address.
        Stopped after the test."""
        import concurrent.futures
        import grpc
        handler = grpc.method_handlers_generic_handler(service, {
            method: grpc.unary_unary_rpc_method_handler(
                fn, request_deserializer=lambda b: b, response_serializer=lambda b: b)})
        server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=2))
        server.add_generic_rpc_handlers((handler,))
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        self.addCleanup(server.stop, None)
        return "127.0.0.1:%d" % port

    def serve_http(self, handler_class, tls=None):
        """An HTTP server on a free loopback port with handler_class (a
        BaseHTTPRequestHandler), HTTPS with tls, a (cert, key) pair; its
        port. Stopped after the test."""
        import http.server
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler_class)
        if tls:
            serve_tls(server, *tls)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.shutdown)
        return server.server_address[1]

    def token_endpoint(self, answers, hold=None, tls=None):
        """An OAuth 2.0 token endpoint answering answers in turn (status,
        JSON), the last repeating: (its URL, the (Authorization, form) of
        each request). With hold (a threading.Event) each answer waits
        until it is set, the request already counted; with tls (a cert
        and key) over HTTPS."""
        import http.server
        import urllib.parse
        got = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                form = urllib.parse.parse_qs(
                    self.rfile.read(int(self.headers["Content-Length"])).decode())
                got.append((self.headers.get("Authorization"), form))
                if hold:
                    hold.wait()
                status, answer = answers.pop(0) if len(answers) > 1 else answers[0]
                body = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass
        return "%s://127.0.0.1:%d/token" % ("https" if tls else "http",
                                            self.serve_http(Handler, tls)), got

    def serve_posts(self, answer):
        """An HTTP server on a free loopback port calling answer(path,
        headers, body) for each POST, which returns (status, {header:
        value}); an empty body is sent with them. Its port."""
        import http.server

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                status, headers = answer(self.path, self.headers, body)
                self.send_response(status)
                for name, value in dict(headers, **{"Content-Length": "0"}).items():
                    self.send_header(name, value)
                self.end_headers()

            def log_message(self, *args):
                pass
        return self.serve_http(Handler)

    def push_three_until_retried(self, exporter, got):
        """Pushes the series f=a, f=b, f=c as one batch (push_series) into
        exporter (YAML, as start_pushes_into takes it) and stops profd once
        got, what the backend was sent, holds four: the three and a retry."""
        p, ingest = self.start_pushes_into(exporter)
        push_series(ingest, "f", ["a", "b", "c"])
        wait_until(lambda: len(got) >= 4, "three parts and a retry")
        self.assertEqual(p.stop(), 0)

    def push_three_until_counted(self, exporter, sent_failed):
        """Pushes the series f=a, f=b, f=c as one batch (push_series) into
        exporter (YAML, as start_pushes_into takes it) and stops profd once
        its /metrics count sent_failed, [sent, failed] records."""
        p, ingest = self.start_pushes_into(exporter)
        push_series(ingest, "f", ["a", "b", "c"])
        wait_until(lambda: exported_counts(p, exporter.split(":")[0]) == sent_failed,
                   "[sent, failed] records to be %s" % sent_failed)
        self.assertEqual(p.stop(), 0)

    def start_pushes_into(self, exporter, file_labels=None, relabel=None, **kw):
        """Starts profd taking pushes (a pyroscope receiver) into the one
        exporter given as YAML ("otlp: {...}"), with /metrics on a free
        port: (the Profd, the receiver's host:port). With relabel (YAML
        rules), a relabel processor applies them on the way. With file_labels (a
        YAML mapping), a pprof_file receiver feeds the exporter too, with
        those labels, from a spool holding the Go corpus's heap profile
        under a name with a byte that is not UTF-8 (ff), which becomes the
        label bad: labels no push may carry. kw go to start."""
        files = ""
        if file_labels is not None:
            os.makedirs(self.path("spool"))
            shutil.copyfile(os.path.join(GO_CORPUS, "heap.pb.gz"),
                            os.path.join(self.path("spool").encode(), b"bad\xff.pb.gz"))
            files = "\n  pprof_file: {include: [spool/*], source_label: bad, labels: %s}" % (
                file_labels)
        processors = "processors: {relabel: {rules: %s}}" % relabel if relabel else ""
        p = self.start("""
receivers:
  pyroscope: {endpoint: "127.0.0.1:0"}%s
%s
exporters:
  %s
service:
  telemetry: {metrics: {address: "127.0.0.1:0"}}
  pipelines:
    profiles: {receivers: [pyroscope%s], processors: [%s], exporters: [%s]}
""" % (files, processors, exporter, files and ", pprof_file", "relabel" if relabel else "",
       exporter.split(":")[0]), **kw)
        return p, p.listening("Pyroscope ingest and push.v1 (HTTP/1.1, HTTP/2, gRPC)")

    def spool_heap(self):
        """Makes ./spool holding the Go corpus's heap profile; its path."""
        os.makedirs(self.path("spool"))
        shutil.copyfile(os.path.join(GO_CORPUS, "heap.pb.gz"), self.path("spool", "heap.pb.gz"))
        return self.path("spool")

    def outputs(self, root="profiles"):
        found = []
        for d, _, files in os.walk(self.path(root)):
            found += [os.path.join(d, f) for f in files if not f.startswith(".")]
        return sorted(found)


class Target:
    """The Go scrape target (tests/integration/target), on a free loopback port."""

    def __init__(self):
        binary = os.path.join(BUILD, "tests", "target")
        self.proc = subprocess.Popen([binary, "-addr", "127.0.0.1:0"], stdout=subprocess.PIPE,
                                     text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            self.stop()
            raise AssertionError("target did not start: %r" % line)
        self.address = line.split()[-1]
        self.url = "http://" + self.address

    def fetch(self, path, timeout=30):
        with urllib.request.urlopen(self.url + path, timeout=timeout) as r:
            return r.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()


class FakeTarget:
    """A loopback HTTP server whose answers each test sets per path: a list
    of (status, body[, delay_seconds[, headers]]) served in order, the last
    repeating."""

    def __init__(self, tls=None, tls_versions=None):
        """tls: (certfile, keyfile) to serve HTTPS, or None for HTTP; then
        tls_versions as serve_tls takes them. The names clients ask for
        (SNI) are in self.sni."""
        import http.server
        routes = self.routes = {}
        hits = self.hits = {}
        requests = self.requests = []   # (path with query, HTTPMessage headers) of each request
        lock = self.lock = threading.Lock()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                path = self.path.split("?")[0]
                with lock:
                    answers = routes.get(path, [(404, b"no such path\n")])
                    answer = answers.pop(0) if len(answers) > 1 else answers[0]
                    hits[path] = hits.get(path, 0) + 1
                    requests.append((self.path, self.headers))
                if len(answer) > 2:
                    time.sleep(answer[2])   # a slow target, as the test asked for
                try:
                    self.send_response(answer[0])
                    for name, value in (answer[3] if len(answer) > 3 else {}).items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(answer[1])))
                    self.end_headers()
                    self.wfile.write(answer[1])
                except OSError:
                    pass   # the client gave up first

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.sni = []
        if tls:
            serve_tls(self.server, *tls, sni=self.sni, versions=tls_versions)
        self.address = "127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def set(self, path, *answers):
        with self.lock:
            self.routes[path] = list(answers)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def pprof_samples(path):
    """Reads a profile with `go tool pprof -raw`: (column names, {stack and
    labels: summed values}). Stacks are named by function, file and line, so
    profiles with different ids compare by meaning."""
    out = subprocess.run(["go", "tool", "pprof", "-raw", path], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    locs, loc, section, samples, columns = {}, None, None, [], []
    for line in lines:
        if line in ("Samples:", "Locations", "Mappings"):
            section = line
            continue
        if section == "Samples:":
            if not columns:
                columns = [c.replace("[dflt]", "") for c in line.split()]
            elif re.match(r"^ *-?\d+(\s+-?\d+)*: ", line):
                values, ids = line.split(":", 1)
                samples.append([[int(v) for v in values.split()], ids.split(), []])
            elif line.strip():
                samples[-1][2].append(line.strip())
        elif section == "Locations":
            m = re.match(r"^ *(\d+): (0x[0-9a-f]+) (?:M=\d+ )?(.*)$", line)
            if m:
                loc = m.group(1)
                locs[loc] = [m.group(2), m.group(3)]
            elif line.strip():
                locs[loc].append(line.strip())
    result = {}
    for values, ids, labels in samples:
        key = (tuple(tuple(locs[i]) for i in ids), tuple(sorted(labels)))
        old = result.get(key, [0] * len(values))
        result[key] = [a + b for a, b in zip(old, values)]
    return columns, result


def subtract(newer, older, cumulative):
    """newer - older in the cumulative columns, zero samples removed: the
    delta computed independently of profd."""
    out = {}
    for key, values in newer.items():
        base = older.get(key, [0] * len(values))
        delta = [v - b if c else v for v, b, c in zip(values, base, cumulative)]
        if any(delta):
            out[key] = delta
    return out


def label_selected(selector, labels):
    """Whether labels match a Kubernetes label selector of the equality
    kind the tests send: "k=v", "k==v", "k!=v" and "k" (exists), joined by
    commas, as the API reads them."""
    for term in filter(None, (selector or "").split(",")):
        if "!=" in term:
            k, v = term.split("!=", 1)
            if labels.get(k) == v:
                return False
        elif "=" in term:
            k, v = term.replace("==", "=").split("=", 1)
            if labels.get(k) != v:
                return False
        elif term not in labels:
            return False
    return True


class KubernetesApi:
    """A Python HTTP server on a free loopback port playing the Kubernetes
    API for pods and nodes: GET /api/v1/pods and /api/v1/namespaces/<ns>/pods answer
    a PodList (kind, apiVersion, metadata.resourceVersion, items) of the
    pods in `pods` in that namespace, filtered by labelSelector and the
    fieldSelector spec.nodeName=, as the API documents; with watch=1 they
    stream, a JSON line each, the ADDED, MODIFIED and DELETED events since
    resourceVersion that add(), modify() and remove() make (a version
    older than expire() left is an ERROR event of code 410, as the API
    answers one compacted away), and end after timeoutSeconds or
    `watch_seconds`, whichever is less. Without "Authorization: Bearer
    <token>" the answer is 401, as the API refuses a credential it does
    not take (with token None, TLS's client certificate is the one), and
    with `fail` set to a status that status, each with a Status object. `got` holds each request's (path,
    query as parse_qs gives it, Authorization), `headers` its headers (an
    email.message.Message). With tls (cert, key, client CA) it speaks
    HTTPS, to clients with a certificate the CA signed alone, the name
    each handshake asks for (SNI) in `sni`. GET /api/v1/nodes is a NodeList of `nodes` (filtered by
    labelSelector and the fieldSelector metadata.name=), watched the same
    way, its events made by add_node() and modify_node(). Services
    (/api/v1/.../services) and EndpointSlices
    (/apis/discovery.k8s.io/v1/.../endpointslices) are listed and watched
    as pods are, from `services` and `endpointslices`, their events made by
    add_object() and modify_object(); Endpoints objects
    (/api/v1/.../endpoints) and Ingresses
    (/apis/networking.k8s.io/v1/.../ingresses) the same from `endpoints`
    and `ingresses`."""

    def __init__(self, pods, token, tls=None, nodes=(), services=(), endpointslices=(),
                 endpoints=(), ingresses=()):
        import http.server
        import json
        import urllib.parse
        self.pods, self.nodes, self.got, self.fail = pods, list(nodes), [], None
        self.services, self.endpointslices = list(services), list(endpointslices)
        self.endpoints, self.ingresses = list(endpoints), list(ingresses)
        self.headers, self.sni = [], []
        for obj in (self.pods + self.nodes + self.services + self.endpointslices + self.endpoints +
                    self.ingresses):
            obj["metadata"].setdefault("resourceVersion", "1")   # as every object listed has
        # events: (version, type, object, "pods" or "nodes")
        self.version, self.oldest, self.events = 1, 1, []
        self.watch_seconds, self.stopped = 300, False
        self.cond = threading.Condition()
        api = self

        def selected(m, query, obj):
            """Whether obj (a pod, or a node) is one the URL's match m and
            query select."""
            fields = dict(t.split("=", 1) for t in query.get("fieldSelector", [""])[0].split(",")
                          if "=" in t)
            if m.group(2) == "nodes":
                name = fields.get("metadata.name")
                in_place = name is None or obj["metadata"]["name"] == name
            else:
                node = fields.get("spec.nodeName")
                in_place = ((not m.group(1) or obj["metadata"]["namespace"] == m.group(1)) and
                            (node is None or obj.get("spec", {}).get("nodeName") == node))
            return in_place and label_selected(query.get("labelSelector", [""])[0],
                                               obj["metadata"].get("labels", {}))

        class Handler(http.server.BaseHTTPRequestHandler):
            def answer(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def watch(self, m, query):
                since = int(query.get("resourceVersion", ["0"])[0] or 0)
                seconds = min(int(query.get("timeoutSeconds", ["300"])[0]), api.watch_seconds)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                deadline = time.monotonic() + seconds
                try:
                    with api.cond:
                        while not api.stopped and time.monotonic() < deadline:
                            if since < api.oldest - 1:
                                gone = {"type": "ERROR", "object": {
                                    "kind": "Status", "status": "Failure", "code": 410,
                                    "reason": "Expired",
                                    "message": "too old resource version: %d" % since}}
                                self.wfile.write(json.dumps(gone).encode() + b"\n")
                                return
                            for version, kind, obj, resource in api.events:
                                if (version > since and resource == m.group(2) and
                                        selected(m, query, obj)):
                                    self.wfile.write(json.dumps(
                                        {"type": kind, "object": obj}).encode() + b"\n")
                            since = max([since] + [e[0] for e in api.events])
                            self.wfile.flush()
                            api.cond.wait(max(0.0, min(0.2, deadline - time.monotonic())))
                except OSError:
                    pass   # the client went

            def do_GET(self):
                url = urllib.parse.urlparse(self.path)
                query = urllib.parse.parse_qs(url.query)
                auth = self.headers.get("Authorization")
                api.got.append((url.path, query, auth))
                api.headers.append(self.headers)
                m = re.fullmatch(r"/(?:api/v1|apis/discovery\.k8s\.io/v1|apis/networking\.k8s\.io/v1)"
                                 r"(?:/namespaces/([^/]+))?"
                                 r"/(pods|nodes|services|endpointslices|endpoints|ingresses)",
                                 url.path)
                status = (401 if token and auth != "Bearer " + token else api.fail or
                          (200 if m else 404))
                if status != 200:
                    self.answer(status, {"kind": "Status", "apiVersion": "v1",
                                         "status": "Failure", "message": "refused by the test",
                                         "code": status})
                elif query.get("watch") == ["1"]:
                    self.watch(m, query)
                else:
                    with api.cond:
                        items = [o for o in list(getattr(api, m.group(2)))
                                 if selected(m, query, o)]
                        version = api.version
                    kinds = {"pods": "PodList", "nodes": "NodeList", "services": "ServiceList",
                             "endpointslices": "EndpointSliceList",
                             "endpoints": "EndpointsList", "ingresses": "IngressList"}
                    self.answer(200, {"kind": kinds[m.group(2)], "apiVersion": "v1",
                                      "metadata": {"resourceVersion": str(version)},
                                      "items": items})

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        if tls:
            serve_tls(self.server, *tls, sni=self.sni)
        self.url = "%s://127.0.0.1:%d" % ("https" if tls else "http",
                                          self.server.server_address[1])
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _event(self, kind, obj, resource="pods"):
        with self.cond:
            self.version += 1
            obj["metadata"]["resourceVersion"] = str(self.version)
            self.events.append((self.version, kind, obj, resource))
            self.cond.notify_all()

    def add(self, pod):
        with self.cond:
            self.pods.append(pod)
        self._event("ADDED", pod)

    def modify(self, pod):
        with self.cond:
            self.pods[:] = [pod if p["metadata"]["uid"] == pod["metadata"]["uid"] else p
                            for p in self.pods]
        self._event("MODIFIED", pod)

    def add_node(self, node):
        with self.cond:
            self.nodes.append(node)
        self._event("ADDED", node, "nodes")

    def modify_node(self, node):
        with self.cond:
            self.nodes[:] = [node if n["metadata"]["name"] == node["metadata"]["name"] else n
                             for n in self.nodes]
        self._event("MODIFIED", node, "nodes")

    def add_object(self, resource, obj):
        """Adds obj to resource ("services", "endpointslices"), as an
        ADDED event."""
        with self.cond:
            getattr(self, resource).append(obj)
        self._event("ADDED", obj, resource)

    def modify_object(self, resource, obj):
        """Puts obj in place of the object of resource of its name, as a
        MODIFIED event."""
        with self.cond:
            objects = getattr(self, resource)
            objects[:] = [obj if o["metadata"]["name"] == obj["metadata"]["name"] else o
                          for o in objects]
        self._event("MODIFIED", obj, resource)

    def remove(self, name):
        with self.cond:
            pod = next(p for p in self.pods if p["metadata"]["name"] == name)
            self.pods.remove(pod)
        self._event("DELETED", pod)

    def expire(self):
        """Forgets every event so far, as compaction does: a watch from
        any version until now gets a 410, one from a list after it none."""
        with self.cond:
            self.version += 1
            self.oldest = self.version + 1
            self.events = []
            self.cond.notify_all()

    def watching(self):
        """How many watches were asked for."""
        return sum(1 for _, q, _ in list(self.got) if q.get("watch") == ["1"])

    def lists(self):
        """How many lists were asked for."""
        return len(self.got) - self.watching()

    def stop(self):
        with self.cond:
            self.stopped = True
            self.cond.notify_all()
        self.server.shutdown()
        self.server.server_close()
