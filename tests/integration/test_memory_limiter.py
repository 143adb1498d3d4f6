# SPDX-License-Identifier: Apache-2.0
"""The memory_limiter processor: over its soft limit a push is answered
"retry later" (Pyroscope's 429) and counted, the state shown on /metrics;
under it again, pushes are taken; and the configs it refuses."""
import os
import socket
import unittest
import urllib.error
import urllib.request

from harness import GO_CORPUS, ProfdTestCase, http_post, metric_value, wait_until

CONFIG = """
receivers:
  pyroscope: {endpoint: "127.0.0.1:0"}
processors:
  memory_limiter: {%s}
exporters:
  pprof_file: {directory: ./profiles, path_template: "{service_name}/{unix_nanos}.pb.gz"}
service:
  telemetry: {metrics: {address: "127.0.0.1:0"}}
  pipelines:
    profiles: {receivers: [pyroscope], processors: [memory_limiter], exporters: [pprof_file]}
"""


class MemoryLimiterTest(ProfdTestCase):

    def start_limited(self, options):
        p = self.start(CONFIG % options)
        address = p.listening("Pyroscope ingest and push.v1 (HTTP/1.1, HTTP/2, gRPC)")
        return p, address

    def push(self, address, app):
        """An /ingest of the Go heap profile for service app: its status."""
        heap = open(os.path.join(GO_CORPUS, "heap.pb.gz"), "rb").read()
        return http_post("http://%s/ingest?name=%s.inuse_space&format=pprof" % (address, app),
                         heap)[0]

    def gauge(self, p, name):
        return metric_value(p.metrics(), name, component="memory_limiter")

    def profiles(self, app):
        d = self.path("profiles", app)
        return os.listdir(d) if os.path.isdir(d) else []

    def hold_body(self, address, size, sent):
        """A connection whose request announced a body of size bytes and sent
        sent of them, held by the server while the rest is awaited."""
        host, port = address.rsplit(":", 1)
        held = socket.create_connection((host, int(port)), timeout=20)
        self.addCleanup(held.close)
        held.sendall(b"POST /ingest?name=held.cpu&format=pprof HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Length: %d\r\n\r\n" % size)
        held.sendall(b"\0" * sent)
        return held

    def test_over_its_limit_pushes_are_answered_retry_later_and_counted(self):
        p, address = self.start_limited("limit_mib: 1, check_interval: 100ms")
        p.wait_log(r"memory_limiter: limit 1\.0 MiB, data refused above 0\.8 MiB")
        self.hold_body(address, 8 << 20, 4 << 20)   # profd idles in less than the limit
        p.wait_log(r"memory_limiter: [\d.]+ MiB in use, over the soft limit of 0\.8 MiB: "
                   r"refusing data until it is under")
        heap = open(os.path.join(GO_CORPUS, "heap.pb.gz"), "rb").read()
        with self.assertRaises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(urllib.request.Request(
                "http://%s/ingest?name=refused.inuse_space&format=pprof" % address, data=heap),
                timeout=20)
        self.assertEqual((e.exception.code, e.exception.headers["Retry-After"]), (429, "1"))
        self.assertEqual(self.gauge(p, "profd_memory_limiter_refusing"), 1)
        self.assertGreater(self.gauge(p, "profd_memory_limiter_in_use_bytes"), 4 << 20)
        self.assertEqual(metric_value(p.metrics(), "profd_component_retry_later_records_total",
                                      kind="processor", id="memory_limiter"), 1)
        self.assertEqual(p.stop(), 0)
        self.assertEqual(self.profiles("refused"), [])

    @unittest.skipIf(os.environ.get("PROFD_SANITIZED"),
                     "a sanitizer's allocator keeps what is freed, and its own memory counts")
    def test_refusing_while_a_large_body_is_held_and_taking_again_once_it_goes(self):
        p, address = self.start_limited(
            "limit_mib: 64, spike_limit_mib: 24, check_interval: 50ms")   # soft limit: 40 MiB
        self.assertEqual(self.push(address, "before"), 200)
        self.assertEqual(self.gauge(p, "profd_memory_limiter_refusing"), 0)
        held = self.hold_body(address, 60 << 20, 50 << 20)
        wait_until(lambda: self.gauge(p, "profd_memory_limiter_refusing") == 1,
                   "refusing with the body held")
        p.wait_log(r"over the soft limit of 40\.0 MiB: refusing data")
        self.assertEqual(self.push(address, "during"), 429)
        held.close()   # the body goes; what the allocator kept of it is given back
        wait_until(lambda: self.gauge(p, "profd_memory_limiter_refusing") == 0,
                   "taking data again")
        p.wait_log(r"MiB in use, under the soft limit again: taking data")
        self.assertEqual(self.push(address, "after"), 200)
        wait_until(lambda: self.profiles("before") and self.profiles("after"), "the profiles")
        self.assertEqual(p.stop(), 0)
        self.assertEqual(self.profiles("during"), [])

    def soft_limit_is(self, p, mib):
        """Whether p's soft limit gauge is mib MiB, to the KiB (a percentage
        of bytes is worked out in whole hundredths)."""
        soft = self.gauge(p, "profd_memory_limiter_soft_limit_bytes")
        return soft is not None and abs(soft - mib * (1 << 20)) < 1024

    def limited_cgroup(self, limit):
        """A new memory cgroup below this process's, limited to limit bytes
        with nothing above it limiting more: the cgroup.procs and limit
        files (cgroup v1 or v2). Skips the test where none can be made."""
        def text(path):
            with open(path) as f:
                return f.read().strip()
        v1 = v2 = None
        for line in text("/proc/self/cgroup").splitlines():
            _, controllers, rel = line.split(":", 2)
            if "memory" in controllers.split(","):
                v1 = rel
            elif controllers == "":
                v2 = rel
        for mount, rel, name in [("/sys/fs/cgroup/memory", v1, "memory.limit_in_bytes"),
                                 ("/sys/fs/cgroup", v2, "memory.max")]:
            if rel is None:
                continue
            own = next((d for d in (mount + rel.rstrip("/"), mount)
                        if os.path.isfile(os.path.join(d, name)) and
                        str(os.getpid()) in text(os.path.join(d, "cgroup.procs")).split()), None)
            if own is None:
                continue
            d = own
            while d.startswith(mount):   # a limit above it would be what counts
                f = os.path.join(d, name)
                set_to = text(f) if os.path.isfile(f) else "max"
                if set_to != "max" and int(set_to) < 2 * limit:
                    self.skipTest("a memory limit of this process's cgroups is below %d" %
                                  (2 * limit))
                d = os.path.dirname(d)
            child = os.path.join(own, "profd-test-%d" % os.getpid())
            try:
                os.mkdir(child)
                self.addCleanup(os.rmdir, child)
                with open(os.path.join(child, name), "w") as f:
                    f.write(str(limit))
            except OSError as e:
                self.skipTest("no memory cgroup can be made here: %s" % e)
            return os.path.join(child, "cgroup.procs"), os.path.join(child, name)
        self.skipTest("no memory cgroup of this process's is to be found")

    def test_with_limit_percentage_the_limits_follow_a_cgroup_limit_changed_in_place(self):
        """As Kubernetes resizes a pod's memory limit without a restart."""
        with open("/proc/meminfo") as f:
            meminfo = dict(l.split(":", 1) for l in f)
        if int(meminfo["MemTotal"].split()[0]) * 1024 < (2 << 30):
            self.skipTest("less than 2 GiB of memory")
        procs, limit = self.limited_cgroup(1 << 30)
        p = self.start(CONFIG % "limit_percentage: 50, check_interval: 50ms",
                       wrapper=["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', procs])
        p.wait_log(r"memory_limiter: limit 512\.0 MiB \(50% of 1024\.0 MiB\), data refused "
                   r"above 409\.6 MiB$")
        wait_until(lambda: self.soft_limit_is(p, 409.6), "the soft limit shown")
        with open(limit, "w") as f:
            f.write(str(768 << 20))
        p.wait_log(r"memory_limiter: the memory there is for profd is now 768\.0 MiB \(was "
                   r"1024\.0\): limit 384\.0 MiB, data refused above 307\.2 MiB$")
        wait_until(lambda: self.soft_limit_is(p, 307.2), "the soft limit moved")
        self.assertEqual(self.gauge(p, "profd_memory_limiter_refusing"), 0)
        self.assertEqual(p.stop(), 0)

    def test_what_it_refuses_to_start_with(self):
        for options, says in [
            ("limit_percentage: 0", "limit_percentage 0 with no limit_mib limits nothing"),
            ("limit_mib: 100, spike_limit_mib: 100", "spike_limit_mib must be below limit_mib"),
            ("limit_percentage: 50, spike_limit_percentage: 60",
             "spike_limit_percentage must be below limit_percentage"),
            ("limit_percentage: 101", "a percentage is from 0 to 100"),
            ("limit_mib: -1", "a size in MiB is from 0 to 2^30 (1 PiB)"),
            ("limit_mib: 2000000000", "a size in MiB is from 0 to 2^30 (1 PiB)"),
            ("check_interval: 0s", "check_interval must be above 0"),
        ]:
            self.assert_config_refused(CONFIG % options, says)


if __name__ == "__main__":
    unittest.main()
