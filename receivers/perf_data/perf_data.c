// SPDX-License-Identifier: Apache-2.0
/*
 * receiver perf_data: Linux perf.data into unsymbolized pprof profiles, one
 * per process (or per event, or one in all).
 *
 * Inputs come from `include`: files and globs are read whole (mmap), once,
 * or, with `watch`, whenever a new file has stopped growing. "-" (standard
 * input) and FIFOs are streams in pipe mode (`perf record -o - | profd`):
 * read as bytes arrive, cut into profiles every flush_interval. At a FIFO's
 * end the stream's profiles go out and the FIFO waits for its next writer.
 *
 * Whole files are read on the receiver's own thread (run_aside), and the
 * profiles of streams are emitted there, so neither reading a large file
 * nor waiting for room in a full queue holds up the event loop.
 */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/aside_scan.h"
#include "profd/plugin.h"
#include "reader.h"

#define READ_CHUNK (1u << 20)

static const char *const splits[] = {"pid", "event", "none", NULL};

struct config {
    struct profd_str_list include;
    bool watch;
    int64_t poll_interval, flush_interval;
    int split;
    bool label_pid, label_tid, label_comm, label_cpu;
    bool partial, progress;
    struct profd_str_list binary_directories;
};

static const struct profd_option options[] = {
    {"include", PROFD_OPT_STRING_LIST, offsetof(struct config, include), "[./perf.data]",
     "perf.data files or globs (read whole), FIFOs or - for standard input (streamed)"},
    {"watch", PROFD_OPT_BOOL, offsetof(struct config, watch), "false",
     "keep rescanning the globs and read each new file once it stops growing"},
    {"poll_interval", PROFD_OPT_DURATION, offsetof(struct config, poll_interval), "5s",
     "how often watch rescans"},
    {"flush_interval", PROFD_OPT_DURATION, offsetof(struct config, flush_interval), "10s",
     "streams: profiles are cut and emitted this often"},
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
    {"binary_directories", PROFD_OPT_STRING_LIST, offsetof(struct config, binary_directories),
     "[~/.debug, /usr/lib/debug]",
     "--call-graph dwarf: where binaries are looked for after their recorded path (by file "
     "name, .build-id/xx/rest[.debug], .build-id/xx/rest/elf; the vDSO, when not this "
     "host's, as [vdso]/<build-id>/vdso)"},
    {"progress", PROFD_OPT_BOOL, offsetof(struct config, progress), "false",
     "show a progress line on standard error while reading a file"},
    {0},
};

struct state;

/* A stdin or FIFO input (see "streams" below for which thread owns what). */
struct stream {
    struct state *s;
    char *path;               /* "-" for standard input */
    int fd;
    struct event *read_ev;
    uint8_t *chunk;           /* READ_CHUNK bytes read at a time */
    size_t pending;           /* read, not yet parsed (loop thread) */
    bool paused;              /* read_ev off while pending is at its most */
    /* The receiver's thread's: */
    struct perf_reader *rd;   /* NULL until bytes arrive */
    bool broken;              /* malformed: bytes are drained until the writer leaves */
};

struct state {
    const struct profd_host *host;
    struct profd_component *self;
    const struct config *cfg;
    struct event *run_ev, *poll_ev, *flush_ev;
    struct stream *streams;   /* room for every include, so a stream never moves */
    size_t nstreams;
    size_t ending_streams;    /* open streams that end for good (stdin) */
    bool keeps_running;       /* watch, or a FIFO */
    struct aside_scan scan;   /* of the files, on the receiver's own thread */
    struct profd_labels seen;      /* identities of files read */
    struct profd_labels pending;   /* path -> identity at the last poll */
};

