// SPDX-License-Identifier: Apache-2.0
/*
 * receiver pprof_file: ingests pprof files (gzip'd or raw) matching globs.
 * Directories are watched with inotify where possible, and then a scan
 * reads the files inotify named alone; every poll_interval a scan lists
 * every file the patterns match (for files inotify cannot see, and files
 * waiting to be tried again), though never so often that such listings
 * take more than a twentieth of a CPU. Each file is validated, labeled,
 * and emitted as one record; once every
 * exporter accepted it, the file is deleted, moved or kept (remembered). A
 * file some exporter did not take stays and is tried again after a wait
 * that doubles each time (1 s to 5 min). A malformed file goes to a
 * rejected/ directory with a .error text beside it. Scans run on the
 * receiver's own thread, so reading, decoding and waiting for room in a
 * full queue hold up no other receiver.
 */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <libgen.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "../../lib/aside_scan.h"
#include "../../lib/clock.h"
#include "../../lib/huge_pages.h"
#include "../../lib/profile_family.h"
#include "file_events.h"
#include "profd/plugin.h"
#include "seen_files.h"

enum { AFTER_DELETE, AFTER_MOVE, AFTER_KEEP };
static const char *const after_actions[] = {"delete", "move", "keep", NULL};

struct config {
    struct profd_str_list include, exclude;
    int64_t poll_interval;
    bool oneshot;
    int after_ingest;
    char *move_to;
    char *rejected_directory;
    struct profd_str_map labels;
    char *filename_pattern;
    char *source_label;
    uint64_t max_file_size;
};

static const struct profd_option options[] = {
    {"include", PROFD_OPT_STRING_LIST, offsetof(struct config, include),
     "[./spool/*.pb.gz, ./spool/*.pb]", "glob patterns of files to ingest"},
    {"exclude", PROFD_OPT_STRING_LIST, offsetof(struct config, exclude), NULL,
     "glob patterns (fnmatch on the path) of files to skip"},
    {"poll_interval", PROFD_OPT_DURATION, offsetof(struct config, poll_interval), "1s",
     "how often every file the globs match is listed besides inotify (at least 20 times as "
     "long as a listing takes); 0 disables polling"},
    {"oneshot", PROFD_OPT_BOOL, offsetof(struct config, oneshot), "false",
     "scan once, then report done (profd convert)"},
    {"after_ingest", PROFD_OPT_ENUM, offsetof(struct config, after_ingest), "delete",
     "what happens to a file once every exporter accepted it", .choices = after_actions},
    {"move_to", PROFD_OPT_STRING, offsetof(struct config, move_to), NULL,
     "directory for after_ingest: move"},
    {"rejected_directory", PROFD_OPT_STRING, offsetof(struct config, rejected_directory),
     "rejected", "where malformed files go (relative to the file's directory); empty leaves them"},
    {"labels", PROFD_OPT_STRING_MAP, offsetof(struct config, labels), NULL,
     "series labels added to every profile"},
    {"filename_pattern", PROFD_OPT_STRING, offsetof(struct config, filename_pattern), NULL,
     "PCRE2 regex matched against the file name; named groups become labels"},
    {"source_label", PROFD_OPT_STRING, offsetof(struct config, source_label), NULL,
     "series label that receives the file name, if set"},
    {"max_file_size", PROFD_OPT_SIZE, offsetof(struct config, max_file_size), "256MiB",
     "larger files are rejected"},
    {0},
};

