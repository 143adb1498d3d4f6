# SPDX-License-Identifier: Apache-2.0
"""The pprof_scrape receiver against real Go targets and a scripted server."""
import gzip
import hashlib
import os
import re

from harness import (GO_CORPUS, FakeTarget, ProfdTestCase, Target, make_test_certs, metric_value,
                     pprof_samples, sign_test_cert, subtract, wait_until)

SCRAPE = """
receivers:
  pprof_scrape:
    scrape_configs:
%s
exporters:
  pprof_file: {path_template: "{__name__}/{instance}/{unix_nanos}.pb.gz"}
service:
  telemetry: {metrics: {address: "127.0.0.1:0"}}
  pipelines:
    profiles: {receivers: [pprof_scrape], exporters: [pprof_file]}
"""


def dir_of(address):
    """The directory {instance} becomes in a path template (':' is replaced)."""
    return re.escape(address.replace(":", "_"))


def job(name, targets, presets, interval="1s", extra=""):
    return ("      - job_name: %s\n        scrape_interval: %s\n"
            "        static_configs: [{targets: [%s]}]\n"
            "        profiling_config: {presets: [%s]}\n%s") % (
                name, interval, ", ".join('"%s"' % t for t in targets), ", ".join(presets), extra)


class ScrapeTest(ProfdTestCase):

    def setUp(self):
        super().setUp()
        self.targets = []

    def tearDown(self):
        for t in self.targets:
            t.stop()
        super().tearDown()

    def target(self, fake=False):
        t = FakeTarget() if fake else Target()
        self.targets.append(t)
        return t

    def goroutine_target(self, tls=None):
        """A FakeTarget (tls as FakeTarget takes it) answering
        /debug/pprof/goroutine with the Go corpus's goroutine profile."""
        t = FakeTarget(tls=tls)
        self.targets.append(t)
        t.set("/debug/pprof/goroutine",
              (200, open(os.path.join(GO_CORPUS, "goroutine.pb.gz"), "rb").read()))
        return t

    def written(self, name):
        root = self.path("profiles", name)
        files = []
        for d, _, fs in os.walk(root):
            files += [os.path.join(d, f) for f in fs if not f.startswith(".")]
        return sorted(files)

    def test_every_preset_from_a_real_go_target(self):
        t = self.target()
        presets = ["process_cpu", "memory", "goroutine", "mutex", "block", "threadcreate",
                   "fgprof"]
        p = self.start(SCRAPE % job("go", [t.address], presets, interval="2s"))
        for name in presets:
            wait_until(lambda: self.written(name), "a %s profile" % name, deadline=30)
        want = {"process_cpu": "cpu", "memory": "alloc_space", "goroutine": "goroutine",
                "mutex": "contentions", "block": "contentions", "threadcreate": "threadcreate",
                "fgprof": "time"}
        for name in presets:
            columns, samples = pprof_samples(self.written(name)[0])
            self.assertIn(want[name] + "/", " ".join(columns), name)
        m = p.metrics()
        self.assertEqual(metric_value(m, "profd_scrape_up", component="pprof_scrape", job="go",
                                      instance=t.address, profile="memory"), 1)
        self.assertEqual(p.stop(), 0)

    def test_proxies_named_by_the_environment_are_not_used(self):
        # As Prometheus scrapes: straight to the target, whatever
        # http_proxy says (here a closed port, which would fail every scrape).
        t = self.target()
        p = self.start(SCRAPE % job("direct", [t.address], ["goroutine"], interval="1s"),
                       wrapper=("env", "http_proxy=http://127.0.0.1:9", "all_proxy=127.0.0.1:9"))
        wait_until(lambda: self.written("goroutine"), "a goroutine profile", deadline=30)
        self.assertNotIn("scrape of", p.log_text())
        self.assertEqual(p.stop(), 0)

    def test_clashing_sample_labels_are_renamed_unless_honor_labels(self):
        # The target labels its goroutines tenant=...; the series gets tenant too.
        t = self.target()
        labels = "        static_configs: [{targets: [\"%s\"], labels: {tenant: fleet}}]\n" % t.address
        jobs = ("      - job_name: renamed\n        scrape_interval: 1s\n" + labels +
                "        profiling_config: {presets: [goroutine]}\n"
                "        relabel_configs: [{target_label: __name__, replacement: renamed}]\n"
                "      - job_name: honored\n        scrape_interval: 1s\n        honor_labels: true\n"
                + labels + "        profiling_config: {presets: [goroutine]}\n"
                "        relabel_configs: [{target_label: __name__, replacement: honored}]\n")
        p = self.start(SCRAPE % jobs)
        for name in ("renamed", "honored"):
            wait_until(lambda: self.written(name), "a %s profile" % name, deadline=30)
        self.assertEqual(p.stop(), 0)

        def label_keys(name):
            _, samples = pprof_samples(self.written(name)[0])
            return set(re.findall(r"(\S+):\[", " ".join(l for _, ls in samples for l in ls)))
        self.assertIn("exported_tenant", label_keys("renamed"))
        self.assertNotIn("tenant", label_keys("renamed"))
        self.assertIn("route", label_keys("renamed"))        # no clash: untouched
        self.assertIn("tenant", label_keys("honored"))
        self.assertNotIn("exported_tenant", label_keys("honored"))

    def scripted_delta(self, path, preset, cumulative_of):
        """Two real scrapes A, B of the Go target, replayed by a scripted
        server: profd's delta must equal B - A computed here."""
        real = self.target()
        a = real.fetch(path)
        b = wait_until(lambda: (lambda r: r if self.total(r) > self.total(a) else None)(
            real.fetch(path)), "the profile to grow")
        fake = self.target(fake=True)
        fake.set(path, (200, a), (200, b))
        p = self.start(SCRAPE % job("replay", [fake.address], [preset]))
        p.wait_log(r"pprof_file: wrote ")
        self.assertEqual(p.stop(), 0)
        out = self.written(preset)
        self.assertEqual(len(out), 1, "the first scrape only primes")
        columns, got = pprof_samples(out[0])
        _, sa = pprof_samples(self._save(a))
        _, sb = pprof_samples(self._save(b))
        want = subtract(sb, sa, [cumulative_of(c) for c in columns])
        self.assertEqual(got, want)
        for values in got.values():
            self.assertTrue(all(v >= 0 for v in values))
        return columns, got, sb

    def total(self, raw):
        """The sum of every value of a raw profile."""
        return sum(sum(v) for v in pprof_samples(self._save(raw))[1].values())

    def _save(self, raw):
        path = self.path("raw-%d.pb.gz" % len(os.listdir(self.dir)))
        with open(path, "wb") as f:
            f.write(raw)
        return path

    def test_mutex_and_block_deltas_match_an_independent_computation(self):
        self.scripted_delta("/debug/pprof/mutex", "mutex", lambda c: True)

    def test_block_delta(self):
        self.scripted_delta("/debug/pprof/block", "block", lambda c: True)

    def test_memory_delta_leaves_inuse_columns_alone(self):
        columns, got, sb = self.scripted_delta("/debug/pprof/allocs", "memory",
                                               lambda c: not c.startswith("inuse_"))
        inuse = [i for i, c in enumerate(columns) if c.startswith("inuse_")]
        self.assertEqual(len(inuse), 2)
        for key, values in got.items():
            self.assertEqual([values[i] for i in inuse], [sb[key][i] for i in inuse])

    def test_restart_resets_without_negative_values(self):
        real = self.target()
        a = real.fetch("/debug/pprof/mutex")
        b = wait_until(lambda: (lambda r: r if self.total(r) > self.total(a) else None)(
            real.fetch("/debug/pprof/mutex")), "the mutex profile to grow")
        fake = self.target(fake=True)
        fake.set("/debug/pprof/mutex", (200, b), (200, a))   # counters go down: a restart
        p = self.start(SCRAPE % job("restart", [fake.address], ["mutex"]))
        p.wait_log(r"counters went down \(restart\?\)")
        p.wait_log(r"pprof_file: wrote ")
        self.assertEqual(p.stop(), 0)
        out = self.written("mutex")
        self.assertEqual(pprof_samples(out[0])[1], pprof_samples(self._save(a))[1])

    def test_server_side_deltas_are_not_applied_twice(self):
        raw = open(os.path.join(GO_CORPUS, "block.pb.gz"), "rb").read()
        fake = self.target(fake=True)
        fake.set("/debug/pprof/delta_block", (200, raw))
        p = self.start(SCRAPE % job("godelta", [fake.address], ["godeltaprof_block"]))
        p.wait_log(r"pprof_file: wrote ", count=2)
        self.assertEqual(p.stop(), 0)
        want = pprof_samples(os.path.join(GO_CORPUS, "block.pb.gz"))[1]
        for out in self.written("godeltaprof_block")[:2]:
            self.assertEqual(pprof_samples(out)[1], want)

    def test_profiles_of_deltas_reach_pyroscope_marked_so(self):
        """The memory preset's alloc_* columns are deltas made here, which a
        Pyroscope server must not make deltas again: their series say
        __delta__="false", as Alloy's do; the goroutine preset's none."""
        from test_pyroscope import stand_in
        got = []
        port = self.serve_http(stand_in(got, [200]))
        real = self.target()
        self.start(SCRAPE.replace(
            'pprof_file: {path_template: "{__name__}/{instance}/{unix_nanos}.pb.gz"}',
            'pyroscope: {endpoint: "http://127.0.0.1:%d"}' % port).replace(
            "exporters: [pprof_file]", "exporters: [pyroscope]") % job(
            "app", [real.address], ["memory", "goroutine"]))

        def marks():
            return {l["__name__"]: l.get("__delta__") for l in (
                {x.name: x.value for x in series.labels}
                for _, _, req in list(got) for series in req.series)}
        wait_until(lambda: len(marks()) == 2, "a delta of the memory profile, and a goroutine")
        self.assertEqual(marks(), {"memory": "false", "goroutine": None})

    def test_redirects_are_followed_unless_told_not_to(self):
        """As Prometheus scrapes: a target's redirect is followed, its bearer
        token not sent on to another host; with follow_redirects: false the
        scrape fails, saying the status."""
        raw = open(os.path.join(GO_CORPUS, "goroutine.pb.gz"), "rb").read()
        follows, stays, elsewhere = (self.target(fake=True) for _ in range(3))
        follows.set("/debug/pprof/goroutine",
                    (302, b"", 0, {"Location": "http://%s/moved" % elsewhere.address}))
        stays.set("/debug/pprof/goroutine", (302, b"", 0, {"Location": "/moved"}))
        for fake in (stays, elsewhere):
            fake.set("/moved", (200, raw))
        p = self.start(SCRAPE % (job("follows", [follows.address], ["goroutine"],
                                     extra="        bearer_token: s3cret\n") +
                                 job("stays", [stays.address], ["goroutine"],
                                     extra="        follow_redirects: false\n")))
        p.wait_log(r"scrape of http://%s/debug/pprof/goroutine failed: HTTP 302" % stays.address)
        wait_until(lambda: any(follows.address.replace(":", "_") in f
                               for f in self.written("goroutine")), "the redirected profile")
        self.assertEqual(p.stop(), 0)
        self.assertEqual(follows.requests[0][1].get("Authorization"), "Bearer s3cret")
        self.assertTrue(elsewhere.requests)
        self.assertEqual([h.get("Authorization") for _, h in list(elsewhere.requests)],
                         [None] * len(elsewhere.requests))
        self.assertNotIn("/moved", stays.hits)
        self.assertFalse(any(stays.address.replace(":", "_") in f
                             for f in self.written("goroutine")))

    def test_scrapes_go_through_proxy_url(self):
        """proxy_url: every scrape goes through nginx as a forward proxy,
        which adds its Via header, but for the hosts no_proxy names; so do
        those of a job with proxy_from_environment, through the proxy
        http_proxy names. A scheme no scrape can go through, or no_proxy
        without proxy_url, is a config error."""
        from harness import ForwardProxy
        proxy = ForwardProxy(self.path("proxy"))
        self.addCleanup(proxy.stop)
        fake, from_env, bypassed = (self.goroutine_target() for _ in range(3))
        config = SCRAPE % (job("proxied", [fake.address], ["goroutine"],
                               extra="        proxy_url: %s\n" % proxy.url) +
                           job("from_env", [from_env.address], ["goroutine"],
                               extra="        proxy_from_environment: true\n") +
                           job("bypassed", [bypassed.address], ["goroutine"],
                               extra="        proxy_url: %s\n        no_proxy: 10.0.0.0/8,"
                               "127.0.0.0/8\n" % proxy.url))
        p = self.start(config, wrapper=("env", "http_proxy=" + proxy.url, "no_proxy=",
                                        "NO_PROXY="))
        wait_until(lambda: fake.requests and from_env.requests and bypassed.requests,
                   "a scrape of each job")
        self.assertEqual(p.stop(), 0)
        self.assertEqual({h.get("Via") for _, h in list(fake.requests)}, {"1.1 nginx"})
        self.assertEqual({h.get("Via") for _, h in list(from_env.requests)}, {"1.1 nginx"})
        self.assertEqual({h.get("Via") for _, h in list(bypassed.requests)}, {None})
        for old, new, says in [
                ("proxy_url: %s\n" % proxy.url, "proxy_url: ftp://127.0.0.1:1\n",
                 "job 'proxied': proxy_url 'ftp://127.0.0.1:1' is not http://, https:// or "
                 "socks5://"),
                ("proxy_from_environment: true\n",
                 "proxy_from_environment: true\n        no_proxy: 127.0.0.1\n",
                 "job 'from_env': no_proxy needs proxy_url")]:
            self.assert_config_refused(config.replace(old, new, 1), says)

    def test_proxy_connect_header_goes_to_the_proxy_with_its_connect(self):
        """proxy_connect_header goes to the proxy with the CONNECT that
        opens a tunnel to an https target: tinyproxy, asking for basic
        auth, lets the scrape through with it (its Proxy-Authorization)
        and refuses the job without it (407), which fails saying so. Not
        to the target. A header with no proxy to go to is a config
        error."""
        import base64
        from harness import TunnelProxy
        ca, cert, key = make_test_certs(self.dir)
        fake = self.goroutine_target(tls=(cert, key))
        proxy = TunnelProxy(self.path("proxy"), "agent", "s3cret")
        self.addCleanup(proxy.stop)
        through = "        scheme: https\n        tls_config: {ca_file: %s}\n" \
                  "        proxy_url: %s\n" % (ca, proxy.url)
        header = ("        proxy_connect_header: {Proxy-Authorization: ['Basic %s']}\n"
                  % base64.b64encode(b"agent:s3cret").decode())
        config = (SCRAPE % (job("let", [fake.address], ["goroutine"], extra=through + header) +
                            job("refused", [fake.address], ["goroutine"], extra=through))
                  ).replace("{__name__}/{instance}", "{job}/{instance}")
        p = self.start(config)
        p.wait_log(r"pprof_file: wrote \./profiles/let/")
        p.wait_log(r"scrape of https://%s/debug/pprof/goroutine failed: the proxy refused the "
                   r"tunnel: HTTP 407" % re.escape(fake.address))
        self.assertEqual(p.stop(), 0)
        self.assertEqual(self.written("refused"), [])
        self.assertEqual({h.get("Proxy-Authorization") for _, h in list(fake.requests)}, {None})
        self.assertNotIn("s3cret", p.log_text())
        self.assert_config_refused(
            config.replace("        proxy_url: %s\n" % proxy.url, ""),
            "job 'let': proxy_connect_header needs proxy_url or proxy_from_environment")
        self.assert_config_refused(
            config.replace("{Proxy-Authorization:", "{'Proxy Authorization':"),
            "job 'let': proxy_connect_header: 'Proxy Authorization': not a header name")

    def test_compression_asked_for_and_a_jobs_own_body_size_limit(self):
        """enable_compression: false asks for identity, else libcurl's
        encodings are offered; a body over a job's body_size_limit fails
        that job's scrape saying so, the other job's goes on."""
        fake = self.goroutine_target()   # 1474 bytes
        config = SCRAPE % (
            job("plain", [fake.address], ["goroutine"], extra="        enable_compression: false\n")
            + job("small", [fake.address], ["goroutine"], extra="        body_size_limit: 1KiB\n"))
        p = self.start(config.replace("{__name__}/{instance}", "{job}/{instance}"))
        p.wait_log(r"pprof_file: wrote \./profiles/plain/")
        p.wait_log(r"scrape of http://%s/debug/pprof/goroutine failed: body larger than 1024 "
                   r"bytes \(body_size_limit, max_body_size\)" % re.escape(fake.address))
        self.assertEqual(p.stop(), 0)
        self.assertEqual(self.written("small"), [])
        offered = {h.get("Accept-Encoding") for _, h in list(fake.requests)}
        self.assertIn("identity", offered)
        self.assertTrue(any(e and "gzip" in e for e in offered), offered)

    def test_bad_targets_are_down_with_a_reason_and_others_unaffected(self):
        bad = self.target(fake=True)
        good = self.target(fake=True)
        goroutine = open(os.path.join(GO_CORPUS, "goroutine.pb.gz"), "rb").read()
        heap = open(os.path.join(GO_CORPUS, "heap.pb.gz"), "rb").read()
        bad.set("/debug/pprof/profile", (404, b"not found"))
        bad.set("/debug/pprof/allocs", (500, b"boom"))
        bad.set("/debug/pprof/goroutine", (200, b"<html><body>login</body></html>"))
        bad.set("/debug/pprof/mutex", (200, heap[:len(heap) // 2]))
        bad.set("/debug/pprof/block", (200, goroutine))
        bad.set("/debug/pprof/threadcreate", (200, gzip.compress(b"\0" * 4096)))
        good.set("/debug/pprof/goroutine", (200, goroutine))
        slow = self.target(fake=True)
        slow.set("/debug/pprof/goroutine", (200, goroutine, 3))
        presets = ["process_cpu", "memory", "goroutine", "mutex", "block", "threadcreate",
                   "fgprof"]
        cfg = SCRAPE % (job("bad", [bad.address, good.address], presets) +
                        job("slow", [slow.address], ["goroutine"],
                            extra="        scrape_timeout: 300ms\n"))
        cfg = cfg.replace("    scrape_configs:", "    max_body_size: 3KiB\n    scrape_configs:")
        p = self.start(cfg)
        base = "scrape of http://%s/debug/pprof/" % bad.address
        p.wait_log(re.escape(base + "profile?seconds=1 failed: HTTP 404"))
        p.wait_log(re.escape(base + "allocs failed: HTTP 500"))
        p.wait_log(re.escape(base + "goroutine failed: pprof: ") + ".* at byte")
        p.wait_log(re.escape(base + "mutex failed: gzip: "))
        p.wait_log(re.escape(base + "block failed: not a block profile: it has no 'contentions'"))
        p.wait_log(re.escape(base + "threadcreate failed: gzip: decompressed size exceeds"))
        p.wait_log(re.escape("scrape of http://%s/debug/fgprof" % bad.address) + r"\S* failed")
        p.wait_log(re.escape("scrape of http://%s/debug/pprof/goroutine failed: Timeout" %
                             slow.address))
        p.wait_log(r"wrote \./profiles/goroutine/%s/" % dir_of(good.address))
        m = p.metrics()
        for preset in presets:
            self.assertEqual(metric_value(m, "profd_scrape_up", component="pprof_scrape",
                                          job="bad", instance=bad.address, profile=preset), 0)
        self.assertEqual(metric_value(m, "profd_scrape_up", component="pprof_scrape", job="bad",
                                      instance=good.address, profile="goroutine"), 1)
        self.assertEqual(self.written("goroutine")[0].split("/")[-2], good.address.replace(":", "_"))
        self.assertEqual(p.stop(), 0, p.log_text()[-4000:])

    def test_scrapes_spread_over_the_interval_on_a_grid(self):
        # 40 closed loopback ports: every first scrape fails at once and is
        # logged with its time; the pairs' offsets are fixed by their names
        targets = ", ".join('"127.0.0.1:%d"' % port for port in range(1, 41))
        p = self.start("""
receivers:
  pprof_scrape:
    scrape_configs:
      - job_name: spread
        scrape_interval: 2s
        static_configs: [{targets: [%s]}]
        profiling_config: {presets: [goroutine]}
exporters: {nop: {}}
service:
  telemetry: {metrics: {address: ""}}
  pipelines: {profiles: {receivers: [pprof_scrape], exporters: [nop]}}
""" % targets)
        lines = p.wait_log(r"warn  pprof_scrape: scrape of .* failed:", count=40)
        ms = sorted(int(l[11:13]) * 3600000 + int(l[14:16]) * 60000 + int(l[17:19]) * 1000 +
                    int(l[20:23]) for l in lines[:40])
        self.assertGreater(ms[-1] - ms[0], 1000)   # spread over the 2 s interval, not a burst
        starts = [t for i, t in enumerate(ms) if i == 0 or t - ms[i - 1] > 20]
        self.assertLess(len(starts), 40)   # some pairs share a slot, started in one wake-up
        if not os.environ.get("PROFD_SANITIZED"):   # slots start on a 50 ms grid
            # (within 20 ms: a loaded machine logs a failure 16 ms late at times;
            # starts off the grid would be up to 25 ms away from it)
            for t in starts:
                self.assertLess(min((t - starts[0]) % 50, 50 - (t - starts[0]) % 50), 20, ms)
        self.assertEqual(p.stop(), 0)

    def test_a_targets_profiles_are_scraped_one_slot_apart(self):
        # A closed loopback port: each scrape fails at once and is logged
        # with its time. The target has one slot in the interval, its
        # profiles the slots after it, 50 ms apart, in the order listed, so
        # that they take turns on one connection.
        p = self.start("""
receivers:
  pprof_scrape:
    scrape_configs:
      - job_name: turns
        scrape_interval: 5s
        static_configs: [{targets: ["127.0.0.1:9"]}]
        profiling_config: {presets: [goroutine, memory, block]}
exporters: {nop: {}}
service:
  telemetry: {metrics: {address: ""}}
  pipelines: {profiles: {receivers: [pprof_scrape], exporters: [nop]}}
""")
        lines = p.wait_log(r"warn  pprof_scrape: scrape of .* failed:", count=3)
        ms = [int(l[11:13]) * 3600000 + int(l[14:16]) * 60000 + int(l[17:19]) * 1000 +
              int(l[20:23]) for l in lines[:3]]
        order = [re.search(r"/debug/pprof/(\w+)", l).group(1) for l in lines[:3]]
        self.assertEqual(order, ["goroutine", "allocs", "block"], lines)
        if not os.environ.get("PROFD_SANITIZED"):   # (a loaded machine logs some late)
            for a, b in zip(ms, ms[1:]):
                self.assertLess(abs(b - a - 50), 35, ms)
        self.assertEqual(p.stop(), 0)

    def test_file_sd_change_is_picked_up(self):
        one, two = self.target(fake=True), self.target(fake=True)
        raw = open(os.path.join(GO_CORPUS, "goroutine.pb.gz"), "rb").read()
        for t in (one, two):
            t.set("/debug/pprof/goroutine", (200, raw))
        sd = self.path("targets.json")
        with open(sd, "w") as f:
            f.write('[{"targets": ["%s"], "labels": {"team": "a"}}]' % one.address)
        cfg = SCRAPE % ("      - job_name: sd\n        scrape_interval: 1s\n"
                        "        file_sd_configs: [{files: [%s], refresh_interval: 100ms}]\n"
                        "        profiling_config: {presets: [goroutine]}\n" % sd)
        p = self.start(cfg)
        p.wait_log(r"wrote \./profiles/goroutine/%s/" % dir_of(one.address))
        mark = p.mark()
        with open(sd + ".tmp", "w") as f:
            f.write("- targets: ['%s']\n  labels: {team: b}\n" % two.address)
        os.rename(sd + ".tmp", sd)
        p.wait_log(r"1 scrape target\(s\) x profile\(s\); 1 removed", start=mark)
        p.wait_log(r"wrote \./profiles/goroutine/%s/" % dir_of(two.address), start=mark)
        self.assertEqual(p.stop(), 0)

    def test_sharding_covers_every_target_exactly_once(self):
        addresses = ["127.0.0.1:%d" % port for port in range(1, 11)]   # nothing listens there
        shard = ("      - job_name: fleet\n        scrape_interval: 1s\n"
                 "        static_configs: [{targets: [%s]}]\n"
                 "        profiling_config: {presets: [goroutine]}\n"
                 "        shard: {total: 2, index: %d}\n")
        targets = ", ".join('"%s"' % a for a in addresses)
        cfg = ("receivers:\n  pprof_scrape/a:\n    scrape_configs:\n%s"
               "  pprof_scrape/b:\n    scrape_configs:\n%s"
               "exporters: {debug: {}}\n"
               "service: {telemetry: {metrics: {address: \"127.0.0.1:0\"}},\n"
               "  pipelines: {profiles: {receivers: [pprof_scrape/a, pprof_scrape/b],"
               " exporters: [debug]}}}\n") % (shard % (targets, 0), shard % (targets, 1))
        p = self.start(cfg)
        lines = p.wait_log(r"pprof_scrape/[ab]: scrape of .* failed", count=10)
        seen = {"a": set(), "b": set()}
        for line in lines:
            m = re.search(r"pprof_scrape/([ab]): scrape of http://([0-9.:]+)/", line)
            seen[m.group(1)].add(m.group(2))
        self.assertEqual(seen["a"] | seen["b"], set(addresses))
        self.assertEqual(seen["a"] & seen["b"], set())
        for addr in addresses:   # Prometheus's hashmod, computed independently
            digest = hashlib.md5(addr.encode()).digest()
            want = "a" if int.from_bytes(digest[8:], "big") % 2 == 0 else "b"
            self.assertIn(addr, seen[want])
        self.assertEqual(p.stop(), 0)

    def rotate_secret(self, path, value, fake, authorization):
        """Replaces the secret in file path with value, as a rotated service
        account token is, and waits until fake is sent that Authorization."""
        with open(path + ".new", "w") as f:
            f.write(value + "\n")
        os.utime(path + ".new", (1, 1))   # a different mtime, whatever the clock says
        os.rename(path + ".new", path)
        wait_until(lambda: any(h.get("Authorization") == authorization
                               for _, h in list(fake.requests)), authorization + " in use")

    def test_auth_prefix_params_and_custom_profiles(self):
        fake = self.target(fake=True)
        heap = open(os.path.join(GO_CORPUS, "heap.pb.gz"), "rb").read()
        fake.set("/app/debug/pprof/heap", (200, heap))
        token = self.path("token")
        with open(token, "w") as f:
            f.write("s3cret\n")
        extra = ("        bearer_token_file: %s\n"
                 "        params: {debug: '0', gc: '1'}\n"
                 "        relabel_configs:\n"
                 "          - {source_labels: [__address__], target_label: host, regex: '([^:]+):.*'}\n"
                 "          - {target_label: __param_tenant, replacement: blue}\n") % token
        cfg = SCRAPE % job("custom", [fake.address], [], extra=extra)
        cfg = cfg.replace("profiling_config: {presets: []}",
                          "profiling_config:\n"
                          "          presets: []\n"
                          "          path_prefix: /app\n"
                          "          custom: [{name: inuse, path: /debug/pprof/heap,"
                          " keep_sample_types: [inuse_space]}]")
        p = self.start(cfg)
        p.wait_log(r"pprof_file: wrote \./profiles/inuse/")
        self.rotate_secret(token, "rotated", fake, "Bearer rotated")
        self.assertEqual(p.stop(), 0)
        path, headers = fake.requests[0]
        self.assertEqual(headers.get("Authorization"), "Bearer s3cret")
        self.assertTrue(path.startswith("/app/debug/pprof/heap?"), path)
        self.assertEqual(sorted(path.split("?")[1].split("&")), ["debug=0", "gc=1", "tenant=blue"])
        columns, samples = pprof_samples(self.written("inuse")[0])
        self.assertEqual(columns, ["inuse_space/bytes"])
        want_cols, want = pprof_samples(os.path.join(GO_CORPUS, "heap.pb.gz"))
        i = want_cols.index("inuse_space/bytes")
        self.assertEqual({k: [v[i]] for k, v in want.items() if v[i]},
                         {k: v for k, v in samples.items() if v[0]})

    def test_basic_auth(self):
        fake = self.goroutine_target()
        extra = "        basic_auth: {username: ops, password: pw}\n"
        p = self.start(SCRAPE % job("basic", [fake.address], ["goroutine"], extra=extra))
        p.wait_log(r"pprof_file: wrote ")
        self.assertEqual(p.stop(), 0)
        import base64
        self.assertEqual(fake.requests[0][1].get("Authorization"),
                         "Basic " + base64.b64encode(b"ops:pw").decode())
        self.assertNotIn("pw", p.log_text())   # secrets never logged

    def test_authorization_as_prometheus_writes_it(self):
        """authorization: {type, credentials_file} sends "Authorization:
        <type> <credentials>", the file read again once it changes, and one
        gone named with the target's refusal; two ways
        of credentials in one job, a Basic type, or credentials given twice
        are config errors that say so."""
        fake = self.goroutine_target()
        creds = self.path("creds")
        with open(creds, "w") as f:
            f.write("k1\n")
        config = SCRAPE % job("authz", [fake.address], ["goroutine"],
                              extra="        authorization: {type: ApiKey, credentials_file: %s}\n"
                              % creds)
        p = self.start(config)
        wait_until(lambda: fake.requests, "a scrape")
        self.rotate_secret(creds, "k2", fake, "ApiKey k2")
        os.unlink(creds)   # gone: an empty secret, which the target refuses
        fake.set("/debug/pprof/goroutine", (401, b"unauthorized\n"))
        p.wait_log(r"scrape of http://%s/debug/pprof/goroutine failed: HTTP 401 \(%s could not "
                   r"be read\)" % (re.escape(fake.address), re.escape(creds)))
        self.assertEqual(p.stop(), 0)
        self.assertEqual(fake.requests[0][1].get("Authorization"), "ApiKey k1")
        self.assertNotIn("k1", p.log_text())   # secrets never logged
        authz = "authorization: {type: ApiKey, credentials_file: %s}" % creds
        for new, says in [
                (authz + "\n        bearer_token: t",
                 "at most one of bearer_token (or bearer_token_file), authorization, basic_auth "
                 "and oauth2 may be set"),
                (authz + "\n        oauth2: {client_id: a, token_url: 'http://127.0.0.1:1/'}",
                 "at most one of bearer_token (or bearer_token_file), authorization, basic_auth "
                 "and oauth2 may be set"),
                ("oauth2: {client_id: a}", "oauth2 needs client_id and token_url"),
                ("authorization: {type: basic, credentials: x}",
                 "authorization type cannot be Basic: use basic_auth"),
                (authz.replace("}", ", credentials: x}"),
                 "authorization's credentials and credentials_file cannot both be set")]:
            self.assert_config_refused(config.replace(authz, new), "job 'authz': " + says)

    def test_http_headers_as_prometheus_gives_them(self):
        """http_headers: each value, secret and file (read at every scrape,
        white space around it trimmed) goes as a line of its header, in
        that order; a file gone fails the scrape, saying which. A name
        profd sets itself, one given twice, no header name, or a value
        with a line break are config errors that say so."""
        fake = self.goroutine_target()
        tenant = self.path("tenant")
        with open(tenant, "w") as f:
            f.write("  team-a \n")
        headers = ("        http_headers:\n"
                   "          X-Scope-OrgID: {files: [%s]}\n"
                   "          X-Multi: {values: [a, ''], secrets: [s3cret]}\n" % tenant)
        config = SCRAPE % job("hdr", [fake.address], ["goroutine"], extra=headers)
        p = self.start(config)
        wait_until(lambda: fake.requests, "a scrape")
        sent = fake.requests[0][1]
        self.assertEqual(sent.get_all("X-Multi"), ["a", "", "s3cret"])
        self.assertEqual(sent.get_all("X-Scope-OrgID"), ["team-a"])
        with open(tenant + ".new", "w") as f:
            f.write("team-b")
        os.rename(tenant + ".new", tenant)
        wait_until(lambda: any(h.get("X-Scope-OrgID") == "team-b"
                               for _, h in list(fake.requests)), "the file read again")
        os.unlink(tenant)
        p.wait_log(r"scrape of http://%s/debug/pprof/goroutine failed: http_headers: "
                   r"'X-Scope-OrgID': cannot read %s" % (re.escape(fake.address),
                                                          re.escape(tenant)))
        self.assertEqual(p.stop(), 0)
        self.assertNotIn("s3cret", p.log_text())   # secrets never logged
        for new, says in [
                ("authorization: {values: [x]}",
                 "'authorization': one profd sets itself, or that changes the connection"),
                ("Host: {values: [x]}", "'Host': one profd sets itself"),
                ("x-multi: {values: [b]}", "'X-Multi': given twice"),
                ("'Bad Name': {values: [x]}", "'Bad Name': not a header name"),
                ('X-Two: {values: ["a\\r\\nX-Evil: b"]}', "'X-Two': a value holds a line break")]:
            self.assert_config_refused(
                config.replace("          X-Scope-OrgID:",
                               "          %s\n          X-Scope-OrgID:" % new),
                "job 'hdr': http_headers: " + says)

    def test_an_oauth2_blocks_own_tls_and_proxy_go_to_its_token_url(self):
        """oauth2's own tls_config (a private CA the job's target does not
        need) and proxy, as Prometheus takes them: the token comes over
        HTTPS through the proxy the oauth2 block names (tinyproxy, which
        asks the CONNECT for the block's proxy_connect_header), and the
        scrapes go with it straight to the target."""
        import base64
        from harness import TunnelProxy
        ca, cert, key = make_test_certs(self.dir)
        token_url, tokens = self.token_endpoint([(200, {"access_token": "tok7",
                                                        "expires_in": 3600})], tls=(cert, key))
        proxy = TunnelProxy(self.path("proxy"), "agent", "s3cret")
        self.addCleanup(proxy.stop)
        fake = self.goroutine_target()
        auth = base64.b64encode(b"agent:s3cret").decode()
        p = self.start(SCRAPE % job("tok", [fake.address], ["goroutine"], extra=(
            "        oauth2: {client_id: c, client_secret: s, token_url: '%s',\n"
            "                 tls_config: {ca_file: %s}, proxy_url: '%s',\n"
            "                 proxy_connect_header: {Proxy-Authorization: ['Basic %s']}}\n"
            % (token_url, ca, proxy.url, auth))))
        wait_until(lambda: fake.requests, "a scrape")
        self.assertEqual(p.stop(), 0)
        self.assertEqual(fake.requests[0][1].get("Authorization"), "Bearer tok7")
        self.assertEqual(fake.requests[0][1].get("Proxy-Authorization"), None)
        self.assertEqual(len(tokens), 1)
        self.assertEqual(proxy.connects(), [token_url.split("/")[2]])

    def test_oauth2_tokens_are_fetched_on_the_loop_without_stopping_it(self):
        """oauth2: the token fetched from token_url with the client's
        credentials, scopes and endpoint_params, sent as "Bearer <token>",
        fetched again when near its end. While the token endpoint takes its
        time, the job's scrapes wait and every other scrape goes on. A
        token endpoint that refuses fails the job's scrapes, saying why,
        and its targets get no request."""
        import base64
        import threading
        goroutine = (200, open(os.path.join(GO_CORPUS, "goroutine.pb.gz"), "rb").read())
        guarded, plain, refused = (self.target(fake=True) for _ in range(3))
        for t in (guarded, plain, refused):
            t.set("/debug/pprof/goroutine", goroutine)
        hold = threading.Event()
        token_url, tokens = self.token_endpoint([
            (200, {"access_token": "tok1", "expires_in": 5}),   # due again at once
            (200, {"access_token": "tok2", "expires_in": 3600})], hold=hold)
        refusing, _ = self.token_endpoint([(400, {"error": "invalid_client"})])
        oauth2 = ("        oauth2: {client_id: scraper, client_secret: s3cret, token_url: '%s', "
                  "scopes: [pprof], endpoint_params: {audience: targets}}\n")
        p = self.start(SCRAPE % (job("guarded", [guarded.address], ["goroutine"],
                                     extra=oauth2 % token_url) +
                                 job("plain", [plain.address], ["goroutine"]) +
                                 job("refused", [refused.address], ["goroutine"],
                                     extra=oauth2 % refusing)))
        wait_until(lambda: tokens, "a token fetch")
        wait_until(lambda: len(plain.requests) >= 2, "plain scrapes while the token is held")
        self.assertEqual(guarded.requests, [])   # it waits for its token
        hold.set()
        wait_until(lambda: len(guarded.requests) >= 3, "three guarded scrapes")
        p.wait_log(r"scrape of http://%s/debug/pprof/goroutine failed: token from %s: HTTP "
                   r"status 400: \{\"error\": \"invalid_client\"\}"
                   % (re.escape(refused.address), re.escape(refusing)))
        m = p.metrics()
        self.assertEqual(p.stop(), 0)
        sent = [h.get("Authorization") for _, h in guarded.requests]
        self.assertEqual(sent[0], "Bearer tok1")
        self.assertEqual(set(sent[1:]), {"Bearer tok2"})
        self.assertEqual(len(tokens), 2)   # tok2 kept
        self.assertEqual(tokens[0], ("Basic " + base64.b64encode(b"scraper:s3cret").decode(),
                                     {"grant_type": ["client_credentials"], "scope": ["pprof"],
                                      "audience": ["targets"]}))
        self.assertEqual(refused.requests, [])
        self.assertEqual(metric_value(m, "profd_scrape_up", component="pprof_scrape",
                                      job="refused", instance=refused.address,
                                      profile="goroutine"), 0)
        self.assertNotIn("s3cret", p.log_text())

    def test_http2_with_targets_that_offer_it_unless_turned_off(self):
        """An https target that offers HTTP/2 (nginx, ALPN) is scraped over
        it, as Prometheus does; enable_http2: false keeps a job to
        HTTP/1.1."""
        import subprocess
        from harness import serve_on_free_port
        ca, cert, key = make_test_certs(self.dir)
        site = self.path("site")
        os.makedirs(os.path.join(site, "root", "debug", "pprof"))
        with open(os.path.join(site, "root", "debug", "pprof", "goroutine"), "wb") as f:
            f.write(open(os.path.join(GO_CORPUS, "goroutine.pb.gz"), "rb").read())
        conf = os.path.join(site, "nginx.conf")

        def start(port):
            with open(conf, "w") as f:
                f.write("worker_processes 1; error_log %(d)s/error.log warn; pid %(d)s/nginx.pid;\n"
                        "events { worker_connections 64; }\n"
                        "http { log_format proto '$server_protocol $request_uri';\n"
                        "  access_log %(d)s/access.log proto;\n"
                        "  server { listen 127.0.0.1:%(port)d ssl http2;\n"
                        "    ssl_certificate %(cert)s; ssl_certificate_key %(key)s;\n"
                        "    root %(d)s/root; } }\n" % {"d": site, "port": port, "cert": cert,
                                                        "key": key})
            return subprocess.Popen(["nginx", "-c", conf, "-p", site, "-g", "daemon off;"],
                                    stderr=subprocess.PIPE)
        nginx, port = serve_on_free_port(start)

        def stop():
            nginx.terminate()
            nginx.wait(timeout=30)
            nginx.stderr.close()
        self.addCleanup(stop)
        target = "127.0.0.1:%d" % port
        tls = "        scheme: https\n        tls_config: {ca_file: %s}\n" % ca
        p = self.start(SCRAPE % (
            job("h2", [target], ["goroutine"], extra=tls + "        params: {via: h2}\n") +
            job("h1", [target], ["goroutine"],
                extra=tls + "        params: {via: h1}\n        enable_http2: false\n")))
        log = os.path.join(site, "access.log")

        def lines():
            return open(log).read().splitlines() if os.path.exists(log) else []
        wait_until(lambda: {l.split("via=")[-1] for l in lines()} >= {"h1", "h2"},
                   "a scrape of each job")
        self.assertEqual(p.stop(), 0)
        protocols = {l.split("via=")[-1]: l.split()[0] for l in lines()}
        self.assertEqual(protocols, {"h2": "HTTP/2.0", "h1": "HTTP/1.1"})

    def test_tls_server_name_and_versions(self):
        """tls_config.server_name is the name the handshake asks for and the
        certificate is checked against, the connection still to the
        target's address; min_version and max_version bound the TLS
        versions, a server outside them failing the scrape."""
        ca, _, _ = make_test_certs(self.dir)
        cert = sign_test_cert(self.dir, "named", "pprof.example", "subjectAltName=DNS:pprof.example")
        goroutine = (200, open(os.path.join(GO_CORPUS, "goroutine.pb.gz"), "rb").read())
        only = {}
        for version in ("TLSv1_2", "TLSv1_3"):
            only[version] = FakeTarget(tls=cert, tls_versions=(version, version))
            only[version].set("/debug/pprof/goroutine", goroutine)
            self.targets.append(only[version])
        named = "ca_file: %s, server_name: pprof.example" % ca
        jobs = {"named": (only["TLSv1_3"], named, 1),
                "unnamed": (only["TLSv1_3"], "ca_file: %s" % ca, 0),
                "max12": (only["TLSv1_3"], named + ", max_version: TLS12", 0),
                "min13": (only["TLSv1_2"], named + ", min_version: TLS13", 0),
                "at12": (only["TLSv1_2"], named + ", max_version: TLS12", 1)}
        p = self.start(SCRAPE % "".join(
            job(name, [t.address], ["goroutine"],
                extra="        scheme: https\n        tls_config: {%s}\n" % tls)
            for name, (t, tls, _) in jobs.items()))

        def up():
            m = p.metrics()
            return {name: metric_value(m, "profd_scrape_up", component="pprof_scrape", job=name,
                                       instance=t.address, profile="goroutine")
                    for name, (t, _, _) in jobs.items()}
        wait_until(lambda: None not in up().values(), "every job's first scrape")
        self.assertEqual(up(), {name: want for name, (_, _, want) in jobs.items()})
        self.assertIn("pprof.example", only["TLSv1_3"].sni)
        self.assertEqual(set(only["TLSv1_2"].sni), {"pprof.example"})
        self.assertEqual(p.stop(), 0)
        for tls, says in [("min_version: TLS14", "unknown TLS version 'TLS14'"),
                          ("min_version: TLS13, max_version: TLS12",
                           "min_version TLS13 is above max_version TLS12"),
                          ("server_name: 'pprof.example:443'",
                           "server_name 'pprof.example:443' is not a host name")]:
            self.assert_config_refused(
                SCRAPE % job("bad", ["127.0.0.1:1"], ["goroutine"],
                             extra="        tls_config: {%s}\n" % tls), "job 'bad': " + says)

    def test_https_with_a_private_ca_and_insecure_skip_verify(self):
        ca, cert, key = make_test_certs(self.dir)
        fake = self.goroutine_target(tls=(cert, key))
        jobs = (job("trusted", [fake.address], ["goroutine"],
                    extra="        scheme: https\n        tls_config: {ca_file: %s}\n" % ca) +
                job("untrusted", [fake.address], ["goroutine"],
                    extra="        scheme: https\n") +
                job("skip", [fake.address], ["goroutine"],
                    extra="        scheme: https\n        tls_config: {insecure_skip_verify: true}\n"))
        p = self.start((SCRAPE % jobs).replace('{__name__}/{instance}', '{job}/{instance}'))
        p.wait_log(r"pprof_file: wrote \./profiles/trusted/")
        p.wait_log(r"pprof_file: wrote \./profiles/skip/")
        p.wait_log(r"scrape of https://%s/debug/pprof/goroutine failed: (SSL|Peer)" %
                   re.escape(fake.address))
        self.assertEqual(self.written("untrusted"), [])
        self.assertEqual(p.stop(), 0)