static int validate(const struct profd_host *host, struct profd_diag *d, const void *cfgp)
{
    const struct config *cfg = cfgp;
    if (cfg->include.n == 0) {
        host->diag(d, &cfg->include, "include must list at least one perf.data file or glob");
        return PROFD_ERR;
    }
    if (cfg->flush_interval <= 0) {
        host->diag(d, &cfg->flush_interval, "flush_interval must be positive");
        return PROFD_ERR;
    }
    if (cfg->watch && cfg->poll_interval <= 0) {
        host->diag(d, &cfg->poll_interval, "poll_interval must be positive with watch");
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

static struct perf_session_options session_options(const struct config *c)
{
    return (struct perf_session_options){(enum perf_split)c->split, c->label_pid, c->label_tid,
                                         c->label_comm, c->label_cpu,
                                         (const char *const *)c->binary_directories.items,
                                         c->binary_directories.n};
}

static void refuse(struct state *s, const char *path, const char *why)
{
    s->host->log(s->self, PROFD_LOG_ERROR, "%s: %s", path, why);
    s->host->count(s->self, PROFD_C_REFUSED_RECORDS, 1);
}

/* refuse() with errno's message after what failed. */
static void refuse_errno(struct state *s, const char *path, const char *what)
{
    char why[128];
    snprintf(why, sizeof(why), "%s: %s", what, strerror(errno));
    refuse(s, path, why);
}

/* Logs what a finished input held and emits the rest of its profiles;
 * rc < 0 means it ended malformed (err says how). */
static void finish(struct state *s, struct perf_reader *rd, int rc, const char *err)
{
    const struct profd_host *h = s->host;
    bool partial = s->cfg->partial;
    if (rc < 0) {
        h->log(s->self, PROFD_LOG_ERROR, "%s: %s%s", rd->path, err,
               partial ? "; keeping the profiles built so far" : "");
        h->count(s->self, PROFD_C_REFUSED_RECORDS, 1);
    }
    size_t n = perf_reader_flush(rd, true, rc < 0 && !partial);
    uint64_t lost = perf_session_lost(rd->session);
    if (lost)
        h->log(s->self, PROFD_LOG_WARN, "%s: %llu samples were lost while recording", rd->path,
               (unsigned long long)lost);
    h->log(s->self, PROFD_LOG_INFO, "%s: %llu samples, %zu profiles%s", rd->path,
           (unsigned long long)perf_session_samples(rd->session), n,
           rd->file.stream ? " in the last interval" : "");
}

/* ---- whole files ---- */

/* Reads a whole perf.data (file or pipe mode) from fd, kept open by the caller. */
static void ingest_fd(struct state *s, int fd, const char *path)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || !st.st_size) {
        refuse(s, path, "empty or unreadable");
        return;
    }
    size_t len = (size_t)st.st_size;
    void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        refuse_errno(s, path, "cannot map");
        return;
    }
    madvise(map, len, MADV_SEQUENTIAL);
    struct perf_reader *rd = perf_reader_new(s->host, s->self, path);
    char err[512];
    if (perf_open(&rd->file, map, len, err, sizeof(err)) < 0) {
        refuse(s, path, err);
    } else {
        struct perf_session_options o = session_options(s->cfg);
        perf_reader_start(rd, &o);
        rd->progress = s->cfg->progress && len >= (16u << 20);
        rd->mapped = true;
        int rc = perf_reader_pump(rd, err, sizeof(err));
        madvise(map, len, MADV_DONTNEED);   /* read through: the profiles need none of its pages */
        finish(s, rd, rc, err);
    }
    perf_reader_free(rd);
    munmap(map, len);
}

static void ingest(struct state *s, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        refuse_errno(s, path, "cannot open");
        return;
    }
    ingest_fd(s, fd, path);
    close(fd);
}

/* "size:mtime": a file is read again only when it changes. */
static void identity_of(const struct stat *st, char *out, size_t n)
{
    snprintf(out, n, "%lld:%lld.%09ld", (long long)st->st_size, (long long)st->st_mtim.tv_sec,
             st->st_mtim.tv_nsec);
}