struct state {
    const struct profd_host *host;
    struct profd_component *self;
    const struct config *cfg;
    pcre2_code *pattern;
    struct event *scan_ev, *poll_ev, *inotify_ev, *rewatch_ev;
    struct file_events *events;   /* NULL: no directory watched */
    struct aside_scan scan;    /* on the receiver's own thread */
    /* A scan lists every file when set (at start, at a poll, after one
     * stopped for want of room); otherwise it reads what inotify named. */
    atomic_bool list_all;
    _Atomic int64_t next_poll_ns;   /* polls before it are passed over */
    int64_t ingest_cpu_ns;     /* of the scan under way, what ingesting took */
    pthread_mutex_t lock;      /* guards the sets: acks run on sender threads */
    /* Paths emitted, not yet acknowledged, as a label set (value unused). */
    struct profd_labels in_flight;
    /* files kept or left in place, and those not every exporter took
     * until their next try */
    struct seen_files *seen;
};

/* A file not every exporter took is tried again after a wait that starts
 * at the first and doubles with each try, up to the most. */
#define RETRY_FIRST_NS 1000000000LL
#define RETRY_MAX_NS (300 * RETRY_FIRST_NS)

/* A listing of every file is followed by a wait of at least this many
 * times the CPU it took (besides ingesting), so that listing many files
 * left in place takes at most a twentieth of a CPU. */
#define LISTING_CPU_SHARE 20

/* How often directories the patterns name that are missing are looked for. */
#define REWATCH_SECONDS 1

struct ingest {
    struct state *s;
    char *path;
    char *identity;
};

/* ---- lifecycle helpers ---- */

static pcre2_code *compile_pattern(const char *re, char *err, size_t errlen)
{
    int code;
    PCRE2_SIZE off;
    pcre2_code *c = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, PCRE2_ANCHORED |
                                  PCRE2_ENDANCHORED, &code, &off, NULL);
    if (!c) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(code, msg, sizeof(msg));
        snprintf(err, errlen, "filename_pattern: %s at offset %zu", (char *)msg, (size_t)off);
    }
    return c;
}

static int validate(const struct profd_host *host, struct profd_diag *d, const void *cfgp)
{
    const struct config *cfg = cfgp;
    int rc = PROFD_OK;
    if (cfg->include.n == 0) {
        host->diag(d, &cfg->include, "include must list at least one glob");
        rc = PROFD_ERR;
    }
    if (cfg->after_ingest == AFTER_MOVE && (!cfg->move_to || !*cfg->move_to)) {
        host->diag(d, &cfg->after_ingest, "after_ingest: move needs move_to");
        rc = PROFD_ERR;
    }
    if (cfg->filename_pattern) {
        char err[300];
        pcre2_code *c = compile_pattern(cfg->filename_pattern, err, sizeof(err));
        if (!c) {
            host->diag(d, &cfg->filename_pattern, "%s", err);
            rc = PROFD_ERR;
        }
        pcre2_code_free(c);
    }
    return rc;
}

static int create(const struct profd_host *host, struct profd_component *self, const void *cfgp,
                  void **out)
{
    const struct config *cfg = cfgp;
    struct state *s = calloc(1, sizeof(*s));
    if (!s)
        return PROFD_ERR;
    s->host = host;
    s->self = self;
    s->cfg = cfg;
    s->seen = seen_files_new();
    atomic_init(&s->list_all, true);
    pthread_mutex_init(&s->lock, NULL);
    *out = s;
    if (cfg->filename_pattern) {
        char err[300];
        s->pattern = compile_pattern(cfg->filename_pattern, err, sizeof(err));
        if (!s->pattern)
            return PROFD_ERR;
    }
    return PROFD_OK;
}

/* ---- after ingest ---- */

