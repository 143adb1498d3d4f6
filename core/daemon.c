// SPDX-License-Identifier: Apache-2.0
#include "daemon.h"

#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "../lib/cpus.h"
#include "alloc.h"
#include "block_cache.h"
#include "graph.h"
#include "log.h"
#include "serve_loops.h"
#include "status.h"
#include "telemetry.h"

struct daemon {
    const struct profd_run_options *o;
    struct event_base *base;
    struct profd_serve_loops *serve_loops;   /* every generation's servers share them */
    struct profd_config *config;
    struct profd_graph *graph;
    struct profd_telemetry *telemetry;
    struct profd_telemetry_pages pages;
    int64_t started_unix;
    unsigned long reloads_ok, reloads_failed;
};

struct profd_config *profd_daemon_load_config(const char *path, const char *text,
                                              struct profd_diag *d)
{
    struct cfg_node *root = path ? cfg_load_file(path, d)
                                 : cfg_load_string("<embedded default config>", text, d);
    return root ? profd_config_parse(root, d) : NULL;
}

/* Loads a config and prepares its graph, so every problem is reported at
 * once. Returns NULL (and frees everything) when d gained any message. */
static struct profd_config *load_and_check(const struct profd_run_options *o,
                                           struct profd_graph **g, struct profd_diag *d)
{
    size_t before = d->n;
    struct profd_config *c = profd_daemon_load_config(o->config_path, o->config_text, d);
    *g = c ? profd_graph_prepare(c, o->loader, d) : NULL;
    if (d->n == before)
        return c;
    profd_graph_destroy(*g);
    *g = NULL;
    profd_config_free(c);
    return NULL;
}

static void log_diag(const struct profd_diag *d)
{
    for (size_t i = 0; i < d->n; i++)
        profd_log(PROFD_LOG_ERROR, NULL, "%s", d->msgs[i]);
}

static void all_done(void *arg)
{
    struct daemon *dm = arg;
    profd_log(PROFD_LOG_INFO, NULL, "all input read; draining");
    event_base_loopexit(dm->base, NULL);
}

/* Creates the components of a prepared graph; NULL with the reason logged. */
static struct profd_graph *create_graph(struct daemon *dm, struct profd_graph *g)
{
    if (g && profd_graph_create(g, dm->base) < 0) {
        profd_graph_destroy(g);
        return NULL;
    }
    if (g) {
        g->serve_loops = dm->serve_loops;
        /* only one-shot receivers report done: a daemon with any other runs on */
        g->on_all_done = all_done;
        g->on_all_done_arg = dm;
    }
    return g;
}

static void reload(struct daemon *dm)
{
    profd_log(PROFD_LOG_INFO, NULL, "SIGHUP: reloading %s", dm->o->config_path ? dm->o->config_path
                                                                              : "the default config");
    struct profd_diag d = {0};
    struct profd_graph *g;
    struct profd_config *c = load_and_check(dm->o, &g, &d);
    log_diag(&d);
    profd_diag_free(&d);
    g = create_graph(dm, g);
    if (!g) {
        profd_config_free(c);
        dm->reloads_failed++;
        profd_log(PROFD_LOG_ERROR, NULL, "reload failed; the running configuration stays in place");
        return;
    }
    const char *was = dm->config->telemetry_address, *now = c->telemetry_address;
    if ((was || now) && (!was || !now || strcmp(was, now) != 0))
        profd_log(PROFD_LOG_WARN, NULL, "service.telemetry.metrics.address changed; it takes "
                                        "effect at the next restart");
    profd_graph_shutdown(dm->graph);
    if (profd_graph_start(g) == 0) {
        profd_graph_destroy(dm->graph);
        profd_config_free(dm->config);
        dm->graph = g;
        dm->config = c;
        dm->reloads_ok++;
        profd_log(PROFD_LOG_INFO, NULL, "reload done");
        return;
    }
    /* The new graph would not start: bring the previous generation back. */
    profd_graph_destroy(g);
    profd_config_free(c);
    dm->reloads_failed++;
    profd_graph_destroy(dm->graph);
    struct profd_diag again = {0};
    dm->graph = create_graph(dm, profd_graph_prepare(dm->config, dm->o->loader, &again));
    profd_diag_free(&again);
    if (!dm->graph || profd_graph_start(dm->graph) < 0) {
        profd_log(PROFD_LOG_ERROR, NULL, "cannot restart the previous configuration; exiting");
        event_base_loopexit(dm->base, NULL);
        return;
    }
    profd_log(PROFD_LOG_ERROR, NULL, "reload failed to start; the previous configuration is back");
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
    (void)what;
    struct daemon *dm = arg;
    if (sig == SIGHUP && !dm->o->oneshot) {
        reload(dm);
        return;
    }
    profd_log(PROFD_LOG_INFO, NULL, "signal %d: draining and exiting", (int)sig);
    event_base_loopexit(dm->base, NULL);
}

