# SPDX-License-Identifier: Apache-2.0
"""The receivers' HTTP server, through a pyroscope receiver's /ingest of
folded stacks (the smallest body that makes a profile): HTTP/1.1 framing
from raw sockets (keep-alive, pipelining, chunked bodies, Expect:
100-continue, HTTP/1.0) and what it refuses, with the status and the
count; HTTP/1.1, HTTP/2 and gRPC on one port, in plaintext and TLS, from
curl; and large requests worked on aside, on worker threads, while small
ones are answered, whatever the client or the daemon does meanwhile."""
import os
import re
import select
import shutil
import socket
import subprocess
import time
import unittest

from harness import (BUILD, PROFD, ProfdTestCase, h2c_post, make_test_certs, metric_value,
                     pprof_samples, valgrind, wait_until)

try:
    import grpc
except ImportError:   # the suite installs python3-grpcio; say so rather than fail obscurely
    grpc = None

CONFIG = """
receivers:
  pyroscope: {endpoint: "127.0.0.1:0", max_request_body_size: %(max_body)s%(extra)s}
exporters:
  pprof_file: {directory: ./profiles, path_template: "{service_name}/{unix_nanos}.pb.gz"}
service:
  telemetry: {metrics: {address: "127.0.0.1:0"}, logs: {level: %(log_level)s}}
  pipelines:
    profiles: {receivers: [pyroscope], exporters: [pprof_file]}
"""


ON_A_WORKER = r"a request of \d+ bytes on a worker"


def large_folded():
    """6 MB of folded stacks, 300k of them: a tenth of a second's work or more."""
    return b"".join(b"main;f%d;g%d;h 1\n" % (i, i % 1000) for i in range(300000))


def ingest(app, body, extra=b"", version=b"1.1", length=True):
    """An /ingest request of folded stacks for service app."""
    head = b"POST /ingest?name=%s.cpu&format=folded HTTP/%s\r\nHost: x\r\n" % (app, version)
    if length:
        head += b"Content-Length: %d\r\n" % len(body)
    return head + extra + b"\r\n" + body