/* With watch, a file is read once its identity held still for a poll. */
static void consider_file(struct state *s, const char *path, const struct stat *st)
{
    const struct profd_host *h = s->host;
    if (!s->cfg->watch) {
        ingest(s, path);
        return;
    }
    char id[96], key[4200];
    identity_of(st, id, sizeof(id));
    snprintf(key, sizeof(key), "%s@%s", path, id);
    if (h->labels_get(&s->seen, key))
        return;
    const char *before = h->labels_get(&s->pending, path);
    if (before && !strcmp(before, id)) {
        h->labels_set(&s->seen, key, "");
        h->labels_del(&s->pending, path);
        ingest(s, path);
    } else {
        h->labels_set(&s->pending, path, id);
    }
}

/* ---- streams ---- */

/*
 * A stream's bytes are read on the event loop and parsed, unwound, cut and
 * emitted on the receiver's own thread, in the order read: a chunk, the
 * writer's end and each flush are jobs there, and only those jobs touch a
 * stream's reader and broken flag while it runs. Reading pauses while
 * STREAM_MAX_PENDING bytes wait to be parsed, so a slow parse holds the
 * writer back as a full pipe does instead of growing profd's memory.
 */
#define STREAM_MAX_PENDING (256u << 10)

static void on_stream_readable(evutil_socket_t fd, short what, void *arg);
static void maybe_done(struct state *s);

static bool is_stdin(const struct stream *st)
{
    return !strcmp(st->path, "-");
}

/* Parses n more bytes of the stream (receiver's thread). A writer whose
 * bytes cannot be framed is finished at once; the rest of what it writes
 * is drained unread. */
static void stream_feed(struct stream *st, const uint8_t *data, size_t n)
{
    struct state *s = st->s;
    if (st->broken)
        return;
    if (!st->rd) {
        st->rd = perf_reader_new(s->host, s->self, st->path);
        perf_open_stream(&st->rd->file);
        struct perf_session_options o = session_options(s->cfg);
        perf_reader_start(st->rd, &o);
    }
    perf_feed(&st->rd->file, data, n);
    char err[512];
    if (perf_reader_pump(st->rd, err, sizeof(err)) < 0) {
        finish(s, st->rd, -1, err);
        st->broken = true;
    }
}

/* The writer left: the last profiles of what it wrote go out, and the
 * stream is ready for the next one (receiver's thread). */
static void stream_end(struct stream *st)
{
    struct state *s = st->s;
    struct perf_reader *rd = st->rd;
    if (!rd) {
        refuse(s, st->path, "the stream ended without any data");
    } else if (!st->broken) {
        char err[512];
        perf_end_stream(&rd->file);
        int rc = perf_reader_pump(rd, err, sizeof(err));
        finish(s, rd, rc, err);
    }
    perf_reader_free(rd);
    st->rd = NULL;
    st->broken = false;
}

/* Reads what is there into st->chunk: its length, 0 at the stream's end,
 * -1 when nothing is there yet. */
static ssize_t stream_read(struct stream *st)
{
    ssize_t n = read(st->fd, st->chunk, READ_CHUNK);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return -1;
    if (n < 0)
        st->s->host->log(st->s->self, PROFD_LOG_ERROR, "%s: read: %s", st->path, strerror(errno));
    return n < 0 ? 0 : n;
}

/* Standard input that cannot be watched, on the receiver's thread: a
 * regular file whole (file mode works there too), anything else (a
 * terminal, /dev/null) to its end. */
