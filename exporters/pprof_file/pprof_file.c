// SPDX-License-Identifier: Apache-2.0
/*
 * exporter pprof_file: writes each record as a pprof file under a directory,
 * named from a template of series labels and time. Writes are atomic (an
 * unnamed O_TMPFILE linked in, or where that is missing a temp file linked
 * or renamed), optionally fsync'd, and old files are removed by age, count
 * and total size.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/clock.h"
#include "../../lib/file_io.h"
#include "../../lib/hash.h"
#include "dir_cache.h"
#include "profd/plugin.h"
#include "retention_runner.h"
#include "template.h"

enum { COMPRESS_AUTO, COMPRESS_GZIP, COMPRESS_NONE };
static const char *const compressions[] = {"auto", "gzip", "none", NULL};

struct config {
    char *directory;
    char *path_template;
    int compression;
    bool reencode, overwrite, fsync, to_stdout;
    struct {
        struct retention_limits limits;
        int64_t check_interval;
    } retention;
};

static const struct profd_option retention_options[] = {
    {"max_age", PROFD_OPT_DURATION, offsetof(struct config, retention.limits.max_age) -
     offsetof(struct config, retention), "0s", "remove files older than this; 0 keeps them"},
    {"max_files", PROFD_OPT_INT, offsetof(struct config, retention.limits.max_files) -
     offsetof(struct config, retention), "0", "keep at most this many files; 0 = no limit"},
    {"max_bytes", PROFD_OPT_SIZE, offsetof(struct config, retention.limits.max_bytes) -
     offsetof(struct config, retention), "0", "keep at most this many bytes; 0 = no limit"},
    {"check_interval", PROFD_OPT_DURATION, offsetof(struct config, retention.check_interval) -
     offsetof(struct config, retention), "1m",
     "how often the limits are enforced (on a thread of its own, and sooner when what was "
     "written since may break max_files or max_bytes); 0 checks after every file"},
    {0},
};

static const struct profd_option options[] = {
    {"directory", PROFD_OPT_STRING, offsetof(struct config, directory), "./profiles",
     "where profiles are written"},
    {"path_template", PROFD_OPT_STRING, offsetof(struct config, path_template),
     "\"{__name__}/{service_name}/{time}.pb.gz\"",
     "file path under directory: {label}, {time}, {date}, {unix_nanos}"},
    {"compression", PROFD_OPT_ENUM, offsetof(struct config, compression), "auto",
     "gzip, none, or auto (gzip unless the name ends in .pb)", .choices = compressions},
    {"reencode", PROFD_OPT_BOOL, offsetof(struct config, reencode), "false",
     "decode and re-encode even when the original bytes could be written"},
    {"overwrite", PROFD_OPT_BOOL, offsetof(struct config, overwrite), "false",
     "replace an existing file instead of adding a -N suffix"},
    {"fsync", PROFD_OPT_BOOL, offsetof(struct config, fsync), "false",
     "fsync each file and its directory before counting it written"},
    {"to_stdout", PROFD_OPT_BOOL, offsetof(struct config, to_stdout), "false",
     "write to standard output instead of files (profd convert -o -)"},
    {"retention", PROFD_OPT_OBJECT, offsetof(struct config, retention), NULL,
     "limits on what is kept in directory", retention_options},
    {0},
};

/* How many names found taken are remembered (by hash, a slot each). */
#define TAKEN_SLOTS 256

struct state {
    const struct profd_host *host;
    struct profd_component *self;
    const struct config *cfg;
    atomic_uint seq;          /* names temp files */
    atomic_uint collisions;   /* suffixes for names already taken */
    /* Hashes of names found taken: the next profile named the same goes
     * straight to a suffix (profiles of one series and time, a burst of
     * one service's instances) instead of trying the name again. */
    _Atomic uint64_t taken[TAKEN_SLOTS];
    atomic_bool unnamed_works;   /* O_TMPFILE and /proc/self/fd are there */
    atomic_bool empty_path_works;   /* linkat(fd, "", AT_EMPTY_PATH) is allowed */
    struct dir_cache *dirs;         /* the directories written into, kept open */
    struct retention_runner *retention;   /* NULL: no limits, or not started */
    int retention_err;              /* the errno the last check failed with, or 0 */
};

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