static char *join(const char *dir, const char *name)
{
    char *p;
    return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

/* dir, or dir resolved against the directory of file when relative. */
static char *dir_for(const char *file, const char *dir)
{
    if (dir[0] == '/')
        return strdup(dir);
    char *copy = strdup(file);
    char *res = copy ? join(dirname(copy), dir) : NULL;
    free(copy);
    return res;
}

static bool move_into(const struct state *s, const char *path, const char *dir, char **moved)
{
    char *target_dir = dir_for(path, dir);
    char *copy = strdup(path);
    char *target = target_dir && copy ? join(target_dir, basename(copy)) : NULL;
    bool ok = target && (mkdir(target_dir, 0755) == 0 || errno == EEXIST) &&
              rename(path, target) == 0;
    if (!ok)
        s->host->log(s->self, PROFD_LOG_ERROR, "cannot move %s to %s: %s", path,
                     target_dir ? target_dir : dir, strerror(errno));
    if (ok && moved)
        *moved = target;
    else
        free(target);
    free(target_dir);
    free(copy);
    return ok;
}

static void on_ack(void *arg, bool ok)
{
    struct ingest *in = arg;
    struct state *s = in->s;
    const struct config *cfg = s->cfg;
    pthread_mutex_lock(&s->lock);
    if (ok)
        seen_files_let_go(s->seen, in->identity);
    if (!ok) {
        int64_t wait = seen_files_hold(s->seen, in->identity, monotonic_ns(), RETRY_FIRST_NS,
                                       RETRY_MAX_NS);
        s->host->log(s->self, PROFD_LOG_WARN,
                     "not every exporter accepted %s; it stays, tried again in %lld s", in->path,
                     (long long)(wait / 1000000000));
    } else if (cfg->after_ingest == AFTER_DELETE) {
        if (unlink(in->path) != 0 && errno != ENOENT)
            s->host->log(s->self, PROFD_LOG_ERROR, "cannot delete %s: %s", in->path, strerror(errno));
    } else if (cfg->after_ingest == AFTER_MOVE) {
        move_into(s, in->path, cfg->move_to, NULL);
    } else {
        seen_files_add(s->seen, in->identity);
    }
    s->host->labels_del(&s->in_flight, in->path);
    pthread_mutex_unlock(&s->lock);
    free(in->path);
    free(in->identity);
    free(in);
}

static void reject(struct state *s, const char *path, const char *identity, const char *why)
{
    s->host->count(s->self, PROFD_C_REFUSED_RECORDS, 1);
    s->host->log(s->self, PROFD_LOG_WARN, "rejected %s: %s", path, why);
    const char *dir = s->cfg->rejected_directory;
    char *moved = NULL;
    if (dir && *dir && move_into(s, path, dir, &moved)) {
        char *errfile;
        if (asprintf(&errfile, "%s.error", moved) >= 0) {
            FILE *f = fopen(errfile, "w");
            if (f) {
                fprintf(f, "%s: %s\n", path, why);
                fclose(f);
            }
            free(errfile);
        }
        free(moved);
        return;
    }
    pthread_mutex_lock(&s->lock);
    seen_files_add(s->seen, identity);   /* not again until the file changes */
    pthread_mutex_unlock(&s->lock);
}

/* ---- ingest ---- */

static int read_file(const struct state *s, const char *path, uint8_t **data, size_t *len,
                     char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        snprintf(err, errlen, "cannot open: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if ((uint64_t)st.st_size > s->cfg->max_file_size) {
        snprintf(err, errlen, "%lld bytes exceed max_file_size %llu", (long long)st.st_size,
                 (unsigned long long)s->cfg->max_file_size);
        close(fd);
        return -2;
    }
    size_t cap = (size_t)st.st_size + 1, n = 0;
    /* a large file in huge pages: a fault per 2 MiB as the kernel copies
     * it in, rather than one per 4 KiB */
    int arena = cap >= HUGE_PAGES_FROM ? s->host->huge_arena_enter() : -1;
    uint8_t *buf = malloc(cap);
    ssize_t r = 0;
    while (buf && (r = read(fd, buf + n, cap - n)) > 0) {
        n += (size_t)r;
        if (n == cap) {   /* the file grew while we read it */
            uint8_t *nb = n < s->cfg->max_file_size ? realloc(buf, cap * 2) : NULL;
            if (!nb)
                break;
            buf = nb;
            cap *= 2;
        }
    }
    s->host->huge_arena_leave(arena);
    close(fd);
    if (!buf || r < 0 || n == cap) {
        snprintf(err, errlen, "cannot read: %s", r < 0 ? strerror(errno) : "file too large");
        free(buf);
        return -1;
    }
    *data = buf;
    *len = n;
    return 0;
}

static void add_filename_labels(struct state *s, struct profd_record *r, const char *name)
{
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(s->pattern, NULL);
    if (pcre2_match(s->pattern, (PCRE2_SPTR)name, PCRE2_ZERO_TERMINATED, 0, 0, md, NULL) > 0) {
        uint32_t count, entry_size;
        PCRE2_SPTR table;
        pcre2_pattern_info(s->pattern, PCRE2_INFO_NAMECOUNT, &count);
        pcre2_pattern_info(s->pattern, PCRE2_INFO_NAMEENTRYSIZE, &entry_size);
        pcre2_pattern_info(s->pattern, PCRE2_INFO_NAMETABLE, &table);
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        for (uint32_t i = 0; i < count; i++, table += entry_size) {
            int group = (table[0] << 8) | table[1];
            if (ov[2 * group] == PCRE2_UNSET)
                continue;
            char *value = strndup(name + ov[2 * group], ov[2 * group + 1] - ov[2 * group]);
            if (value && *value)
                s->host->record_set_label(r, (const char *)table + 2, value);
            free(value);
        }
    }
    pcre2_match_data_free(md);
}

static void label_record(struct state *s, struct profd_record *r, const struct profd_profile *p,
                         const char *path)
{
    const struct config *cfg = s->cfg;
    char *copy = strdup(path);
    const char *name = copy ? basename(copy) : path;
    if (s->pattern)
        add_filename_labels(s, r, name);
    for (size_t i = 0; i < cfg->labels.n; i++)
        s->host->record_set_label(r, cfg->labels.keys[i], cfg->labels.values[i]);
    if (cfg->source_label && *cfg->source_label)
        s->host->record_set_label(r, cfg->source_label, name);
    struct profd_type_names types;
    char buf[PROFD_TYPE_NAME_SIZE], err[64];
    if (!s->host->record_label(r, "__name__") &&
        s->host->record_type_names(r, &types, err, sizeof(err)) == 0)   /* from its model */
        s->host->record_set_label(r, "__name__",
                                  profile_family_of_types(&types, name, buf, sizeof(buf)));
    if (!s->host->record_label(r, "service_name"))
        s->host->record_set_label(r, "service_name", "unknown_service");
    r->time_nanos = p->time_nanos;
    r->duration_nanos = p->duration_nanos;
    free(copy);
}

/* Ingests one file; returns false when the pipeline asked to retry later. */
static bool ingest(struct state *s, const char *path, const char *identity)
{
    uint8_t *data;
    size_t len;
    char err[512];
    int rc = read_file(s, path, &data, &len, err, sizeof(err));
    if (rc == -1) {
        s->host->log(s->self, PROFD_LOG_WARN, "%s: %s", path, err);
        return true;
    }
    if (rc == -2) {
        reject(s, path, identity, err);
        return true;
    }
    bool gz = len >= 2 && data[0] == 0x1f && data[1] == 0x8b;
    struct profd_batch *b = s->host->batch_new();
    struct profd_record *r =
        s->host->record_add(b, data, len, gz ? PROFD_ENC_PPROF_GZIP : PROFD_ENC_PPROF_RAW);
    const struct profd_profile *p = s->host->record_profile(r, err, sizeof(err));
    if (!p) {
        s->host->batch_unref(b);
        reject(s, path, identity, err);
        return true;
    }
    label_record(s, r, p, path);
    struct ingest *in = calloc(1, sizeof(*in));
    if (!in || !(in->path = strdup(path)) || !(in->identity = strdup(identity)))
        abort();
    in->s = s;
    pthread_mutex_lock(&s->lock);
    s->host->labels_set(&s->in_flight, path, "");
    pthread_mutex_unlock(&s->lock);
    s->host->batch_set_ack(b, on_ack, in);
    rc = s->host->emit(s->self, b);
    if (rc == PROFD_ERETRY)
        s->host->batch_fail_acks(b);   /* the ack keeps the file for the next scan */
    s->host->batch_unref(b);
    s->host->log(s->self, PROFD_LOG_DEBUG, "ingested %s", path);
    return rc != PROFD_ERETRY;
}

static bool excluded(const struct config *cfg, const char *path)
{
    for (size_t i = 0; i < cfg->exclude.n; i++)
        if (fnmatch(cfg->exclude.items[i], path, FNM_PATHNAME) == 0)
            return true;
    return false;
}

/* A directory a glob of this thread's scan could not read, other than
 * one that is not there (glob's error callback takes no argument). */
static _Thread_local bool unreadable_directory;

static int note_unreadable(const char *path, int err)
{
    (void)path;
    unreadable_directory |= err != ENOENT && err != ENOTDIR;
    return 0;   /* the rest is read */
}

/* Reads the file at path when it is a regular file that no exclude
 * pattern names, new or changed since it was read, and not waiting at
 * now_ns (the scan's start) to be tried again; the CPU ingesting takes is
 * counted. Returns false when the pipeline has no room. */
static bool consider(struct state *s, const char *path, int64_t now_ns)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || excluded(s->cfg, path))
        return true;
    char identity[4200];
    snprintf(identity, sizeof(identity), "%s\n%lld.%09ld\n%lld", path,
             (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (long long)st.st_size);
    pthread_mutex_lock(&s->lock);
    /* Met first, so that a file in flight keeps what is remembered of it. */
    bool passed_over = seen_files_meet(s->seen, identity, now_ns);
    bool skip = passed_over || s->host->labels_get(&s->in_flight, path);
    pthread_mutex_unlock(&s->lock);
    if (skip)
        return true;
    int64_t cpu = thread_cpu_ns();
    bool go_on = ingest(s, path, identity);
    s->ingest_cpu_ns += thread_cpu_ns() - cpu;
    return go_on;
}