static void read_stdin_aside(void *arg)
{
    struct stream *st = arg;
    struct stat sb;
    if (fstat(st->fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
        ingest_fd(st->s, st->fd, st->path);
        return;
    }
    ssize_t n;
    while ((n = stream_read(st)) != 0)
        if (n > 0)
            stream_feed(st, st->chunk, (size_t)n);
    stream_end(st);
}

static void read_stdin_done(void *arg)
{
    struct stream *st = arg;
    close(st->fd);
    st->fd = -1;
    st->s->ending_streams--;
    maybe_done(st->s);
}

/* Opens a stream and watches it on the event loop, or, standard input that
 * cannot be watched, reads it on the receiver's thread. */
static bool stream_open(struct stream *st)
{
    struct state *s = st->s;
    st->fd = is_stdin(st) ? dup(0) : open(st->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (st->fd < 0) {
        refuse_errno(s, st->path, "cannot open");
        return false;
    }
    struct stat sb;
    if (is_stdin(st) && fstat(st->fd, &sb) == 0 && !S_ISFIFO(sb.st_mode) && !S_ISSOCK(sb.st_mode)) {
        s->host->run_aside(s->self, read_stdin_aside, read_stdin_done, st);
        return true;
    }
    fcntl(st->fd, F_SETFL, fcntl(st->fd, F_GETFL) | O_NONBLOCK);
    st->read_ev = event_new(s->host->event_base(s->self), st->fd, EV_READ | EV_PERSIST,
                            on_stream_readable, st);
    event_add(st->read_ev, NULL);
    return true;
}

/* Stops watching the stream and closes it (loop thread). */
static void stream_close(struct stream *st)
{
    if (st->read_ev)
        event_free(st->read_ev);
    st->read_ev = NULL;
    if (st->fd >= 0)
        close(st->fd);
    st->fd = -1;
}

/* Bytes read on the loop, on their way to the receiver's thread; no bytes:
 * the writer left. */
struct stream_job {
    struct stream *st;
    uint8_t *data;
    size_t n;
    bool last;   /* standard input's end: the receiver may be done */
};

static void stream_job_run(void *arg)
{
    struct stream_job *j = arg;
    if (j->n)
        stream_feed(j->st, j->data, j->n);
    else
        stream_end(j->st);
}

static void stream_job_done(void *arg)
{
    struct stream_job *j = arg;
    struct stream *st = j->st;
    st->pending -= j->n;
    if (st->paused && st->pending < STREAM_MAX_PENDING) {
        st->paused = false;
        if (st->read_ev)
            event_add(st->read_ev, NULL);
    }
    if (j->last) {
        st->s->ending_streams--;
        maybe_done(st->s);
    }
    free(j->data);
    free(j);
}

static void stream_hand_aside(struct stream *st, const uint8_t *data, size_t n, bool last)
{
    struct stream_job *j = malloc(sizeof(*j));
    if (!j || (n && !(j->data = malloc(n))))
        abort();
    if (n)
        memcpy(j->data, data, n);
    else
        j->data = NULL;
    j->st = st;
    j->n = n;
    j->last = last;
    st->pending += n;
    st->s->host->run_aside(st->s->self, stream_job_run, stream_job_done, j);
}

static void maybe_done(struct state *s)
{
    if (!s->scan.running && !s->ending_streams && !s->keeps_running)
        s->host->done(s->self);
}

static void on_stream_readable(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct stream *st = arg;
    ssize_t n = stream_read(st);
    if (n > 0) {
        stream_hand_aside(st, st->chunk, (size_t)n, false);
        if (st->pending >= STREAM_MAX_PENDING) {
            st->paused = true;
            event_del(st->read_ev);
        }
        return;
    }
    if (n < 0)
        return;
    stream_close(st);
    stream_hand_aside(st, NULL, 0, is_stdin(st));
    if (!is_stdin(st))   /* a FIFO: open for the next writer at once */
        stream_open(st);
}

static void flush_aside(void *arg)
{
    struct state *s = arg;
    for (size_t i = 0; i < s->nstreams; i++)
        if (s->streams[i].rd && !s->streams[i].broken)
            perf_reader_flush(s->streams[i].rd, false, false);
}

static void on_flush(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct state *s = arg;
    s->host->run_aside(s->self, flush_aside, NULL, s);
}

static void add_stream(struct state *s, const char *path)
{
    struct stream *st = &s->streams[s->nstreams];
    *st = (struct stream){.s = s, .fd = -1};
    if (!(st->path = strdup(path)) || !(st->chunk = malloc(READ_CHUNK)))
        abort();
    s->nstreams++;
}

/* ---- scanning ---- */

static bool is_stream(const char *path)
{
    struct stat st;
    return !strcmp(path, "-") || (stat(path, &st) == 0 && S_ISFIFO(st.st_mode));
}

static void scan(void *arg)
{
    struct state *s = arg;
    for (size_t i = 0; i < s->cfg->include.n; i++) {
        const char *pattern = s->cfg->include.items[i];
        if (is_stream(pattern))
            continue;
        glob_t g;
        if (glob(pattern, 0, NULL, &g) != 0) {
            if (!s->cfg->watch)
                s->host->log(s->self, PROFD_LOG_WARN, "no file matches %s", pattern);
            continue;
        }
        for (size_t k = 0; k < g.gl_pathc; k++) {
            struct stat st;
            if (stat(g.gl_pathv[k], &st) == 0 && S_ISREG(st.st_mode))
                consider_file(s, g.gl_pathv[k], &st);
            else if (!s->cfg->watch)
                refuse(s, g.gl_pathv[k], "not a regular file");
        }
        globfree(&g);
    }
}

static void scan_ended(void *arg)
{
    maybe_done(arg);
}

static void on_run(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct state *s = arg;
    aside_scan_request(&s->scan);
}

static int start(void *st)
{
    struct state *s = st;
    struct event_base *base = s->host->event_base(s->self);
    s->keeps_running = s->cfg->watch;
    s->scan = (struct aside_scan){s->host, s->self, scan, scan_ended, s};
    if (!(s->streams = calloc(s->cfg->include.n, sizeof(*s->streams))))
        abort();
    for (size_t i = 0; i < s->cfg->include.n; i++) {
        const char *path = s->cfg->include.items[i];
        if (!is_stream(path))
            continue;
        add_stream(s, path);
        if (!stream_open(&s->streams[s->nstreams - 1]))
            continue;   /* failed, or standard input already read whole */
        if (!strcmp(path, "-"))
            s->ending_streams++;
        else
            s->keeps_running = true;
    }
    if (s->nstreams) {
        struct timeval every = {s->cfg->flush_interval / 1000000000,
                                s->cfg->flush_interval % 1000000000 / 1000};
        s->flush_ev = event_new(base, -1, EV_PERSIST, on_flush, s);
        event_add(s->flush_ev, &every);
    }
    if (s->cfg->watch) {
        struct timeval every = {s->cfg->poll_interval / 1000000000,
                                s->cfg->poll_interval % 1000000000 / 1000};
        s->poll_ev = event_new(base, -1, EV_PERSIST, on_run, s);
        event_add(s->poll_ev, &every);
    }
    s->run_ev = event_new(base, -1, 0, on_run, s);
    event_active(s->run_ev, EV_TIMEOUT, 0);
    return PROFD_OK;
}

static int shutdown_(void *st)
{
    struct state *s = st;
    struct event **evs[] = {&s->run_ev, &s->poll_ev, &s->flush_ev};
    for (size_t i = 0; i < sizeof(evs) / sizeof(*evs); i++) {
        if (*evs[i])
            event_free(*evs[i]);
        *evs[i] = NULL;
    }
    for (size_t i = 0; i < s->nstreams; i++) {   /* what a stream holds is not lost */
        struct stream *sm = &s->streams[i];
        stream_close(sm);
        if (sm->rd)   /* the receiver's thread has ended: the reader is this thread's */
            stream_end(sm);
    }
    return PROFD_OK;
}

static void destroy(void *st)
{
    struct state *s = st;
    if (!s)
        return;
    shutdown_(s);
    for (size_t i = 0; i < s->nstreams; i++) {
        free(s->streams[i].path);
        free(s->streams[i].chunk);
    }
    free(s->streams);
    s->host->labels_clear(&s->seen);
    s->host->labels_clear(&s->pending);
    free(s);
}

static const struct profd_plugin plugin = {
    PROFD_PLUGIN_HEADER,
    .kind = PROFD_RECEIVER,
    .type = "perf_data",
    .description = "reads Linux perf.data files and streams into per-process pprof profiles",
    .options = options,
    .config_size = sizeof(struct config),
    .validate = validate,
    .create = create,
    .start = start,
    .shutdown = shutdown_,
    .destroy = destroy,
};

PROFD_PLUGIN_DEFINE(plugin)
