// SPDX-License-Identifier: Apache-2.0
#include "retention.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/clock.h"
#include "age_histogram.h"

/* Directories below this many levels are not walked: a descriptor is
 * open for each level. */
#define MAX_DEPTH 64
/* An empty directory is removed when it was unchanged for this long when
 * the check came to it: a writer between making one and putting its file
 * in is not raced. */
#define EMPTY_DIR_QUIET_NS 10000000000LL

/* A file that may have to go for max_files or max_bytes. */
struct candidate {
    int64_t mtime_ns;
    uint64_t size;
    char *path;   /* relative to the checked directory */
};

/* One walk of the checked directory. */
struct pass {
    int root_fd;
    int64_t cutoff;           /* files modified before it go as met; INT64_MIN: none */
    int64_t started;          /* files modified since are left to the next check */
    const atomic_bool *stop;
    struct candidate *oldest; /* a max-heap by age: [0] is the youngest of them */
    size_t n, cap;
    struct age_histogram *ages;   /* of the files counted; NULL without cap */
    uint64_t files, bytes, removed, removed_dirs;
    int64_t removing_ns;      /* spent in unlinkat */
    char path[PATH_MAX];      /* the directory being walked, relative to root_fd */
};

static bool is_profile(const char *name)
{
    size_t n = strlen(name);
    if (name[0] == '.')
        return false;   /* temp files being written */
    return (n > 3 && !strcmp(name + n - 3, ".pb")) || (n > 6 && !strcmp(name + n - 6, ".pb.gz"));
}

/* unlinkat(dir_fd, path, flags), its time counted: 0, or -1 with errno. */
static int remove_entry(struct pass *p, int dir_fd, const char *path, int flags)
{
    int64_t start = monotonic_ns();
    int rc = unlinkat(dir_fd, path, flags);
    int e = errno;
    p->removing_ns += monotonic_ns() - start;
    errno = e;
    return rc;
}

static bool stopped(const struct pass *p)
{
    return p->stop && atomic_load_explicit(p->stop, memory_order_relaxed);
}

/* Whether a was modified after b (by path when at the same time): the
 * order files go in, b first. */
static bool younger(int64_t a_mtime, const char *a_path, const struct candidate *b)
{
    return a_mtime != b->mtime_ns ? a_mtime > b->mtime_ns : strcmp(a_path, b->path) > 0;
}

static void swap(struct candidate *a, struct candidate *b)
{
    struct candidate t = *a;
    *a = *b;
    *b = t;
}

static void sift_down(struct candidate *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, top = i;
        if (l < n && younger(h[l].mtime_ns, h[l].path, &h[top]))
            top = l;
        if (r < n && younger(h[r].mtime_ns, h[r].path, &h[top]))
            top = r;
        if (top == i)
            return;
        swap(&h[i], &h[top]);
        i = top;
    }
}