static int validate(const struct profd_host *host, struct profd_diag *d, const void *cfgp)
{
    const struct config *cfg = cfgp;
    const char *err;
    int rc = PROFD_OK;
    if (!cfg->to_stdout && (!cfg->directory || !*cfg->directory)) {
        host->diag(d, &cfg->directory, "directory must not be empty");
        rc = PROFD_ERR;
    }
    if (!pprof_file_template_check(cfg->path_template, &err)) {
        host->diag(d, &cfg->path_template, "path_template '%s': %s", cfg->path_template, err);
        rc = PROFD_ERR;
    }
    if (cfg->retention.limits.max_files < 0) {
        host->diag(d, &cfg->retention.limits.max_files, "retention.max_files must be >= 0");
        rc = PROFD_ERR;
    }
    return rc;
}

static int create(const struct profd_host *host, struct profd_component *self, const void *cfg,
                  void **out)
{
    struct state *s = calloc(1, sizeof(*s));
    if (!s || !(s->dirs = dir_cache_new())) {
        free(s);
        return PROFD_ERR;
    }
    s->host = host;
    s->self = self;
    s->cfg = cfg;
    atomic_init(&s->unnamed_works, true);
    atomic_init(&s->empty_path_works, true);
    *out = s;
    return PROFD_OK;
}

/* A file's path and the name it was written under: at most PATH_MAX. */
typedef char path_buf[PATH_MAX];

/* Writes into dir the directory part of path ("." when it has none). */
static void dir_of(const char *path, path_buf dir)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        strcpy(dir, ".");
        return;
    }
    memcpy(dir, path, (size_t)(slash - path));
    dir[slash - path] = '\0';
}

