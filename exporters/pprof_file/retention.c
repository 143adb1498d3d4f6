// SPDX-License-Identifier: Apache-2.0
#include "retention.h"

#include <ftw.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct entry {
    char *path;
    int64_t mtime_ns;
    uint64_t size;
};

/* nftw has no user argument: the walk state lives here for one call. */
static _Thread_local struct {
    struct entry *items;
    size_t n, cap;
} walk;

static int is_profile(const char *name)
{
    size_t n = strlen(name);
    if (name[0] == '.')
        return 0;   /* temp files being written */
    return (n > 3 && !strcmp(name + n - 3, ".pb")) || (n > 6 && !strcmp(name + n - 6, ".pb.gz"));
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    if (type != FTW_F || !is_profile(path + ftw->base))
        return 0;
    if (walk.n == walk.cap) {
        size_t cap = walk.cap ? walk.cap * 2 : 256;
        struct entry *items = realloc(walk.items, cap * sizeof(*items));
        if (!items)
            return -1;
        walk.items = items;
        walk.cap = cap;
    }
    char *copy = strdup(path);
    if (!copy)
        return -1;
    walk.items[walk.n++] = (struct entry){copy,
                                          (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
                                          (uint64_t)st->st_size};
    return 0;
}

static int by_age(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    if (x->mtime_ns != y->mtime_ns)
        return x->mtime_ns < y->mtime_ns ? -1 : 1;
    return strcmp(x->path, y->path);
}

long retention_enforce(const char *dir, const struct retention_limits *lim, int64_t now_ns)
{
    walk.n = 0;
    int rc = nftw(dir, visit, 16, FTW_PHYS);
    long removed = 0;
    if (rc == 0) {
        if (walk.n)
            qsort(walk.items, walk.n, sizeof(*walk.items), by_age);
        uint64_t bytes = 0;
        for (size_t i = 0; i < walk.n; i++)
            bytes += walk.items[i].size;
        size_t count = walk.n;
        for (size_t i = 0; i < walk.n; i++) {
            const struct entry *e = &walk.items[i];
            bool too_old = lim->max_age > 0 && now_ns - e->mtime_ns > lim->max_age;
            bool too_many = lim->max_files > 0 && count > (size_t)lim->max_files;
            bool too_big = lim->max_bytes > 0 && bytes > lim->max_bytes;
            if (!too_old && !too_many && !too_big)
                break;
            if (unlink(e->path) == 0)
                removed++;
            count--;
            bytes -= e->size;
        }
    }
    for (size_t i = 0; i < walk.n; i++)
        free(walk.items[i].path);
    free(walk.items);
    walk.items = NULL;
    walk.n = walk.cap = 0;
    return rc == 0 ? removed : -1;
}