/* Lists every file the globs match and reads those new or changed, until
 * the pipeline has no room; a listing that read every directory the globs
 * name forgets the files left in place that it did not meet. Returns
 * false when it stopped for want of room. now_ns: the scan's start. */
static bool read_all(struct state *s, int64_t now_ns)
{
    const struct config *cfg = s->cfg;
    bool go_on = true;
    unreadable_directory = false;
    for (size_t g = 0; g < cfg->include.n && go_on; g++) {
        glob_t gl;
        int rc = glob(cfg->include.items[g], 0, note_unreadable, &gl);
        if (rc != 0) {
            unreadable_directory |= rc != GLOB_NOMATCH;
            continue;
        }
        for (size_t i = 0; i < gl.gl_pathc && go_on; i++)
            go_on = consider(s, gl.gl_pathv[i], now_ns);
        globfree(&gl);
    }
    if (go_on && !unreadable_directory) {
        pthread_mutex_lock(&s->lock);
        seen_files_sweep(s->seen);
        unsigned long remembered = seen_files_count(s->seen);
        pthread_mutex_unlock(&s->lock);
        s->host->gauge_set(s->self, "profd_pprof_file_seen_files", "Files remembered: read and "
                           "left in place (kept, or rejected where they lie), passed over until "
                           "they change, and those waiting to be tried again.",
                           "", (double)remembered);
    }
    return go_on;
}

