# SPDX-License-Identifier: Apache-2.0
"""The pprof_scrape receiver's http_sd_configs: target groups a Python HTTP
server answers as Prometheus's HTTP service discovery documents them (a
JSON list of {targets, labels}, application/json, 200), asked again every
refresh_interval; what the endpoint was sent, what profd does with each
kind of bad answer, and scrapes of the targets (scripted servers
answering the corpus's goroutine profile) following the list."""
import base64
import json
import os
import re
import shutil
import unittest

from harness import (GO_CORPUS, FakeTarget, ProfdTestCase, metric_value, valgrind, wait_until)

CONFIG = """
receivers:
  pprof_scrape:
    scrape_configs:
      - job_name: fleet
        scrape_interval: 1s
        http_sd_configs:
          - {url: "%(url)s", refresh_interval: 200ms%(auth)s}
        profiling_config: {presets: [goroutine]}
        relabel_configs:
          - {source_labels: [__meta_url], regex: 'http://127\\.0\\.0\\.1:\\d+/(.*)',
             target_label: sd, replacement: '$1'}
exporters:
  pprof_file: {path_template: "{sd}/{team}/{instance}/{unix_nanos}.pb.gz"}
service:
  telemetry: {metrics: {address: "127.0.0.1:0"}}
  pipelines:
    profiles: {receivers: [pprof_scrape], exporters: [pprof_file]}
"""

JSON = {"Content-Type": "application/json"}


def groups(*pairs):
    """A JSON answer of one target group per (target, team) pair."""
    return json.dumps([{"targets": [t.address], "labels": {"team": team}}
                       for t, team in pairs]).encode()