/* Keeps the file at p->path among the cap oldest seen. */
static void offer(struct pass *p, int64_t mtime_ns, uint64_t size)
{
    if (!p->cap || (p->n == p->cap && younger(mtime_ns, p->path, &p->oldest[0])))
        return;
    char *path = strdup(p->path);
    if (!path)
        return;   /* not a candidate this pass: the next check sees it again */
    struct candidate c = {mtime_ns, size, path};
    if (p->n == p->cap) {
        free(p->oldest[0].path);
        p->oldest[0] = c;
        sift_down(p->oldest, p->n, 0);
        return;
    }
    size_t i = p->n++;
    p->oldest[i] = c;
    while (i > 0 && younger(p->oldest[i].mtime_ns, p->oldest[i].path, &p->oldest[(i - 1) / 2])) {
        swap(&p->oldest[i], &p->oldest[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
}

static int64_t mtime_ns_of(const struct stat *st)
{
    return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* A profile file, name in dir_fd (p->path its path): removed when past
 * max_age, else counted and offered, unless it is newer than the check
 * (whoever wrote it counts it: see retention_runner.c). Returns whether
 * it is gone. */
static bool visit_file(struct pass *p, int dir_fd, const char *name, const struct stat *st)
{
    int64_t mtime_ns = mtime_ns_of(st);
    if (mtime_ns >= p->started)
        return false;
    if (mtime_ns < p->cutoff) {
        if (remove_entry(p, dir_fd, name, 0) == 0) {
            p->removed++;
            return true;
        }
        if (errno == ENOENT)
            return true;
    }
    p->files++;
    p->bytes += (uint64_t)st->st_size;
    if (p->ages)
        age_histogram_add(p->ages, (uint64_t)(p->started - mtime_ns), (uint64_t)st->st_size);
    offer(p, mtime_ns, (uint64_t)st->st_size);
    return false;
}

/* Removes the directory name in dir_fd, which its walk left empty, when
 * it had been unchanged long enough before (until changed_ns) and is not
 * one to keep: its name not hidden, nor the file system's lost+found.
 * Returns whether it is gone. */
static bool remove_empty_dir(struct pass *p, int dir_fd, const char *name, int64_t changed_ns)
{
    if (name[0] == '.' || !strcmp(name, "lost+found") ||
        changed_ns >= p->started - EMPTY_DIR_QUIET_NS)
        return false;
    if (remove_entry(p, dir_fd, name, AT_REMOVEDIR) != 0)
        return errno == ENOENT;   /* not empty after all (written into since), or kept */
    p->removed_dirs++;
    return true;
}

static bool walk(struct pass *p, int fd, size_t len, int depth);

/* Walks the directory name in dir_fd, whose path p->path now is, and
 * removes it when that left it empty. Returns whether it is gone. */
static bool descend(struct pass *p, int dir_fd, const char *name, size_t len, int depth)
{
    if (depth + 1 >= MAX_DEPTH)
        return false;
    int fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT;
    struct stat st;   /* as it was before the walk removed anything */
    int64_t changed_ns = fstat(fd, &st) == 0 ? mtime_ns_of(&st) : INT64_MAX;
    return walk(p, fd, len, depth + 1) && remove_empty_dir(p, dir_fd, name, changed_ns);
}

/* The entry name in the directory d, whose path p->path now is: walked
 * when a directory, visited when a profile file. Returns whether it is
 * gone. */
static bool visit_entry(struct pass *p, DIR *d, const struct dirent *e, bool profile, size_t len,
                        int depth)
{
    struct stat st;
    if (e->d_type == DT_DIR)
        return descend(p, dirfd(d), e->d_name, len, depth);
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT;
    if (S_ISDIR(st.st_mode))
        return descend(p, dirfd(d), e->d_name, len, depth);
    return S_ISREG(st.st_mode) && profile && visit_file(p, dirfd(d), e->d_name, &st);
}

/* Walks the directory open as fd (taken), whose path is p->path[0, len).
 * Returns whether it was read to the end and nothing is left in it. */
static bool walk(struct pass *p, int fd, size_t len, int depth)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return false;
    }
    bool empty = true;
    struct dirent *e;
    while (!stopped(p) && (e = readdir(d))) {
        const char *name = e->d_name;
        if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
            continue;
        bool profile = is_profile(name);
        unsigned char type = e->d_type;
        size_t nlen = strlen(name), child = len ? len + 1 + nlen : nlen;
        if ((type != DT_DIR && type != DT_UNKNOWN && !(type == DT_REG && profile)) ||
            child >= sizeof(p->path)) {
            empty = false;   /* not walked (symbolic links included), or too long to name */
            continue;
        }
        if (len)
            p->path[len] = '/';
        memcpy(p->path + (len ? len + 1 : 0), name, nlen + 1);
        empty &= visit_entry(p, d, e, profile, child, depth);
        p->path[len] = '\0';
    }
    empty &= !stopped(p);
    closedir(d);
    return empty;
}

static int oldest_first(const void *a, const void *b)
{
    const struct candidate *x = a, *y = b;
    return younger(x->mtime_ns, x->path, y) ? 1 : younger(y->mtime_ns, y->path, x) ? -1 : 0;
}

static bool limit_broken(const struct pass *p, const struct retention_limits *lim)
{
    return retention_over(lim, p->files, p->bytes);
}

/* Removes the candidates, oldest first, while a limit is broken: how many
 * went (ENOENT included, as they are gone). */
static size_t remove_oldest(struct pass *p, const struct retention_limits *lim)
{
    qsort(p->oldest, p->n, sizeof(*p->oldest), oldest_first);
    size_t gone = 0;
    for (size_t i = 0; i < p->n && limit_broken(p, lim); i++) {
        const struct candidate *c = &p->oldest[i];
        bool removed = remove_entry(p, p->root_fd, c->path, 0) == 0;
        if (!removed && errno != ENOENT)
            continue;   /* kept: counted still */
        p->removed += removed;
        p->files--;
        p->bytes -= c->size;
        gone++;
    }
    return gone;
}

static void free_candidates(struct pass *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->oldest[i].path);
    p->n = 0;
}

/* Candidates a pass keeps when max_files or max_bytes is set. */
static size_t candidates_for(const struct retention_limits *lim, size_t max_candidates)
{
    return lim->max_files > 0 || lim->max_bytes > 0 ? (max_candidates ? max_candidates : 1) : 0;
}

/* Walks the checked directory once more, its counts from nothing. 0, or
 * -1 with errno. */
static int walk_again(struct pass *p)
{
    p->files = p->bytes = 0;
    if (p->ages)
        memset(p->ages, 0, sizeof(*p->ages));
    int fd = openat(p->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);   /* from its start */
    if (fd < 0)
        return -1;
    walk(p, fd, 0, 0);
    return 0;
}

/*
 * After a walk: the candidates removed while a limit is broken. True when
 * one is broken still, and walking again will get further: it held as
 * many as it could and some went. Those older than what the walk's
 * histogram says must go whole then go as the walk meets them.
 */
static bool remove_and_go_on(struct pass *p, const struct retention_limits *lim)
{
    if (stopped(p) || !limit_broken(p, lim))
        return false;
    uint64_t from_age = age_histogram_cutoff(p->ages, p->files, p->bytes, lim);
    bool held_all = p->n < p->cap;
    size_t gone = remove_oldest(p, lim);
    free_candidates(p);
    if (held_all || !gone || !limit_broken(p, lim))
        return false;
    if (p->started > 0 && from_age <= (uint64_t)p->started) {   /* else before 1970: none */
        int64_t from_mtime = p->started - (int64_t)from_age + 1;
        if (from_mtime > p->cutoff)
            p->cutoff = from_mtime;
    }
    return true;
}

int retention_check(const char *dir, const struct retention_limits *lim, int64_t now_ns,
                    size_t max_candidates, const atomic_bool *stop, struct retention_result *out)
{
    *out = (struct retention_result){0};
    struct pass *p = calloc(1, sizeof(*p));
    if (!p)
        return -1;
    p->cutoff = lim->max_age > 0 ? now_ns - lim->max_age : INT64_MIN;
    p->started = now_ns;
    p->stop = stop;
    p->cap = candidates_for(lim, max_candidates);
    if (p->cap) {
        p->oldest = malloc(p->cap * sizeof(*p->oldest));
        p->ages = malloc(sizeof(*p->ages));
    }
    p->root_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = p->root_fd >= 0 && (!p->cap || (p->oldest && p->ages)) ? 0 : -1;
    int e = p->root_fd < 0 ? errno : ENOMEM;
    if (rc == 0) {
        do {
            if (walk_again(p) < 0) {
                rc = -1;
                e = errno;
                break;
            }
        } while (remove_and_go_on(p, lim));
        free_candidates(p);
    }
    *out = (struct retention_result){p->files, p->bytes, p->removed, p->removed_dirs,
                                     p->removing_ns};
    if (p->root_fd >= 0)
        close(p->root_fd);
    free(p->ages);
    free(p->oldest);
    free(p);
    errno = e;
    return rc;
}