/* One scan: every file listed when due (or when inotify lost some, or
 * watches nothing, or polls are off, since those depend on listings for
 * files to try again), else the files inotify named since the last. A
 * listing puts off the next poll by LISTING_CPU_SHARE times its CPU. */
static void scan(void *arg)
{
    struct state *s = arg;
    bool all = atomic_exchange(&s->list_all, false) || !s->events || s->cfg->poll_interval <= 0;
    struct path_list named = {0};
    if (s->events)
        all |= file_events_take(s->events, &named);
    int64_t cpu = thread_cpu_ns();
    s->ingest_cpu_ns = 0;
    bool go_on = true;
    int64_t now = monotonic_ns();
    if (all)
        go_on = read_all(s, now);
    for (size_t i = 0; i < named.n && go_on && !all; i++)
        go_on = consider(s, named.paths[i], now);
    path_list_free(&named);
    if (!go_on)   /* the rest are read by a listing, once there is room */
        atomic_store(&s->list_all, true);
    if (all) {
        int64_t listing = thread_cpu_ns() - cpu - s->ingest_cpu_ns;
        atomic_store(&s->next_poll_ns, monotonic_ns() + LISTING_CPU_SHARE * listing);
        s->host->gauge_set(s->self, "profd_pprof_file_listing_seconds", "CPU the last listing of "
                           "every file the patterns match took, besides reading new ones.", "",
                           (double)listing / 1e9);
    }
}