class ScrapeHttpSdTest(ProfdTestCase):

    def server(self):
        """A scripted loopback server (answers set per path), stopped after the test."""
        t = FakeTarget()
        self.addCleanup(t.stop)
        return t

    def goroutine_target(self):
        t = self.server()
        t.set("/debug/pprof/goroutine",
              (200, open(os.path.join(GO_CORPUS, "goroutine.pb.gz"), "rb").read()))
        return t

    def files(self, team, target):
        d = self.path("profiles", "targets", team, target.address.replace(":", "_"))
        return os.listdir(d) if os.path.isdir(d) else []

    def sd_requests(self, sd):
        with sd.lock:
            return [headers for path, headers in sd.requests if path == "/targets"]

    def test_the_listed_targets_are_scraped_and_follow_the_list(self):
        web, db = self.goroutine_target(), self.goroutine_target()
        sd = self.server()
        sd.set("/targets", (200, groups((web, "web")), 0, JSON))
        url = "http://%s/targets" % sd.address
        p = self.start(CONFIG % {"url": url, "auth": ", bearer_token: sdtok"})
        wait_until(lambda: self.files("web", web), "web's goroutines, labeled from the list")
        first = self.sd_requests(sd)[0]
        self.assertEqual(first["Accept"], "application/json")
        self.assertEqual(first["X-Prometheus-Refresh-Interval-Seconds"], "0.2")
        self.assertEqual(first["Authorization"], "Bearer sdtok")
        self.assertEqual(first["User-Agent"], "profd")
        # The list changes: db comes, web goes.
        mark = p.mark()
        sd.set("/targets", (200, groups((db, "db")), 0, JSON))
        wait_until(lambda: self.files("db", db), "db's goroutines")
        p.wait_log(r"1 scrape target\(s\) x profile\(s\); 1 removed", start=mark)
        hits = lambda t: t.hits.get("/debug/pprof/goroutine", 0)
        for _ in range(2):   # web's last scrape, if one was under way, over
            db_hits = hits(db)
            wait_until(lambda: hits(db) >= db_hits + 2, "two more scrapes of db")
            web_hits = hits(web)
        self.assertEqual(hits(web), web_hits)   # no longer scraped
        self.assertEqual(metric_value(p.metrics(), "profd_scrape_up", component="pprof_scrape",
                                      job="fleet", instance=db.address, profile="goroutine"), 1)
        self.assertEqual(p.stop(), 0)

    def test_an_answer_escaping_characters_beyond_the_bmp_as_python_does(self):
        """Python's json writes an emoji as a surrogate pair escape
        (\\ud83d\\ude00), which YAML has no such escape for: read as JSON
        reads it, the label holds the emoji."""
        web = self.goroutine_target()
        sd = self.server()
        answer = groups((web, "web\U0001F600"))
        self.assertIn(b"\\ud83d\\ude00", answer)
        sd.set("/targets", (200, answer, 0, JSON))
        # the path's label is made ASCII: a rule names the exact value
        p = self.start((CONFIG % {"url": "http://%s/targets" % sd.address, "auth": ""}).replace(
            "relabel_configs:\n", "relabel_configs:\n          - {source_labels: [team], regex: "
            "'web\U0001F600', target_label: team, replacement: emoji}\n"))
        wait_until(lambda: self.files("emoji", web), "web's goroutines, labeled")
        self.assertEqual(p.stop(), 0)

    def test_a_bad_answer_is_said_and_counted_and_the_targets_stay(self):
        web = self.goroutine_target()
        sd = self.server()
        good = (200, groups((web, "web")), 0, JSON)
        bad = [(500, b"overloaded\n", 0, {"Content-Type": "text/plain"}),
               (200, b"[]", 0, {"Content-Type": "text/plain"}),
               (200, b'{"targets": ["a:1"]}', 0, JSON),
               (200, b"", 0, JSON),
               (200, b'[{"targets": "a:1"}]', 0, JSON),
               (200, b"[{", 0, JSON)]
        sd.set("/targets", good, *bad, good)
        url = "http://%s/targets" % sd.address
        p = self.start(CONFIG % {"url": url, "auth": ""})
        says = [r"HTTP status 500: overloaded",
                r"the answer's Content-Type is \"text/plain\", not application/json",
                r"the answer is not a JSON list of target groups: \"\{\"targets\": \[\"a:1\"\]\}\"",
                r"the answer is not a JSON list of target groups: \"\"",
                r"the answer:1:14: targets must be a list",
                r"the answer:2:1: "]
        for why in says:
            p.wait_log(r"job 'fleet': http_sd_configs %s: %s.*; keeping its 1 target group\(s\)"
                       % (re.escape(url), why))
        failures = lambda: metric_value(p.metrics(), "profd_scrape_http_sd_failures",
                                        component="pprof_scrape", job="fleet")
        wait_until(lambda: failures() == len(bad), "every bad answer counted: %s" % failures())
        before = len(self.files("web", web))
        wait_until(lambda: len(self.files("web", web)) > before, "web scraped still")
        # The list was made at start and once from the first answer; the
        # bad answers and the good one again changed nothing.
        self.assertEqual(re.findall(r"(\d+) scrape target\(s\) x profile\(s\); (\d+) removed",
                                    p.log_text()), [("0", "0"), ("1", "0")])
        self.assertEqual(p.stop(), 0)

    def test_http_headers_go_with_each_request_of_the_list(self):
        """http_headers: values and files (read for each request) go with
        every request of the list; a file gone fails the request, said and
        counted, the targets kept."""
        web = self.goroutine_target()
        sd = self.server()
        sd.set("/targets", (200, groups((web, "web")), 0, JSON))
        key = self.path("key")
        with open(key, "w") as f:
            f.write("k1\n")
        url = "http://%s/targets" % sd.address
        p = self.start(CONFIG % {"url": url, "auth": ", http_headers: {X-Fleet: {values: [a, b]}, "
                                 "X-Key: {files: [%s]}}" % key})
        wait_until(lambda: self.files("web", web), "web's goroutines")
        first = self.sd_requests(sd)[0]
        self.assertEqual((first.get_all("X-Fleet"), first.get_all("X-Key")), (["a", "b"], ["k1"]))
        os.unlink(key)
        p.wait_log(r"job 'fleet': http_sd_configs %s: http_headers: 'X-Key': cannot read %s; "
                   r"keeping its 1 target group\(s\)" % (re.escape(url), re.escape(key)))
        self.assertGreaterEqual(metric_value(p.metrics(), "profd_scrape_http_sd_failures",
                                             component="pprof_scrape", job="fleet"), 1)
        before = len(self.files("web", web))
        wait_until(lambda: len(self.files("web", web)) > before, "web scraped still")
        self.assertEqual(p.stop(), 0)

    def test_an_oauth2_token_is_fetched_for_the_list(self):
        web = self.goroutine_target()
        sd = self.server()
        sd.set("/targets", (200, groups((web, "web")), 0, JSON))
        token_url, tokens = self.token_endpoint([(200, {"access_token": "tok9",
                                                        "expires_in": 3600})])
        url = "http://%s/targets" % sd.address
        p = self.start(CONFIG % {"url": url, "auth": ", oauth2: {client_id: sd, client_secret: "
                                 "s3cret, token_url: '%s'}" % token_url})
        wait_until(lambda: self.files("web", web), "web's goroutines")
        wait_until(lambda: len(self.sd_requests(sd)) >= 3, "the list asked for three times")
        self.assertEqual({h["Authorization"] for h in self.sd_requests(sd)}, {"Bearer tok9"})
        self.assertEqual(len(tokens), 1)   # kept while fresh
        self.assertEqual(tokens[0][0], "Basic " + base64.b64encode(b"sd:s3cret").decode())
        self.assertEqual(p.stop(), 0)

    def test_a_url_that_is_not_http_and_no_refresh_interval_are_refused(self):
        for url, interval, says in (
                ("ftp://127.0.0.1/x", "1s", "url 'ftp://127.0.0.1/x' is not http:// or https://"),
                ("http://127.0.0.1/x", "0s", "refresh_interval must be at least 1ms")):
            self.assert_config_refused(
                (CONFIG % {"url": url, "auth": ""}).replace("200ms", interval),
                "job 'fleet': http_sd_configs: " + says)

    @unittest.skipUnless(shutil.which("valgrind") and not os.environ.get("PROFD_SANITIZED"),
                         "valgrind not installed, or a sanitizer build")
    def test_valgrind_run_and_shutdown_has_no_leaks(self):
        web, db = self.goroutine_target(), self.goroutine_target()
        sd = self.server()
        sd.set("/targets", (200, groups((web, "web")), 0, JSON), (200, b"[{", 0, JSON),
               (200, groups((db, "db")), 0, JSON))
        token_url, _ = self.token_endpoint([(200, {"access_token": "tok9", "expires_in": 11})])
        url = "http://%s/targets" % sd.address
        p = self.start(CONFIG % {"url": url, "auth": ", oauth2: {client_id: sd, client_secret: "
                                 "s3cret, token_url: '%s'}" % token_url},
                       wrapper=valgrind(self.path("vg.log")))
        wait_until(lambda: self.files("db", db), "db's goroutines", deadline=120)
        rc = p.stop(timeout=120)
        log = open(self.path("vg.log")).read()
        self.assertEqual(rc, 0, log)
        self.assertIn("ERROR SUMMARY: 0 errors", log)