def serving_threads(pid):
    """{thread id: context switches} of process pid's serving loops: the
    times each slept, and those it was made to give the CPU up (under
    load, a loop preempted after answering may find the next request
    there when it runs again, and not sleep for it)."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
            if not f.read().startswith("profd-serve-"):
                continue
        with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
            status = f.read()
        out[tid] = sum(int(n) for n in re.findall(r"voluntary_ctxt_switches:\s+(\d+)", status))
    return out


def cpu_controller():
    """(mount point, this process's path there, True for cgroup v1) of the
    cpu controller, or None when it is not mounted."""
    with open("/proc/self/cgroup") as f:
        lines = [line.rstrip("\n").split(":", 2) for line in f]
    with open("/proc/self/mountinfo") as f:
        mounts = [line.split() for line in f]
    for v1 in (True, False):
        path = next((p for _, ctl, p in lines
                     if ("cpu" in ctl.split(",") if v1 else ctl == "")), None)
        for m in mounts:
            tail = m[m.index("-") + 1:]
            if path and tail[0] == ("cgroup" if v1 else "cgroup2") and \
                    (not v1 or "cpu" in tail[2].split(",")) and m[3] == "/":
                return m[4], path, v1
    return None


def one_cpu_cgroup(test):
    """The cgroup.procs file of a new cgroup beside this process's, its CPU
    time limited to one CPU, removed when test ends; skips test when no
    cgroup can be made here."""
    found = cpu_controller()
    if not found:
        test.skipTest("no cpu controller mounted")
    mount, path, v1 = found
    parent = os.path.join(mount, path.lstrip("/"))
    if not v1:
        try:
            with open(os.path.join(parent, "cgroup.subtree_control")) as f:
                if "cpu" not in f.read().split():
                    test.skipTest("the cpu controller is not enabled below this cgroup")
        except OSError as e:
            test.skipTest("cgroup v2 unreadable: %s" % e)
    group = os.path.join(parent, "profd-test-%d" % os.getpid())
    try:
        os.mkdir(group)
    except OSError as e:
        test.skipTest("no cgroup can be made here: %s" % e)
    test.addCleanup(os.rmdir, group)
    limits = ({"cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "100000"} if v1
              else {"cpu.max": "100000 100000"})
    for name, value in limits.items():
        with open(os.path.join(group, name), "w") as f:
            f.write(value)
    return os.path.join(group, "cgroup.procs")


class Responses:
    """Reads HTTP/1.1 responses (status, headers, body) off a socket."""

    def __init__(self, sock):
        self.sock, self.buf = sock, b""

    def more(self):
        chunk = self.sock.recv(65536)
        self.buf += chunk
        return chunk

    def next(self):
        while b"\r\n\r\n" not in self.buf:
            if not self.more():
                return None
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode().split("\r\n")
        headers = dict(l.split(": ", 1) for l in lines[1:])
        n = int(headers.get("Content-Length", "0"))
        while len(self.buf) < n:
            if not self.more():
                break
        body, self.buf = self.buf[:n], self.buf[n:]
        return int(lines[0].split()[1]), headers, body

    def closed(self):
        return not self.buf and not self.more()


class HttpServerTest(ProfdTestCase):

    def start_receiver(self, extra="", max_body="1KiB", log_level="info", **kw):
        p = self.start(CONFIG % {"max_body": max_body, "extra": extra, "log_level": log_level},
                       **kw)
        host, port = p.listening("Pyroscope ingest and push.v1 (HTTP/1.1, HTTP/2, gRPC)").rsplit(
            ":", 1)
        return p, (host, int(port))

    def connect(self, addr):
        s = socket.create_connection(addr, timeout=20)
        self.addCleanup(s.close)
        return s, Responses(s)

    def profiles(self, app):
        d = self.path("profiles", app)
        return os.listdir(d) if os.path.isdir(d) else []

    def test_keep_alive_pipelining_chunked_and_expect_continue(self):
        p, addr = self.start_receiver()
        s, r = self.connect(addr)
        s.sendall(ingest(b"one", b"a;b 1\n"))
        self.assertEqual(r.next()[0], 200)
        s.sendall(ingest(b"two", b"a;b 2\n") + ingest(b"three", b"a;c 3\n"))   # pipelined
        self.assertEqual([r.next()[0], r.next()[0]], [200, 200])
        s.sendall(ingest(b"four", b"", b"Transfer-Encoding: chunked\r\n", length=False) +
                  b"3\r\na;b\r\n3;ext=1\r\n 4\n\r\n0\r\nTrailer: x\r\n\r\n")
        self.assertEqual(r.next()[0], 200)
        s.sendall(ingest(b"five", b"", b"Expect: 100-continue\r\n").replace(
            b"Content-Length: 0", b"Content-Length: 6"))
        self.assertEqual(r.next()[0], 100)   # asked to go on before the body is sent
        s.sendall(b"x;y 5\n")
        self.assertEqual(r.next()[0], 200)
        for app in ("one", "two", "three", "four", "five"):
            wait_until(lambda: self.profiles(app), app)
        s10, r10 = self.connect(addr)
        s10.sendall(ingest(b"six", b"a;b 1\n", version=b"1.0"))
        status, headers, _ = r10.next()
        self.assertEqual((status, headers.get("Connection")), (200, "close"))
        self.assertTrue(r10.closed())   # HTTP/1.0 without keep-alive: closed after
        self.assertEqual(p.stop(), 0)

    def test_requests_arriving_in_pieces_between_other_connections_keep_their_bytes(self):
        p, addr = self.start_receiver()
        slow, rslow = self.connect(addr)
        other, rother = self.connect(addr)
        for sock, responses in ((slow, rslow), (other, rother)):   # past telling HTTP/2 apart
            sock.sendall(ingest(b"first", b"a;b 1\n"))
            self.assertEqual(responses.next()[0], 200)
        whole = ingest(b"pieces", b"alpha;beta 7\n")
        cut = [0, 20, whole.index(b"\r\n\r\n") + 6, len(whole)]   # in the head, in the body
        for i in range(3):
            slow.sendall(whole[cut[i]:cut[i + 1]])
            if i < 2:   # another connection's request read and answered in between
                other.sendall(ingest(b"between%d" % i, b"zzzzzzzzzzzzzzzzzzzzzzzz;y 1\n" * 3))
                self.assertEqual(rother.next()[0], 200)
        self.assertEqual(rslow.next()[0], 200)
        wait_until(lambda: self.profiles("pieces"), "the profile of the request sent in pieces")
        path = self.path("profiles", "pieces", self.profiles("pieces")[0])
        _, samples = pprof_samples(path)
        (stack, _), values = samples.popitem()
        self.assertEqual((samples, values), ({}, [7, 7 * 10**7]))   # 7 samples at 100 Hz
        self.assertEqual([frame[1].split()[0] for frame in stack], ["beta", "alpha"])
        self.assertEqual(p.stop(), 0)

    def test_what_it_refuses(self):
        p, addr = self.start_receiver()
        cases = [
            (ingest(b"big", b"a;b 1\n" * 400), 413),   # over max_request_body_size
            (ingest(b"te", b"3\r\na;b\r\n0\r\n\r\n", b"Transfer-Encoding: chunked\r\n"), 400),
            (ingest(b"gz", b"", b"Transfer-Encoding: gzip\r\n", length=False), 501),
            (b"POST /ingest HTTP/2.0\r\n\r\n", 505),
            (b"POST  /ingest HTTP/1.1\r\n\r\n", 400),
            (b"POST /ingest HTTP/1.1\r\n folded: x\r\n\r\n", 400),
            (b"POST /ingest HTTP/1.1\r\nX-Big: " + b"y" * 70000 + b"\r\n\r\n", 431),
            (ingest(b"ch", b"", b"Transfer-Encoding: chunked\r\n", length=False) +
             b"zz\r\n", 400),
            (ingest(b"ch", b"", b"Transfer-Encoding: chunked\r\n", length=False) +
             b"800\r\n", 413),   # a chunk past the limit
        ]
        for request, want in cases:
            s, r = self.connect(addr)
            s.sendall(request)
            status, headers, body = r.next()
            self.assertEqual(status, want, request[:80])
            self.assertEqual(headers.get("Connection"), "close", request[:80])
            self.assertTrue(body, request[:80])   # the reason, as text
            self.assertTrue(r.closed(), request[:80])
        s, r = self.connect(addr)
        s.sendall(b"GET /ingest HTTP/1.1\r\nHost: x\r\n\r\n")
        status, headers, _ = r.next()
        self.assertEqual((status, headers.get("Allow")), (405, "POST"))
        s.sendall(ingest(b"after", b"a;b 1\n"))   # a refused request leaves the connection usable
        self.assertEqual(r.next()[0], 200)
        refused = lambda: metric_value(p.metrics(), "profd_component_refused_records_total",
                                       kind="receiver", id="pyroscope")
        wait_until(lambda: refused() == len(cases) + 1, "every refusal counted: %s" % refused())
        self.assertEqual(p.stop(), 0)

    def test_connections_are_served_on_a_loop_for_each_cpu(self):
        p, addr = self.start_receiver()
        started = p.wait_log(r"running with \d+ component\(s\) on \d+ CPU")[0]
        cpus = int(re.search(r"on (\d+) CPU", started).group(1))
        if cpus < 2:
            self.skipTest("one CPU: the main loop serves alone")
        self.assertLessEqual(cpus, len(os.sched_getaffinity(0)))
        before = serving_threads(p.proc.pid)
        self.assertEqual(len(before), min(cpus - 1, 7))   # beside the main loop, up to 8 in all
        # Two connections for each loop: they are handed out in turn.
        conns = [self.connect(addr) for _ in range(2 * (len(before) + 1))]
        for _ in range(30):
            for i, (s, r) in enumerate(conns):
                s.sendall(ingest(b"conn%d" % i, b"main;work 1\n"))
                self.assertEqual(r.next()[0], 200)
        after = serving_threads(p.proc.pid)
        for tid, switches in before.items():
            # Each of its requests found the loop asleep in epoll_wait, or
            # it had been preempted since the one before.
            self.assertGreaterEqual(after[tid] - switches, 30, (tid, before, after))
        for i in range(len(conns)):
            wait_until(lambda: len(self.profiles("conn%d" % i)) == 30,
                       "conn%d's 30 profiles written" % i)
        self.assertEqual(p.stop(), 0)

    def test_a_new_connection_goes_to_the_loop_with_the_fewest_open(self):
        """Each loop's open connections are a gauge; connections that end
        leave their loop the first to take new ones, so that loops whose
        clients went away are not left idle beside busy ones."""
        p, addr = self.start_receiver()
        started = p.wait_log(r"running with \d+ component\(s\) on \d+ CPU")[0]
        loops = min(int(re.search(r"on (\d+) CPU", started).group(1)), 8)
        if loops < 2:
            self.skipTest("one CPU: the main loop serves alone")

        def open_by_loop():
            m = p.metrics()
            return [metric_value(m, "profd_server_connections", component="pyroscope",
                                 address="%s:%d" % addr, loop=str(i)) for i in range(loops)]

        def settled(total):
            """The gauges once they add up to total (a connection is counted when
            it is handed to its loop, so the last may take a moment)."""
            got = []
            wait_until(lambda: got.append(open_by_loop()) or sum(got[-1]) == total,
                       "%d connections in the gauges: %s" % (total, got[-1:]))
            return got[-1]
        self.assertEqual(settled(0), [0] * loops)
        conns, loop_of = [], []
        for i in range(2 * loops):
            before = settled(len(conns))
            s, r = self.connect(addr)
            s.sendall(ingest(b"conn%d" % i, b"main;work 1\n"))
            self.assertEqual(r.next()[0], 200)
            conns.append(s)
            after = settled(len(conns))
            loop_of.append([a - b for a, b in zip(after, before)].index(1))
        self.assertEqual(settled(len(conns)), [2] * loops)   # taken in turn while alike
        for s, loop in zip(conns, loop_of):
            if loop == 0:
                s.close()
        self.assertEqual(settled(2 * loops - 2), [0] + [2] * (loops - 1))
        for i in range(2):
            s, r = self.connect(addr)
            s.sendall(ingest(b"again%d" % i, b"main;work 1\n"))
            self.assertEqual(r.next()[0], 200)
        self.assertEqual(settled(2 * loops), [2] * loops)   # both to the loop left empty
        self.assertEqual(p.stop(), 0)

    def test_a_cgroup_cpu_quota_of_one_cpu_leaves_the_main_loop_serving_alone(self):
        if len(os.sched_getaffinity(0)) < 2:
            self.skipTest("one CPU: nothing for a quota to take away")
        procs = one_cpu_cgroup(self)
        # The shell puts itself in the cgroup, then becomes profd.
        p, addr = self.start_receiver(wrapper=["sh", "-c", 'echo $$ > "$0" && exec "$@"', procs])
        p.wait_log(r"running with \d+ component\(s\) on 1 CPU\(s\)")
        self.assertEqual(serving_threads(p.proc.pid), {})
        s, r = self.connect(addr)
        for _ in range(3):
            s.sendall(ingest(b"limited", b"main;work 1\n"))
            self.assertEqual(r.next()[0], 200)
        wait_until(lambda: len(self.profiles("limited")) == 3, "the 3 profiles written")
        self.assertEqual(p.stop(), 0)

    def test_a_flood_of_refusals_is_counted_whole_and_logged_ten_a_second(self):
        p, addr = self.start_receiver()
        # Two connections, served on two loops when there are two CPUs:
        # one limit for the server's log, whichever loop refuses.
        (s, r), (s2, r2) = self.connect(addr), self.connect(addr)
        for i in range(40):   # 405s: the connection stays open, the loop is quick
            sock, resp = (s, r) if i % 2 else (s2, r2)
            sock.sendall(b"GET /ingest HTTP/1.1\r\nHost: x\r\n\r\n")
            self.assertEqual(resp.next()[0], 405)
        refused = lambda: metric_value(p.metrics(), "profd_component_refused_records_total",
                                       kind="receiver", id="pyroscope")
        wait_until(lambda: refused() == 40, "every refusal counted: %s" % refused())
        # The log is read from profd's stderr by another thread: the lines
        # may come a moment after the count.
        p.wait_log(r"pyroscope: refused /ingest", count=10)
        lines = len(re.findall(r"pyroscope: refused /ingest", p.log_text()))
        self.assertLessEqual(lines, 20)   # ten a second, within two seconds

        def one_more_says_how_many_were_held():
            s.sendall(b"GET /ingest HTTP/1.1\r\nHost: x\r\n\r\n")
            self.assertEqual(r.next()[0], 405)
            return re.search(r"\((\d+) more refused since the last such line\)", p.log_text())
        wait_until(one_more_says_how_many_were_held, "a line saying how many were held")
        text = p.log_text()
        logged = len(re.findall(r"pyroscope: refused /ingest", text))
        held = sum(int(n) for n in re.findall(r"\((\d+) more refused since", text))
        # Each refusal is a line or in a later line's count, but for the
        # last few when the line that counts them has not come yet.
        self.assertTrue(0 <= refused() - (logged + held) <= 2, (refused(), logged, held))
        self.assertEqual(p.stop(), 0)

    def assert_trickle_answered_408(self, s, r, data, piece, pause):
        """Sends data on s a piece of that many bytes every pause seconds
        (each well within the idle timeout, the whole not) until the server
        closes; its answer, read with r, is 408, within 5 s."""
        started = time.monotonic()
        for i in range(0, len(data), piece):
            try:
                s.sendall(data[i:i + piece])
            except OSError:
                break   # closed after the 408
            time.sleep(pause)
        self.assertEqual(r.next()[0], 408)
        self.assertLess(time.monotonic() - started, 5)

    def test_a_head_trickled_past_read_header_timeout_is_answered_408(self):
        p, addr = self.start_receiver(", read_header_timeout: 300ms")
        idle, idle_r = self.connect(addr)
        s, r = self.connect(addr)
        head = b"POST /ingest?name=slow.cpu&format=folded HTTP/1.1\r\nHost: x\r\n"
        self.assert_trickle_answered_408(s, r, head, 1, 0.02)
        p.wait_log(r"refused request from .*: request head not whole 0.3 s after it began")
        # A connection that waited between requests is not a slow head.
        time.sleep(0.4)
        idle.sendall(ingest(b"quick", b"a;b 1\n"))
        self.assertEqual(idle_r.next()[0], 200)
        self.assertEqual(p.stop(), 0)

    def test_a_request_trickled_past_read_timeout_is_answered_408(self):
        p, addr = self.start_receiver(", read_timeout: 500ms", max_body="1MiB")
        s, r = self.connect(addr)
        body = b"a;b 1\n" * 100
        s.sendall(ingest(b"slow", body)[:-len(body)])   # the head whole, then the body
        self.assert_trickle_answered_408(s, r, body, 10, 0.05)
        p.wait_log(r"refused .* request not whole 0.5 s after it began")
        # Over HTTP/2 too, and a request that comes at once is served.
        upload = self.path("upload")
        with open(upload, "wb") as f:
            f.write(body * 10)
        url = "http://%s:%d/ingest?name=slow2.cpu&format=folded" % addr
        slow = subprocess.run(["curl", "-sS", "--http2-prior-knowledge", "--limit-rate", "2K",
                               "--data-binary", "@" + upload, "-o", "/dev/null", "-w",
                               "%{http_code}", url], capture_output=True, text=True, timeout=60)
        self.assertEqual(slow.stdout, "408", slow.stderr)
        self.assertEqual(h2c_post(url.replace("slow2", "quick"), body)[0], 200)
        s, r = self.connect(addr)
        s.sendall(ingest(b"quick", body))
        self.assertEqual(r.next()[0], 200)
        self.assertEqual(p.stop(), 0)

    def assert_answered_408_in_time(self, r, started, limit):
        """The answer r reads is 408, at limit seconds after started or a
        little later: far sooner than the idle timeout (120 s)."""
        self.assertEqual(r.next()[0], 408)
        self.assertGreaterEqual(time.monotonic() - started, limit)
        self.assertLess(time.monotonic() - started, limit + 4)

    def test_a_client_gone_silent_mid_request_is_answered_408_at_its_limit(self):
        p, addr = self.start_receiver(", read_header_timeout: 400ms, read_timeout: 700ms",
                                      max_body="1MiB")
        body = b"a;b 1\n" * 100
        # HTTP/1.1: half a head, then nothing.
        s, r = self.connect(addr)
        started = time.monotonic()
        s.sendall(ingest(b"silent", body)[:20])
        self.assert_answered_408_in_time(r, started, 0.4)
        p.wait_log(r"refused request from .*: request head not whole 0.4 s after it began")
        # The head whole and half the body, then nothing.
        s, r = self.connect(addr)
        started = time.monotonic()
        s.sendall(ingest(b"silent", body)[:-len(body) // 2])
        self.assert_answered_408_in_time(r, started, 0.7)
        # HTTP/2: a stream's headers and part of its body, then nothing
        # (curl uploading what its standard input gives, kept open: curl
        # reads the answer only once its input ends, so the refusal is
        # timed by the server's log).
        url = "http://%s:%d/ingest?name=silent2.cpu&format=folded" % addr
        started = time.monotonic()
        curl = subprocess.Popen(["curl", "-sS", "--http2-prior-knowledge", "-X", "POST", "-T", "-",
                                 "-o", "/dev/null", "-w", "%{http_code}", url],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.addCleanup(curl.kill)
        curl.stdin.write(body.decode())
        curl.stdin.flush()
        p.wait_log(r"refused /ingest\?name=silent2\.cpu.*: request not whole 0.7 s after it began")
        self.assertGreaterEqual(time.monotonic() - started, 0.7)
        self.assertLess(time.monotonic() - started, 0.7 + 4)
        curl.stdin.close()
        self.assertEqual(curl.stdout.read(), "408")
        curl.wait(timeout=20)
        # A connection between requests is not a request under way, nor is
        # one whose request came whole.
        idle, idle_r = self.connect(addr)
        idle.sendall(ingest(b"quick", body))
        self.assertEqual(idle_r.next()[0], 200)
        time.sleep(1)
        idle.sendall(ingest(b"quick", body))
        self.assertEqual(idle_r.next()[0], 200)
        self.assertEqual(p.stop(), 0)

    @unittest.skipIf(grpc is None, "python3-grpcio is not installed")
    def test_bodies_past_max_request_bytes_in_flight_are_refused_until_room_comes_back(self):
        """Large bodies held at once, over HTTP/1.1 and HTTP/2, stay under the
        limit: one with no room is refused at its head (503, Retry-After;
        gRPC UNAVAILABLE), small ones are not counted, and the room comes
        back when a held request is answered or its connection goes."""
        p, addr = self.start_receiver(", max_request_bytes_in_flight: 1MiB", max_body="1MiB")

        def in_flight():
            return metric_value(p.metrics(), "profd_server_request_bytes_in_flight",
                                component="pyroscope", address="%s:%d" % addr)

        self.assertEqual(in_flight(), 0)
        held_body = b"".join(b"main;held%d 1\n" % i for i in range(60000))   # ~860 KB
        body = b"".join(b"main;f%d 1\n" % i for i in range(20000))          # ~250 KB
        # One request announces most of the room and sends part of its body.
        held, held_r = self.connect(addr)
        held.sendall(ingest(b"held", held_body)[:-len(held_body) // 2])
        wait_until(lambda: in_flight() == len(held_body), "the held body counted")

        refused_before = self.refused(p)
        b, b_r = self.connect(addr)
        b.sendall(ingest(b"other", body))
        status, headers, text = b_r.next()
        self.assertEqual((status, headers.get("Retry-After")), (503, "1"), text)
        self.assertIn(b"no room under max_request_bytes_in_flight (1048576 bytes, %d of them "
                      b"held)" % len(held_body), text)
        url = "http://%s:%d/ingest?name=other2.cpu&format=folded" % addr
        self.assertEqual(h2c_post(url, body)[0], 503)
        with grpc.insecure_channel("%s:%d" % addr) as ch:
            push = ch.unary_unary("/push.v1.PusherService/Push",
                                  request_serializer=lambda m: m,
                                  response_deserializer=lambda m: m)
            with self.assertRaises(grpc.RpcError) as e:
                push(b"\0" * (100 << 10), timeout=20)
        self.assertEqual(e.exception.code(), grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(self.refused(p) - refused_before, 3)
        # Small bodies do not count.
        s, r = self.connect(addr)
        s.sendall(ingest(b"small", b"a;b 1\n"))
        self.assertEqual(r.next()[0], 200)
        self.assertEqual(in_flight(), len(held_body))

        # Answered: its room comes back.
        held.sendall(held_body[len(held_body) - len(held_body) // 2:])
        self.assertEqual(held_r.next()[0], 200)
        wait_until(lambda: in_flight() == 0, "the held body's room back")
        self.assertEqual(h2c_post(url, body)[0], 200)

        # An HTTP/2 stream that holds room gives it back when its connection
        # goes, unanswered.
        upload = self.path("upload")
        with open(upload, "wb") as f:
            f.write(held_body)
        slow = subprocess.Popen(["curl", "-sS", "--http2-prior-knowledge", "--limit-rate", "20K",
                                 "--data-binary", "@" + upload, "-o", "/dev/null",
                                 url.replace("other2", "slow")])
        self.addCleanup(slow.kill)
        wait_until(lambda: in_flight() == len(held_body), "the slow stream's body counted")
        b, b_r = self.connect(addr)
        b.sendall(ingest(b"other3", body))
        self.assertEqual(b_r.next()[0], 503)
        slow.kill()
        slow.wait()
        wait_until(lambda: in_flight() == 0, "the slow stream's room back")
        wait_until(lambda: self.profiles("held") and self.profiles("other2"),
                   "the profiles of the requests taken")
        self.assertEqual(p.stop(), 0)
        self.assertEqual(self.profiles("slow") + self.profiles("other") + self.profiles("other3"),
                         [])

    def refused(self, p):
        """The pyroscope receiver's refused requests so far."""
        return metric_value(p.metrics(), "profd_component_refused_records_total",
                            kind="receiver", id="pyroscope") or 0

    def test_out_of_descriptors_it_stops_accepting_for_a_while_and_serves_again(self):
        """accept() failing with EMFILE leaves the connection queued: the
        listener pauses instead of waking for it again and again."""
        p, addr = self.start_receiver(wrapper=("prlimit", "--nofile=40:40", "--"))
        flood = [socket.create_connection(addr, timeout=20) for _ in range(60)]
        try:
            p.wait_log(r"pyroscope: cannot accept connections on 127\.0\.0\.1:\d+: Too many "
                       r"open files; not accepting for 10 ms")
            p.wait_log(r"not accepting for 1000 ms")   # doubling while it keeps failing
            # Said once a second at most; tried ~10 times in its first 1.3 s.
            lines = len(re.findall(r"cannot accept connections", p.log_text()))
            self.assertLessEqual(lines, 4, p.log_text())
        finally:
            for c in flood:
                c.close()
        s, r = self.connect(addr)
        s.sendall(ingest(b"after", b"a;b 1\n"))
        self.assertEqual(r.next()[0], 200)
        self.assertGreater(metric_value(p.metrics(), "profd_server_accept_pauses",
                                        component="pyroscope", address="%s:%d" % addr), 0)
        self.assertEqual(p.stop(), 0)

    def test_http1_http2_and_grpc_share_the_port_in_plaintext_and_tls(self):
        ca, cert, key = make_test_certs(self.path())
        for tls in (False, True):
            extra = ", tls: {cert_file: %s, key_file: %s}" % (cert, key) if tls else ""
            p, (host, port) = self.start_receiver(extra)
            url = "%s://%s:%d/ingest?name=t%d.cpu&format=folded" % (
                "https" if tls else "http", host, port, tls)
            for flag, version in (("--http1.1", "1.1"),
                                  ("--http2" if tls else "--http2-prior-knowledge", "2")):
                out = subprocess.run(["curl", "-sS", flag, "--cacert", ca, "--data-binary",
                                      "a;b 1", "-o", "/dev/null", "-w",
                                      "%{http_code} %{http_version}", url],
                                     capture_output=True, text=True, timeout=30)
                self.assertEqual(out.stdout, "200 " + version, out.stderr)
            wait_until(lambda: len(self.profiles("t%d" % tls)) == 2, "both versions' profiles")
            with open("/proc/%d/maps" % p.proc.pid) as f:   # OpenSSL only when TLS is served
                self.assertEqual("libssl" in f.read(), tls)
            self.assertEqual(p.stop(), 0)

    def test_tls_without_its_library_is_a_clear_error_at_start(self):
        """Server TLS comes from profd-tls.so beside the executable; an
        executable without it refuses a TLS config and says what is missing."""
        ca, cert, key = make_test_certs(self.path())
        os.makedirs(self.path("bin"))
        shutil.copy(PROFD, self.path("bin", "profd"))
        with open(self.path("tls.yaml"), "w") as f:
            f.write(CONFIG % {"max_body": "1KiB", "log_level": "info",
                              "extra": ", tls: {cert_file: %s, key_file: %s}" % (cert, key)})
        out = subprocess.run([self.path("bin", "profd"), "--config", "tls.yaml", "--modules",
                              os.path.join(BUILD, "modules")], cwd=self.dir,
                             capture_output=True, text=True, timeout=60)
        self.assertNotEqual(out.returncode, 0)
        self.assertRegex(out.stderr,
                         r"pyroscope: TLS: profd-tls\.so is neither beside the executable")

    def test_a_large_request_is_worked_on_aside_while_small_ones_are_answered(self):
        p, addr = self.start_receiver(max_body="64MiB", log_level="debug")
        large, rlarge = self.connect(addr)
        large.sendall(ingest(b"large", large_folded()))
        p.wait_log(ON_A_WORKER)
        small, rsmall = self.connect(addr)
        small.sendall(ingest(b"small", b"a;b 1\n"))
        self.assertEqual(rsmall.next()[0], 200)
        waiting, _, _ = select.select([large], [], [], 0)
        self.assertEqual(waiting, [], "the large request answered before a small one after it")
        self.assertEqual(rlarge.next()[0], 200)
        large.sendall(ingest(b"again", b"a;b 1\n"))   # the connection reads on after it
        self.assertEqual(rlarge.next()[0], 200)
        for app in ("large", "small", "again"):
            wait_until(lambda: self.profiles(app), app)
        self.assertEqual(p.stop(), 0)

    def test_a_body_past_its_reserved_buffer_and_a_request_pipelined_behind_it(self):
        p, addr = self.start_receiver(max_body="64MiB")
        body = b"".join(b"main;f%d;g%d;h %d\n" % (i, i % 1000, i % 5 + 1) for i in range(60000))
        self.assertGreater(len(body), 1 << 20)   # more than is made ready before it comes
        s, r = self.connect(addr)
        s.sendall(ingest(b"big", body) + ingest(b"behind", b"a;b 1\n"))
        self.assertEqual([r.next()[0], r.next()[0]], [200, 200])
        for app in ("big", "behind"):
            wait_until(lambda: self.profiles(app), app)
        _, samples = pprof_samples(self.path("profiles", "big", self.profiles("big")[0]))
        self.assertEqual(len(samples), 60000)   # every stack, every byte where it was
        self.assertEqual(sum(v[0] for v in samples.values()), sum(i % 5 + 1 for i in range(60000)))
        self.assertEqual(p.stop(), 0)

    def test_a_client_gone_or_a_stop_while_its_request_is_on_a_worker(self):
        p, addr = self.start_receiver(max_body="64MiB", log_level="debug")
        body = large_folded()
        gone, _ = self.connect(addr)   # HTTP/1.1: the client closes while its request is worked on
        gone.sendall(ingest(b"gone", body))
        p.wait_log(ON_A_WORKER)
        gone.close()
        with open(self.path("large.txt"), "wb") as f:
            f.write(body)
        curl = subprocess.Popen(["curl", "-sS", "--http2-prior-knowledge", "--data-binary",
                                 "@" + self.path("large.txt"), "http://%s:%d/ingest?"
                                 "name=gone2.cpu&format=folded" % addr],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        p.wait_log(ON_A_WORKER, count=2)   # HTTP/2: the same, curl killed
        curl.kill()
        curl.wait()
        s, r = self.connect(addr)   # served on
        s.sendall(ingest(b"after", b"a;b 1\n"))
        self.assertEqual(r.next()[0], 200)
        for app in ("gone", "gone2", "after"):   # accepted, so kept, answered or not
            wait_until(lambda: self.profiles(app), app)
        last, rlast = self.connect(addr)   # a stop waits for the worker and answers
        last.sendall(ingest(b"last", body))
        p.wait_log(ON_A_WORKER, count=3)
        self.assertEqual(p.stop(), 0)
        self.assertEqual(rlast.next()[0], 200)
        self.assertEqual(len(self.profiles("last")), 1)

    @unittest.skipUnless(shutil.which("valgrind") and not os.environ.get("PROFD_SANITIZED"),
                         "valgrind not installed, or a sanitizer build")
    def test_valgrind_run_and_shutdown_with_connections_open(self):
        p, addr = self.start_receiver(wrapper=valgrind(self.path("vg.log")))
        s, r = self.connect(addr)
        s.sendall(ingest(b"one", b"a;b 1\n"))
        self.assertEqual(r.next()[0], 200)
        out = subprocess.run(["curl", "-sS", "--http2-prior-knowledge", "--data-binary", "a;b 1",
                              "-o", "/dev/null", "-w", "%{http_code}", "http://%s:%d/ingest?"
                              "name=two.cpu&format=folded" % addr], capture_output=True, text=True,
                             timeout=60)
        self.assertEqual(out.stdout, "200", out.stderr)
        for app in ("one", "two"):
            wait_until(lambda: self.profiles(app), app, deadline=120)
        half, rh = self.connect(addr)   # a connection with a request cut short at the end
        half.sendall(ingest(b"three", b"a;b 1\n"))
        self.assertEqual(rh.next()[0], 200)
        half.sendall(ingest(b"four", b"a;b 1\n")[:-3])
        rc = p.stop(timeout=120)
        log = open(self.path("vg.log")).read()
        self.assertEqual(rc, 0, log)
        self.assertIn("ERROR SUMMARY: 0 errors", log)
