// SPDX-License-Identifier: Apache-2.0
/* A directory laid out as / is, for tests of what profd reads under /proc
 * and /sys (given a root to read them under): made, written to, removed. */
#ifndef PROFD_TEST_FAKE_ROOT_H
#define PROFD_TEST_FAKE_ROOT_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../lib/file_io.h"
#include "check.h"

struct fake_root {
    char path[64];
};

static inline void fake_root_make(struct fake_root *r)
{
    snprintf(r->path, sizeof(r->path), "/tmp/profd-root-XXXXXX");
    CHECK(mkdtemp(r->path) != NULL);
}

/* Writes text to rel (starting with '/') under r, making its directories. */
static inline void fake_root_put(const struct fake_root *r, const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s%s", r->path, rel);
    CHECK_INT(make_parents(path), 0);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static inline int fake_root_remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static inline void fake_root_free(struct fake_root *r)
{
    CHECK_INT(nftw(r->path, fake_root_remove_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

#endif
