// SPDX-License-Identifier: Apache-2.0
/*
 * receiver perf_data: reads perf.data files (file or pipe mode, either byte
 * order, zstd-compressed records) matching globs, once, and emits one
 * unsymbolized pprof profile per process (or per event, or one in all).
 * Not yet: watching a directory, streaming stdin/FIFO input with
 * flush_interval, and --call-graph dwarf unwinding.
 */
#include <event2/event.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf_file.h"
#include "profd/plugin.h"
#include "session.h"

static const char *const splits[] = {"pid", "event", "none", NULL};

struct config {
    struct profd_str_list include;
    int split;
    bool label_pid, label_tid, label_comm, label_cpu;
    bool partial;
};

static const struct profd_option options[] = {
    {"include", PROFD_OPT_STRING_LIST, offsetof(struct config, include), "[./perf.data]",
     "perf.data files or glob patterns, read once"},
    {"split", PROFD_OPT_ENUM, offsetof(struct config, split), "pid",
     "one profile per process (pid), per event, or one for everything (none)",
     .choices = splits},
    {"label_pid", PROFD_OPT_BOOL, offsetof(struct config, label_pid), "true",
     "series label pid on per-process profiles"},
    {"label_tid", PROFD_OPT_BOOL, offsetof(struct config, label_tid), "false",
     "sample label tid"},
    {"label_comm", PROFD_OPT_BOOL, offsetof(struct config, label_comm), "false",
     "sample label comm (the thread's name)"},
    {"label_cpu", PROFD_OPT_BOOL, offsetof(struct config, label_cpu), "false",
     "sample label cpu"},
    {"partial", PROFD_OPT_BOOL, offsetof(struct config, partial), "false",
     "on malformed input, keep the profiles built so far instead of none"},
    {0},
};

struct state {
    const struct profd_host *host;
    struct profd_component *self;
    const struct config *cfg;
    struct event *run_ev;
};

static int validate(const struct profd_host *host, struct profd_diag *d, const void *cfgp)
{
    const struct config *cfg = cfgp;
    if (cfg->include.n == 0) {
        host->diag(d, &cfg->include, "include must list at least one perf.data file or glob");
        return PROFD_ERR;
    }
    return PROFD_OK;
}

static int create(const struct profd_host *host, struct profd_component *self, const void *cfgp,
                  void **out)
{
    struct state *s = calloc(1, sizeof(*s));
    if (!s)
        return PROFD_ERR;
    s->host = host;
    s->self = self;
    s->cfg = cfgp;
    *out = s;
    return PROFD_OK;
}

static void emit_outputs(struct state *s, const char *path, struct perf_output *outs, size_t n)
{
    const struct profd_host *h = s->host;
    struct profd_batch *b = h->batch_new();
    for (size_t i = 0; i < n; i++) {
        struct profd_record *r = h->record_add_profile(b, outs[i].profile);
        h->labels_copy(&r->labels, &outs[i].labels);
        h->labels_clear(&outs[i].labels);
        h->record_set_label(r, "__file__", path);
    }
    free(outs);
    if (n && h->emit(s->self, b) == PROFD_ERETRY)
        h->log(s->self, PROFD_LOG_WARN, "%s: pipeline full, profiles dropped", path);
    h->batch_unref(b);
}

/* Reads one perf.data file through a session and emits its profiles. */
static void ingest(struct state *s, const char *path)
{
    const struct profd_host *h = s->host;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        h->log(s->self, PROFD_LOG_ERROR, "%s: cannot open: %m", path);
        h->count(s->self, PROFD_C_REFUSED_RECORDS, 1);
        if (fd >= 0)
            close(fd);
        return;
    }
    size_t len = (size_t)st.st_size;
    void *map = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    close(fd);
    char err[512];
    struct perf_file f;
    if (map == MAP_FAILED) {
        h->log(s->self, PROFD_LOG_ERROR, "%s: empty or unreadable", path);
        h->count(s->self, PROFD_C_REFUSED_RECORDS, 1);
        return;
    }
    if (perf_open(&f, map, len, err, sizeof(err)) < 0) {
        h->log(s->self, PROFD_LOG_ERROR, "%s: %s", path, err);
        h->count(s->self, PROFD_C_REFUSED_RECORDS, 1);
        perf_close(&f);
        munmap(map, len);
        return;
    }
    const struct config *c = s->cfg;
    struct perf_session_options o = {(enum perf_split)c->split, c->label_pid, c->label_tid,
                                     c->label_comm, c->label_cpu};
    struct perf_session *ses = perf_session_new(h, &f, &o);
    struct perf_record r;
    int rc;
    uint64_t bad = 0;
    while ((rc = perf_next(&f, &r, err, sizeof(err))) > 0)
        if (perf_session_add(ses, &r, err, sizeof(err)) < 0 && bad++ < 10)
            h->log(s->self, PROFD_LOG_WARN, "%s: %s (record skipped)", path, err);
    size_t n;
    struct perf_output *outs = perf_session_flush(ses, &n);
    if (rc < 0) {
        h->log(s->self, PROFD_LOG_ERROR, "%s: %s%s", path, err,
               c->partial ? "; keeping the profiles built so far" : "");
        h->count(s->self, PROFD_C_REFUSED_RECORDS, 1);
        if (!c->partial) {
            for (size_t i = 0; i < n; i++) {
                h->profile_free(outs[i].profile);
                h->labels_clear(&outs[i].labels);
            }
            n = 0;
        }
    }
    if (perf_session_lost(ses))
        h->log(s->self, PROFD_LOG_WARN, "%s: %llu samples were lost while recording", path,
               (unsigned long long)perf_session_lost(ses));
    h->log(s->self, PROFD_LOG_INFO, "%s: %llu samples, %zu profiles", path,
           (unsigned long long)perf_session_samples(ses), n);
    emit_outputs(s, path, outs, n);
    perf_session_free(ses);
    perf_close(&f);
    munmap(map, len);
}

static void on_run(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct state *s = arg;
    for (size_t i = 0; i < s->cfg->include.n; i++) {
        glob_t g;
        if (glob(s->cfg->include.items[i], 0, NULL, &g) != 0) {
            s->host->log(s->self, PROFD_LOG_WARN, "no file matches %s", s->cfg->include.items[i]);
            continue;
        }
        for (size_t k = 0; k < g.gl_pathc; k++)
            ingest(s, g.gl_pathv[k]);
        globfree(&g);
    }
    s->host->done(s->self);
}

static int start(void *st)
{
    struct state *s = st;
    s->run_ev = event_new(s->host->event_base(s->self), -1, 0, on_run, s);
    event_active(s->run_ev, EV_TIMEOUT, 0);
    return PROFD_OK;
}

static int shutdown_(void *st)
{
    struct state *s = st;
    if (s->run_ev)
        event_free(s->run_ev);
    s->run_ev = NULL;
    return PROFD_OK;
}

static void destroy(void *st)
{
    if (!st)
        return;
    shutdown_(st);
    free(st);
}

static const struct profd_plugin plugin = {
    PROFD_PLUGIN_HEADER,
    .kind = PROFD_RECEIVER,
    .type = "perf_data",
    .description = "reads Linux perf.data files into per-process pprof profiles (addresses)",
    .options = options,
    .config_size = sizeof(struct config),
    .validate = validate,
    .create = create,
    .start = start,
    .shutdown = shutdown_,
    .destroy = destroy,
};

PROFD_PLUGIN_DEFINE(plugin)
