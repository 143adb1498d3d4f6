// SPDX-License-Identifier: Apache-2.0
#include "queue_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/file_io.h"
#include "alloc.h"
#include "labels.h"
#include "log.h"
#include "pprof.h"
#include "record.h"

static const char MAGIC[8] = "PROFDQR1";

struct queue_store {
    char *path;                     /* the exporter's directory */
    struct profd_metrics *metrics;  /* the exporter's: its id, the stored gauges */
    int dir_fd;                     /* path's, kept open to sync it; -1 without fsync */
    _Atomic uint64_t last;          /* the id last given to a file */
};

/* ---- the file form ---- */

static void put_le(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Writes s at p as a 4-byte length and its bytes; returns what follows. */
static uint8_t *put_string(uint8_t *p, const char *s)
{
    size_t n = strlen(s);
    put_le(p, n, 4);
    memcpy(p + 4, s, n);
    return p + 4 + n;
}

int queue_store_encode(struct profd_record *r, uint8_t **out, size_t *len, char *err,
                       size_t errlen)
{
    const uint8_t *pprof;
    size_t pprof_len;
    uint8_t *owned = NULL;
    if (profd_record_pprof_view(r, true, false, &pprof, &pprof_len, &owned, err, errlen) < 0)
        return -1;
    size_t n = sizeof(MAGIC) + 8 + 8 + 8 + 4 + 8 + pprof_len;
    for (size_t i = 0; i < r->labels.n; i++)
        n += 8 + strlen(r->labels.items[i].name) + strlen(r->labels.items[i].value);
    uint8_t *p = *out = profd_xmalloc(n);
    memcpy(p, MAGIC, sizeof(MAGIC));
    p += sizeof(MAGIC);
    put_le(p, (uint64_t)r->time_nanos, 8);
    put_le(p + 8, (uint64_t)r->duration_nanos, 8);
    put_le(p + 16, r->max_decoded, 8);
    put_le(p + 24, r->labels.n, 4);
    p += 28;
    for (size_t i = 0; i < r->labels.n; i++) {
        p = put_string(p, r->labels.items[i].name);
        p = put_string(p, r->labels.items[i].value);
    }
    put_le(p, pprof_len, 8);
    memcpy(p + 8, pprof, pprof_len);
    *len = n;
    free(owned);
    return 0;
}

/* A reader of a file's bytes that says where it stopped. */
struct cursor {
    const uint8_t *start, *p, *end;
};

/* The next n-byte little-endian number of c into *v; false when the file
 * ends first. */
static bool take_number(struct cursor *c, unsigned n, uint64_t *v)
{
    if ((size_t)(c->end - c->p) < n)
        return false;
    *v = get_le(c->p, n);
    c->p += n;
    return true;
}

/* The next string of c (a 4-byte length, then bytes with no NUL),
 * malloc'd; NULL when cut short or holding a NUL. */
static char *take_string(struct cursor *c)
{
    uint64_t n;
    if (!take_number(c, 4, &n) || n > (size_t)(c->end - c->p) || memchr(c->p, 0, n))
        return NULL;
    char *s = profd_xmalloc(n + 1);
    memcpy(s, c->p, n);
    s[n] = '\0';
    c->p += n;
    return s;
}

struct profd_record *queue_store_decode(struct profd_batch *b, const uint8_t *data, size_t len,
                                        char *err, size_t errlen)
{
    struct cursor c = {data, data, data + len};
    uint64_t time, duration, max_decoded, nlabels, pprof_len;
    if (len < sizeof(MAGIC) || memcmp(data, MAGIC, sizeof(MAGIC))) {
        snprintf(err, errlen, "not a queued record (no PROFDQR1 at byte 0)");
        return NULL;
    }
    c.p += sizeof(MAGIC);
    if (!take_number(&c, 8, &time) || !take_number(&c, 8, &duration) ||
        !take_number(&c, 8, &max_decoded) || !take_number(&c, 4, &nlabels)) {
        snprintf(err, errlen, "cut short at byte %zu", (size_t)(c.p - c.start));
        return NULL;
    }
    struct profd_labels labels = {0};
    for (uint64_t i = 0; i < nlabels; i++) {
        size_t at = (size_t)(c.p - c.start);
        char *name = take_string(&c), *value = name ? take_string(&c) : NULL;
        const char *wrong = !value ? "cut short, or a NUL byte in it" : !*name ? "an empty name"
                                                                                : NULL;
        if (!wrong)
            profd_labels_set(&labels, name, value);
        free(name);
        free(value);
        if (wrong) {
            snprintf(err, errlen, "label %" PRIu64 " at byte %zu: %s", i, at, wrong);
            profd_labels_clear(&labels);
            return NULL;
        }
    }
    size_t at = (size_t)(c.p - c.start);
    if (!take_number(&c, 8, &pprof_len) || pprof_len != (uint64_t)(c.end - c.p)) {
        snprintf(err, errlen, "the profile at byte %zu is not the rest of the file", at);
        profd_labels_clear(&labels);
        return NULL;
    }
    /* the limit the receiver had, or the default's when the file says more */
    if (max_decoded > PROFD_PPROF_MAX_DECODED)
        max_decoded = PROFD_PPROF_MAX_DECODED;
    char why[256];
    struct profd_record *r = profd_record_add_pprof(b, c.p, pprof_len, max_decoded, why,
                                                    sizeof(why));
    if (!r) {
        snprintf(err, errlen, "the profile at byte %zu: %s", at + 8, why);
        profd_labels_clear(&labels);
        return NULL;
    }
    profd_labels_clear(&r->labels);
    r->labels = labels;
    r->time_nanos = (int64_t)time;
    r->duration_nanos = (int64_t)duration;
    return r;
}

/* ---- the directory ---- */

/* The path of file id of s ("<20 digits>.rec", which sort as the ids do),
 * or of its temporary name. */
static void file_path(const struct queue_store *s, uint64_t id, bool temporary, char *out,
                      size_t outlen)
{
    snprintf(out, outlen, "%s/%020" PRIu64 ".%s", s->path, id, temporary ? "tmp" : "rec");
}

/* The id a file named name has ("<digits>.rec"), or 0. */
static uint64_t id_of(const char *name)
{
    char *end;
    errno = 0;
    uint64_t id = strtoull(name, &end, 10);
    return end != name && !errno && !strcmp(end, ".rec") ? id : 0;
}

struct queue_store *queue_store_open(const char *dir, struct profd_metrics *m, bool fsync,
                                     char *why, size_t whylen)
{
    struct queue_store *s = profd_xcalloc(1, sizeof(*s));
    s->metrics = m;
    s->dir_fd = -1;
    char *own = profd_xstrdup(m->id);
    for (char *p = own; *p; p++)
        if (*p == '/')
            *p = '_';   /* otlp/backend: otlp_backend */
    if (asprintf(&s->path, "%s/%s/", dir, own) < 0)
        abort();
    free(own);
    if (make_parents(s->path) < 0) {
        snprintf(why, whylen, "%s cannot be made: %s", s->path, strerror(errno));
        queue_store_close(s);
        return NULL;
    }
    s->path[strlen(s->path) - 1] = '\0';
    DIR *d = opendir(s->path);
    if (!d || (fsync && (s->dir_fd = open(s->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)) {
        snprintf(why, whylen, "%s cannot be read: %s", s->path, strerror(errno));
        if (d)
            closedir(d);
        queue_store_close(s);
        return NULL;
    }
    for (struct dirent *e; (e = readdir(d));)
        if (id_of(e->d_name) > s->last)
            s->last = id_of(e->d_name);
    closedir(d);
    atomic_store(&m->gauges[PROFD_G_STORED_RECORDS], 0);
    atomic_store(&m->gauges[PROFD_G_STORED_BYTES], 0);
    return s;
}

const char *queue_store_path(const struct queue_store *s)
{
    return s->path;
}

/* Counts a file of len bytes in (sign 1) or out (-1) of the gauges. */
static void count_stored(const struct queue_store *s, int sign, size_t len)
{
    atomic_fetch_add(&s->metrics->gauges[PROFD_G_STORED_RECORDS], sign);
    atomic_fetch_add(&s->metrics->gauges[PROFD_G_STORED_BYTES], sign * (int64_t)len);
}

/* Writes data to the file of id, under a temporary name first, synced
 * before it is renamed when the store syncs: 0, or -1 with errno set. */
static int write_file(const struct queue_store *s, uint64_t id, const uint8_t *data, size_t len)
{
    char tmp[4096], path[4096];
    file_path(s, id, true, tmp, sizeof(tmp));
    file_path(s, id, false, path, sizeof(path));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    int rc = write_all(fd, data, len);
    if (rc == 0 && s->dir_fd >= 0)
        rc = fsync(fd);
    int saved = errno;
    if (close(fd) < 0 && rc == 0) {
        rc = -1;
        saved = errno;
    }
    if (rc == 0 && rename(tmp, path) < 0) {
        rc = -1;
        saved = errno;
    }
    if (rc < 0)
        unlink(tmp);
    errno = saved;
    return rc;
}

void queue_store_write(struct queue_store *s, struct profd_batch *b, struct stored_file *files)
{
    const char *component = s->metrics->id;
    size_t written = 0;
    for (size_t i = 0; i < b->nrecords; i++) {
        uint8_t *data;
        size_t len;
        char err[256];
        files[i] = (struct stored_file){0, 0};
        if (queue_store_encode(b->records[i], &data, &len, err, sizeof(err)) < 0) {
            profd_log(PROFD_LOG_WARN, component, "a record is queued but not stored: %s", err);
            continue;
        }
        uint64_t id = atomic_fetch_add(&s->last, 1) + 1;
        if (write_file(s, id, data, len) == 0) {
            files[i] = (struct stored_file){id, len};
            count_stored(s, 1, len);
            written++;
        } else {
            profd_log(PROFD_LOG_WARN, component, "a record is queued but not stored in %s: %s",
                      s->path, strerror(errno));
        }
        free(data);
    }
    if (written && s->dir_fd >= 0 && fsync(s->dir_fd) < 0)
        profd_log(PROFD_LOG_WARN, component, "%s cannot be synced: %s; %zu record(s) stored "
                  "may not outlive a crash of the machine", s->path, strerror(errno), written);
}

void queue_store_remove(struct queue_store *s, struct stored_file f)
{
    char path[4096];
    if (!f.id)
        return;
    file_path(s, f.id, false, path, sizeof(path));
    if (unlink(path) == 0)
        count_stored(s, -1, f.bytes);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int queued_file(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return n > 4 && (!strcmp(e->d_name + n - 4, ".rec") || !strcmp(e->d_name + n - 4, ".tmp"));
}

/* Moves the file name of s into rejected/, with why beside it. */
static void reject(struct queue_store *s, const char *name, const char *why)
{
    const char *component = s->metrics->id;
    char from[4096], to[4096], text[4200];
    snprintf(from, sizeof(from), "%s/%s", s->path, name);
    snprintf(to, sizeof(to), "%s/rejected/%s", s->path, name);
    profd_log(PROFD_LOG_ERROR, component, "%s: %s; moved to rejected/", from, why);
    if (make_parents(to) < 0 || rename(from, to) < 0) {
        unlink(from);
        return;
    }
    snprintf(text, sizeof(text), "%s\n", why);
    snprintf(to, sizeof(to), "%s/rejected/%s.error", s->path, name);
    int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) {
        write_all(fd, text, strlen(text));
        close(fd);
    }
}

/* Adds to b the record of the file name of s (path its path): true; else
 * false, the file moved into rejected/. */
static bool read_back(struct queue_store *s, const char *name, const char *path,
                      struct profd_batch *b)
{
    char err[512];
    size_t len = 0;
    char *data = read_small_file(path, (size_t)1 << 40, &len);
    bool ok = false;
    if (!data) {
        snprintf(err, sizeof(err), "cannot be read: %s", strerror(errno));
        reject(s, name, err);
    } else if (!queue_store_decode(b, (const uint8_t *)data, len, err, sizeof(err))) {
        reject(s, name, err);
    } else {
        ok = true;
    }
    free(data);
    return ok;
}

int queue_store_list(struct queue_store *s, struct stored_file **files, size_t *n)
{
    struct dirent **names;
    int found = scandir(s->path, &names, queued_file, by_name);
    *files = NULL;
    *n = 0;
    if (found < 0) {
        profd_log(PROFD_LOG_ERROR, s->metrics->id, "%s cannot be read: %s", s->path,
                  strerror(errno));
        return -1;
    }
    *files = profd_xcalloc((size_t)found + 1, sizeof(**files));
    for (int i = 0; i < found; i++) {
        char path[4096];
        struct stat st;
        uint64_t id = id_of(names[i]->d_name);
        snprintf(path, sizeof(path), "%s/%s", s->path, names[i]->d_name);
        if (!id) {   /* a write cut short by a crash */
            unlink(path);
        } else if (stat(path, &st) == 0) {
            (*files)[(*n)++] = (struct stored_file){id, (size_t)st.st_size};
            count_stored(s, 1, (size_t)st.st_size);
        }
        free(names[i]);
    }
    free(names);
    return 0;
}

size_t queue_store_load(struct queue_store *s, const struct stored_file *files, size_t n,
                        struct profd_batch *b, struct stored_file *loaded)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        struct stored_file f = files[i];
        file_path(s, f.id, false, path, sizeof(path));
        if (read_back(s, strrchr(path, '/') + 1, path, b))
            loaded[k++] = f;
        else   /* moved aside: no longer stored */
            count_stored(s, -1, f.bytes);
    }
    return k;
}

void queue_store_close(struct queue_store *s)
{
    if (!s)
        return;
    if (s->dir_fd >= 0)
        close(s->dir_fd);
    free(s->path);
    free(s);
}