/* ---- events ---- */

static void scan_ended(void *arg)
{
    struct state *s = arg;
    if (s->cfg->oneshot)
        s->host->done(s->self);
}

static void on_scan(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct state *s = arg;
    aside_scan_request(&s->scan);
}

/* Every poll_interval: a listing of every file, unless the last one's
 * cost puts it off. */
static void on_poll(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct state *s = arg;
    if (monotonic_ns() < atomic_load(&s->next_poll_ns))
        return;
    atomic_store(&s->list_all, true);
    aside_scan_request(&s->scan);
}

static void on_inotify(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct state *s = arg;
    if (file_events_read(s->events))
        aside_scan_request(&s->scan);
}

/* Every REWATCH_SECONDS: the directories patterns name that were missing
 * (at start, or deleted or moved away since) are watched once they exist,
 * and a listing finds what came in them before. */
static void on_rewatch(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct state *s = arg;
    if (!file_events_rewatch(s->events))
        return;
    s->host->log(s->self, PROFD_LOG_INFO, "a directory the patterns name is there (again): "
                 "watched, and its files listed");
    atomic_store(&s->list_all, true);
    aside_scan_request(&s->scan);
}

/* Says that dir, which a pattern names, is missing: its files are read
 * once it is made, with inotify or by the next poll, or never without
 * either. */
static void say_missing(const struct state *s, const char *dir)
{
    if (s->events || s->cfg->poll_interval > 0)
        s->host->log(s->self, PROFD_LOG_INFO, "%s does not exist yet: its files are read once "
                     "it does", dir);
    else
        s->host->log(s->self, PROFD_LOG_WARN, "%s does not exist, and without inotify and "
                     "with poll_interval 0 nothing will be read from it", dir);
}

/* Watches the directory dir of pattern, or says why it cannot be: missing
 * (said once for patterns of one directory in a row, *missing being the
 * last said). Returns whether a watch was added. */
static bool watch_directory(const struct state *s, const char *pattern, const char *dir,
                            char **missing)
{
    if (s->events && file_events_watch(s->events, pattern) == 0)
        return true;
    struct stat st;
    if (!s->events && stat(dir, &st) == 0)
        return false;
    if (errno == ENOENT && (!*missing || strcmp(*missing, dir) != 0)) {
        say_missing(s, dir);
        free(*missing);
        *missing = strdup(dir);
    } else if (errno != ENOENT) {   /* ENOSPC: the user's inotify watches are all taken */
        s->host->log(s->self, PROFD_LOG_WARN, "cannot watch %s: %s; its files are found by "
                     "polling%s", dir, strerror(errno),
                     s->cfg->poll_interval > 0 ? "" : ", and with poll_interval 0 not at all");
    }
    return false;
}

/* Watches the directories the patterns name (those without a wildcard)
 * with inotify, and says which of them are missing, with inotify or
 * without it (when it cannot be had, files are found by polling alone). */