static char *extra_metrics(void *arg)
{
    struct daemon *dm = arg;
    return profd_xasprintf("# HELP profd_config_reloads_total Config reloads by result.\n"
                           "# TYPE profd_config_reloads_total counter\n"
                           "profd_config_reloads_total{result=\"success\"} %lu\n"
                           "profd_config_reloads_total{result=\"failure\"} %lu\n"
                           "# HELP profd_up 1 while the daemon runs.\n# TYPE profd_up gauge\n"
                           "profd_up 1\n",
                           dm->reloads_ok, dm->reloads_failed);
}

static char *status_page(void *arg, bool html)
{
    struct daemon *dm = arg;
    struct profd_status_source s = {dm->config, dm->graph, dm->o->config_path, dm->started_unix,
                                    dm->reloads_ok, dm->reloads_failed};
    return html ? profd_status_html(&s) : profd_status_json(&s);
}

/* Every second: the large blocks kept for profiles given back to the
 * system once none was asked for in a while (block_cache.h). */
static void trim_blocks(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    profd_block_trim(BLOCK_CACHE_IDLE_NS);
}

/* Raises the soft limit on open files to the hard one, as servers do: a
 * gateway holds a connection for each agent, and the soft limit (1024
 * where systemd and most shells leave it) is the old select()'s, which
 * profd does not use. */
static void raise_open_files_limit(void)
{
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur >= lim.rlim_max)
        return;
    rlim_t was = lim.rlim_cur;
    lim.rlim_cur = lim.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &lim) == 0)
        profd_log(PROFD_LOG_DEBUG, NULL, "open files: at most %llu (the soft limit was %llu)",
                  (unsigned long long)lim.rlim_max, (unsigned long long)was);
}

int profd_daemon_run(const struct profd_run_options *o)
{
    struct daemon dm = {.o = o, .started_unix = (int64_t)time(NULL)};
    dm.pages = (struct profd_telemetry_pages){extra_metrics, status_page, &dm};
    struct profd_diag d = {0};
    struct profd_graph *prepared;
    dm.config = load_and_check(o, &prepared, &d);
    profd_diag_print(&d, stderr);
    profd_diag_free(&d);
    if (!dm.config)
        return 2;
    profd_log_set_level((enum profd_log_level)(o->log_level >= 0 ? o->log_level
                                                                 : dm.config->log_level));
    signal(SIGPIPE, SIG_IGN);
    raise_open_files_limit();
    dm.base = profd_event_base_new();
    dm.serve_loops = o->oneshot ? NULL : profd_serve_loops_new(profd_serve_loops_wanted());
    dm.graph = create_graph(&dm, prepared);
    int rc = 1;
    if (!dm.graph)
        goto out;
    struct event *sigs[3];
    const int signos[3] = {SIGINT, SIGTERM, SIGHUP};
    for (int i = 0; i < 3; i++) {
        sigs[i] = evsignal_new(dm.base, signos[i], on_signal, &dm);
        event_add(sigs[i], NULL);
    }
    struct event *trim = event_new(dm.base, -1, EV_PERSIST, trim_blocks, NULL);
    event_add(trim, &(struct timeval){1, 0});
    if (dm.config->telemetry_address && !o->oneshot)
        dm.telemetry = profd_telemetry_start(dm.base, dm.config->telemetry_address, &dm.pages);
    /* This thread runs the loop every receiver shares: it never waits for
     * room in a queue (receivers that may wait do it on their own thread). */
    profd_queue_wait_until(PROFD_QUEUE_NO_WAIT);
    if ((dm.config->telemetry_address && !o->oneshot && !dm.telemetry) ||
        profd_graph_start(dm.graph) < 0) {
        profd_log(PROFD_LOG_ERROR, NULL, "start-up failed");
    } else {
        profd_log(PROFD_LOG_INFO, NULL, "running with %zu component(s) on %u CPU(s)",
                  dm.graph->n, cpus_usable());
        event_base_dispatch(dm.base);
        rc = 0;
    }
    profd_graph_shutdown(dm.graph);
    profd_log(PROFD_LOG_INFO, NULL, "stopped");
    for (int i = 0; i < 3; i++)
        event_free(sigs[i]);
    event_free(trim);
    profd_telemetry_stop(dm.telemetry);
out:
    profd_graph_destroy(dm.graph);
    profd_serve_loops_free(dm.serve_loops);
    profd_config_free(dm.config);
    event_base_free(dm.base);
    return rc;
}