static void fsync_dir_of(const char *path)
{
    path_buf dir;
    dir_of(path, dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

/* A nonzero hash of a file name. */
static uint64_t name_hash(const char *name)
{
    return hash_bytes(name, strlen(name)) | 1;
}

/* Links the file (from_dir, from) names (a path; "/proc/self/fd/N" or, with
 * AT_EMPTY_PATH, the descriptor itself for an O_TMPFILE) to final without
 * replacing anything; final + base names it relative to to_dir. When the
 * name is taken, a suffix -N goes before the extension, N from a counter
 * that only grows, so a burst of profiles with one timestamp costs one
 * extra try each, not a scan; and once a name was found taken, the next
 * profile named the same is given a suffix without trying it (a name freed
 * meanwhile is not given back, which never overwrites). Returns 0 with the
 * name (the whole path) in written, or -1 with errno. */
static int link_new(struct state *s, int from_dir, const char *from, int flags, int to_dir,
                    const char *final, size_t base, path_buf written)
{
    const char *ext = has_suffix(final, ".pb.gz") ? ".pb.gz"
                      : has_suffix(final, ".pb") ? ".pb" : "";
    size_t final_len = strlen(final), stem = final_len - strlen(ext);
    uint64_t hash = name_hash(final);
    _Atomic uint64_t *taken = &s->taken[hash % TAKEN_SLOTS];
    int first = atomic_load_explicit(taken, memory_order_relaxed) == hash;
    for (int attempt = first; attempt < 1000; attempt++) {
        int n = (int)final_len;
        if (attempt == 0) {
            memcpy(written, final, final_len + 1);
        } else {
            n = snprintf(written, PATH_MAX, "%.*s-%u%s", (int)stem, final,
                         atomic_fetch_add(&s->collisions, 1) + 1, ext);
        }
        if (n < 0 || n >= PATH_MAX) {
            errno = ENAMETOOLONG;
            return -1;
        }
        if (linkat(from_dir, from, to_dir, written + base, flags) == 0)
            return 0;
        if (errno != EEXIST)
            return -1;
        if (attempt == 0)
            atomic_store_explicit(taken, hash, memory_order_relaxed);
    }
    errno = EEXIST;
    return -1;
}

/* Links the unnamed file fd in as path, whose name starts at base and is
 * relative to dir_fd: 0, or -1 with the error in *e. */
static int link_unnamed(struct state *s, int fd, int dir_fd, const char *path, size_t base,
                        path_buf written, int *e)
{
    /* The descriptor itself needs CAP_DAC_READ_SEARCH (ENOENT without it);
     * its /proc name costs a walk of /proc per file. The descriptor is
     * given up for good only when its /proc name then works, so that an
     * ENOENT with another cause (the directory removed meanwhile) does not
     * switch it off. */
    bool by_descriptor = s->empty_path_works;
    int rc = -1;
    *e = ENOENT;
    if (by_descriptor) {
        rc = link_new(s, fd, "", AT_EMPTY_PATH, dir_fd, path, base, written);
        *e = errno;
    }
    if (rc < 0 && (!by_descriptor || *e == ENOENT || *e == EPERM)) {
        char proc[64];
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        rc = link_new(s, AT_FDCWD, proc, AT_SYMLINK_FOLLOW, dir_fd, path, base, written);
        *e = errno;
        if (by_descriptor && rc == 0)
            s->empty_path_works = false;
    }
    return rc;
}

/* Writes data to an unnamed file in dir (O_TMPFILE) and links it in as
 * path: one directory entry made, none removed. 1 when written, 0 when the
 * file system or /proc cannot do it (the caller uses a named temporary
 * file), -1 with errno (ENOENT: the directory is missing). */
static int write_unnamed(struct state *s, const char *dir, const char *path,
                         const uint8_t *data, size_t len, path_buf written)
{
    int dir_fd;
    struct dir_entry *d = dir_cache_get(s->dirs, dir, &dir_fd);
    if (!d)
        return -1;
    const char *slash = strrchr(path, '/');
    size_t base = slash ? (size_t)(slash - path + 1) : 0;
    int fd = openat(dir_fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) {   /* the kept directory may be gone (ENOENT on tmpfs, EPERM on ext4) */
        dir_cache_forget(s->dirs, d);
        if (!(d = dir_cache_get(s->dirs, dir, &dir_fd)))
            return -1;
        fd = openat(dir_fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
    }
    int rc = -1, e = errno;
    if (fd >= 0) {
        if (write_all(fd, data, len) < 0 || (s->cfg->fsync && fsync(fd) < 0))
            e = errno;
        else if ((rc = link_unnamed(s, fd, dir_fd, path, base, written, &e)) == 0)
            e = 0;
        close(fd);
    }
    if (e == ENOENT)   /* the directory went away since it was opened */
        dir_cache_forget(s->dirs, d);
    else
        dir_cache_put(s->dirs, d);
    errno = e;
    if (fd < 0)
        return e == ENOENT ? -1 : 0;
    return rc == 0 ? 1 : e == ENOENT && access("/proc/self/fd", F_OK) != 0 ? 0 : -1;
}

/* Writes data to a temporary file next to path and moves it into place:
 * renamed over path with overwrite, else linked to a free name. */
static int write_named(struct state *s, const char *path, const uint8_t *data, size_t len,
                       path_buf written)
{
    path_buf tmp;
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path + 1) : 0;
    int n = snprintf(tmp, sizeof(tmp), "%.*s.%s.tmp.%d.%u", (int)dirlen, path,
                     slash ? slash + 1 : path, (int)getpid(), atomic_fetch_add(&s->seq, 1));
    if (n < 0 || n >= (int)sizeof(tmp)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    int rc = fd < 0 || write_all(fd, data, len) < 0 || (s->cfg->fsync && fsync(fd) < 0) ? -1 : 0;
    int e = errno;
    if (fd >= 0)
        close(fd);
    if (rc == 0 && s->cfg->overwrite) {
        snprintf(written, PATH_MAX, "%s", path);
        rc = rename(tmp, path);
        e = errno;
    } else if (rc == 0) {
        rc = link_new(s, AT_FDCWD, tmp, 0, AT_FDCWD, path, 0, written);
        e = errno;
    }
    if (fd >= 0 && !(rc == 0 && s->cfg->overwrite))
        unlink(tmp);
    errno = e;
    return rc;
}

/* One attempt at writing path: 0, or -1 with errno. */
static int write_once(struct state *s, const char *dir, const char *path, const uint8_t *data,
                      size_t len, path_buf written)
{
    if (!s->cfg->overwrite && s->unnamed_works) {
        int rc = write_unnamed(s, dir, path, data, len, written);
        if (rc != 0)
            return rc > 0 ? 0 : -1;
        s->unnamed_works = false;
        s->host->log(s->self, PROFD_LOG_INFO, "no unnamed files (O_TMPFILE) in %s: named "
                     "temporary files from now on", dir);
    }
    return write_named(s, path, data, len, written);
}

static int write_file(struct state *s, const char *path, const uint8_t *data, size_t len)
{
    path_buf dir, written;
    dir_of(path, dir);
    int rc = write_once(s, dir, path, data, len, written);
    if (rc < 0 && errno == ENOENT) {   /* first file of a new directory */
        path_buf parents;
        snprintf(parents, sizeof(parents), "%s", path);
        if (make_parents(parents) < 0) {
            s->host->log(s->self, PROFD_LOG_ERROR, "cannot create the directories of %s: %s",
                         path, strerror(errno));
            return PROFD_ERETRY;
        }
        rc = write_once(s, dir, path, data, len, written);
    }
    if (rc < 0) {
        int e = errno;
        s->host->log(s->self, PROFD_LOG_ERROR, "cannot write %s: %s%s", path, strerror(e),
                     e == ENAMETOOLONG ? " (the template's name is too long for this profile's "
                                         "labels; the profile is refused)" : "");
        return e == ENAMETOOLONG ? PROFD_ERR : PROFD_ERETRY;   /* a name never fits later */
    }
    if (s->cfg->fsync)
        fsync_dir_of(written);
    if (s->retention)
        retention_runner_wrote(s->retention, len);
    s->host->log(s->self, PROFD_LOG_DEBUG, "wrote %s (%zu bytes)", written, len);
    return PROFD_OK;
}

/* What a retention check did, on the retention thread: removals and
 * failures logged (a failure once until it changes), what is kept on
 * /metrics. */
static void retention_report(void *arg, int rc, int err, const struct retention_result *r,
                             int64_t took_ns)
{
    struct state *s = arg;
    const struct profd_host *h = s->host;
    if (r->removed || r->removed_dirs)
        h->log(s->self, PROFD_LOG_INFO, "retention removed %llu file(s) and %llu empty "
               "director%s, kept %llu (%llu bytes), in %.3f s", (unsigned long long)r->removed,
               (unsigned long long)r->removed_dirs, r->removed_dirs == 1 ? "y" : "ies",
               (unsigned long long)r->files, (unsigned long long)r->bytes,
               (double)took_ns / 1e9);
    if (rc < 0 && err != s->retention_err)
        h->log(s->self, PROFD_LOG_WARN, "retention cannot read %s: %s", s->cfg->directory,
               strerror(err));
    s->retention_err = rc < 0 ? err : 0;
    if (rc < 0)
        return;
    h->gauge_set(s->self, "profd_pprof_file_kept_files", "Profile files retention kept under "
                 "directory at its last check.", "", (double)r->files);
    h->gauge_set(s->self, "profd_pprof_file_kept_bytes", "Their bytes.", "", (double)r->bytes);
    h->gauge_set(s->self, "profd_pprof_file_retention_check_seconds", "How long the last "
                 "retention check took.", "", (double)took_ns / 1e9);
}

/* Starts retention when a limit is set: 0, or -1 when its thread cannot
 * be made. */
static int start_retention(struct state *s)
{
    const struct config *cfg = s->cfg;
    const struct retention_limits *lim = &cfg->retention.limits;
    if (!lim->max_age && !lim->max_files && !lim->max_bytes)
        return 0;
    s->retention = retention_runner_start(cfg->directory, lim, cfg->retention.check_interval,
                                          retention_report, s);
    return s->retention ? 0 : -1;
}

/* Writes into path the directory, a slash and r's name from the template:
 * false when that does not fit. */
static bool path_of(const struct config *cfg, const struct profd_record *r, path_buf path)
{
    size_t prefix = 0;   /* the directory and its slash */
    if (!cfg->to_stdout) {
        prefix = strlen(cfg->directory) + 1;
        if (prefix >= PATH_MAX)
            return false;
        memcpy(path, cfg->directory, prefix - 1);
        path[prefix - 1] = '/';
    }
    return pprof_file_template_expand(cfg->path_template, r, realtime_ns(), path + prefix,
                                      PATH_MAX - prefix) != SIZE_MAX;
}

static int export_record(struct state *s, struct profd_record *r)
{
    const struct config *cfg = s->cfg;
    path_buf path;
    if (!path_of(cfg, r, path)) {
        s->host->log(s->self, PROFD_LOG_ERROR, "the path of a profile under %s is too long",
                     cfg->to_stdout ? "stdout" : cfg->directory);
        return PROFD_ERR;
    }
    bool gzip = cfg->compression == COMPRESS_GZIP ||
                (cfg->compression == COMPRESS_AUTO && !has_suffix(path, ".pb"));
    const uint8_t *data;
    uint8_t *owned;
    size_t len = 0;
    char err[512];
    int rc;
    if (s->host->record_pprof_view(r, gzip, cfg->reencode, &data, &len, &owned, err,
                                   sizeof(err)) < 0) {
        s->host->log(s->self, PROFD_LOG_ERROR, "cannot encode %s: %s", path, err);
        rc = PROFD_ERR;
    } else if (cfg->to_stdout) {
        rc = write_all(STDOUT_FILENO, data, len) == 0 ? PROFD_OK : PROFD_ERR;
    } else {
        rc = write_file(s, path, data, len);
    }
    free(owned);
    return rc;
}

/* Writes each record of b not written yet (a retry writes none twice); one
 * that cannot be written is refused alone, and the others still go. */
static int consume(void *st, struct profd_batch *b)
{
    struct state *s = st;
    int rc = PROFD_OK;
    for (size_t i = 0; i < b->nrecords && rc == PROFD_OK; i++) {
        if (s->host->export_settled(s->self, i))
            continue;
        int r = export_record(s, b->records[i]);
        if (r == PROFD_ERETRY)
            rc = r;   /* retried from this record */
        else
            s->host->export_settle(s->self, i, r == PROFD_OK);
    }
    return rc;
}

static int start(void *st)
{
    struct state *s = st;
    if (s->cfg->to_stdout)
        return PROFD_OK;
    char *dir;
    if (asprintf(&dir, "%s/", s->cfg->directory) < 0)
        return PROFD_ERR;
    int rc = make_parents(dir);
    free(dir);
    if (rc < 0) {
        s->host->log(s->self, PROFD_LOG_ERROR, "cannot create %s: %s", s->cfg->directory,
                     strerror(errno));
        return PROFD_ERR;
    }
    s->host->log(s->self, PROFD_LOG_INFO, "writing %s/%s", s->cfg->directory,
                 s->cfg->path_template);
    if (start_retention(s) < 0) {
        s->host->log(s->self, PROFD_LOG_ERROR, "cannot start the retention thread");
        return PROFD_ERR;
    }
    return PROFD_OK;
}

/* After the queue drained: no check runs once the exporter stopped. */
static int shutdown(void *st)
{
    struct state *s = st;
    retention_runner_stop(s->retention);
    s->retention = NULL;
    return PROFD_OK;
}

static void destroy(void *st)
{
    struct state *s = st;
    if (!s)
        return;
    retention_runner_stop(s->retention);
    dir_cache_free(s->dirs);
    free(s);
}

static const struct profd_plugin plugin = {
    PROFD_PLUGIN_HEADER,
    .kind = PROFD_EXPORTER,
    .type = "pprof_file",
    .flags = PROFD_PLUGIN_MERGES_BATCHES,
    .description = "writes profiles as pprof files, named from labels and time, with retention",
    .options = options,
    .config_size = sizeof(struct config),
    .validate = validate,
    .create = create,
    .start = start,
    .consume = consume,
    .shutdown = shutdown,
    .destroy = destroy,
};

PROFD_PLUGIN_DEFINE(plugin)
