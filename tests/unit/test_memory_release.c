// SPDX-License-Identifier: Apache-2.0
/* memory_release: blocks just freed, which jemalloc would otherwise keep
 * resident for a while, stop being resident at once. Linked with the
 * daemon's allocator; where that is not jemalloc (sanitizer builds) there
 * is nothing to release and memory_release says so. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/memory_release.c"

/* This process's resident memory in KiB (/proc/self/statm). */
static long resident_kib(void)
{
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

TEST(blocks_freed_stop_being_resident)
{
    enum { N = 512, SIZE = 64 << 10 };   /* 32 MiB in blocks below the oversize threshold */
    char **blocks = malloc(N * sizeof(*blocks));
    for (size_t i = 0; i < N; i++) {
        blocks[i] = malloc(SIZE);
        memset(blocks[i], 1, SIZE);
    }
    char *kept = malloc(64);   /* a block still in use after them */
    memset(kept, 1, 64);
    for (size_t i = 0; i < N; i++)
        free(blocks[i]);
    long before = resident_kib();
    bool released = memory_release();
    long after = resident_kib();
    if (released)
        CHECK(before - after >= (long)N * SIZE / 1024 / 2);
    else   /* only where jemalloc is not linked in */
        CHECK(getenv("PROFD_SANITIZED") && *getenv("PROFD_SANITIZED"));
    free(kept);
    free(blocks);
}

RUN_TESTS()