static void watch_directories(struct state *s)
{
    const struct config *cfg = s->cfg;
    s->events = file_events_new();
    if (!s->events)
        s->host->log(s->self, cfg->poll_interval > 0 ? PROFD_LOG_INFO : PROFD_LOG_WARN,
                     "inotify: %s: new files are found by polling alone%s", strerror(errno),
                     cfg->poll_interval > 0 ? "" : ", and with poll_interval 0 not at all");
    char *missing = NULL;
    for (size_t i = 0; i < cfg->include.n; i++) {
        char *copy = strdup(cfg->include.items[i]);
        const char *dir = copy ? dirname(copy) : NULL;
        if (dir && !strpbrk(dir, "*?["))
            watch_directory(s, cfg->include.items[i], dir, &missing);
        free(copy);
    }
    free(missing);
    if (s->events && !file_events_watched(s->events)) {
        file_events_free(s->events);
        s->events = NULL;
    }
    if (!s->events)
        return;
    s->inotify_ev = event_new(s->host->event_base(s->self), file_events_fd(s->events),
                              EV_READ | EV_PERSIST, on_inotify, s);
    event_add(s->inotify_ev, NULL);
    const struct timeval every = {REWATCH_SECONDS, 0};
    s->rewatch_ev = event_new(s->host->event_base(s->self), -1, EV_PERSIST, on_rewatch, s);
    event_add(s->rewatch_ev, &every);
}

/* Says at start-up which files the receiver reads (validate made sure
 * there is a pattern at least). */
static void log_patterns(const struct state *s)
{
    const struct profd_str_list *inc = &s->cfg->include;
    char line[1024] = "";
    size_t at = 0;
    for (size_t i = 0; i < inc->n && at < sizeof(line); i++)
        at += (size_t)snprintf(line + at, sizeof(line) - at, "%s%s", i ? ", " : "", inc->items[i]);
    s->host->log(s->self, PROFD_LOG_INFO, "reading %s", line);
}

static int start(void *st)
{
    struct state *s = st;
    struct event_base *base = s->host->event_base(s->self);
    s->scan = (struct aside_scan){s->host, s->self, scan, scan_ended, s};
    s->scan_ev = event_new(base, -1, 0, on_scan, s);
    if (!s->cfg->oneshot) {
        log_patterns(s);
        watch_directories(s);
        if (s->cfg->poll_interval > 0) {
            struct timeval tv = {s->cfg->poll_interval / 1000000000,
                                 (s->cfg->poll_interval % 1000000000) / 1000};
            s->poll_ev = event_new(base, -1, EV_PERSIST, on_poll, s);
            event_add(s->poll_ev, &tv);
        }
    }
    event_active(s->scan_ev, EV_TIMEOUT, 0);
    return PROFD_OK;
}

static int shutdown_(void *st)
{
    struct state *s = st;
    struct event **evs[4] = {&s->scan_ev, &s->poll_ev, &s->inotify_ev, &s->rewatch_ev};
    for (int i = 0; i < 4; i++) {
        if (*evs[i])
            event_free(*evs[i]);
        *evs[i] = NULL;
    }
    file_events_free(s->events);
    s->events = NULL;
    return PROFD_OK;
}

static void destroy(void *st)
{
    struct state *s = st;
    if (!s)
        return;
    shutdown_(s);
    pcre2_code_free(s->pattern);
    s->host->labels_clear(&s->in_flight);
    seen_files_free(s->seen);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

static const struct profd_plugin plugin = {
    PROFD_PLUGIN_HEADER,
    .kind = PROFD_RECEIVER,
    .type = "pprof_file",
    .description = "ingests pprof files (gzip or raw) dropped into directories matching globs",
    .options = options,
    .config_size = sizeof(struct config),
    .validate = validate,
    .create = create,
    .start = start,
    .shutdown = shutdown_,
    .destroy = destroy,
};

PROFD_PLUGIN_DEFINE(plugin)
