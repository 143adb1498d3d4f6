// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: the cgroup files profd reads to count the CPUs it may
 * use (lib/cpus.c) and the memory there is for it (lib/memory_usage.c).
 * The input is parts split at NUL bytes: the process's mountinfo, its
 * /proc/self/cgroup, what each quota file the seeds' mounts lead to holds
 * (v2's cpu.max at /sys/fs/cgroup and v1's cpu.cfs_quota_us and
 * cpu.cfs_period_us at /sys/fs/cgroup/cpu, and one level below each,
 * "/a"), then the memory limits (v2's memory.max, v1's
 * memory.limit_in_bytes at /sys/fs/cgroup/memory, each also in "/a"),
 * /proc/meminfo and /proc/self/statm. They are written under a directory
 * made once; the CPUs must stay between 1 and the affinity given, and the
 * memory at most MemTotal when it is read. */
#include <ftw.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/cpus.h"
#include "../../lib/file_io.h"
#include "../../lib/memory_usage.h"

#define AFFINITY 64

static char root[64];

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* The directory and what the last input left in it, gone at exit. */
static void remove_root(void)
{
    nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Writes len bytes of data to rel under root (its directories made). */
static void put(const char *rel, const uint8_t *data, size_t len)
{
    char path[256];
    snprintf(path, sizeof(path), "%s%s", root, rel);
    if (make_parents(path) < 0)
        abort();
    FILE *f = fopen(path, "w");
    if (!f)
        abort();
    fwrite(data, 1, len, f);
    fclose(f);
}

/* The next part of *data (up to a NUL or the end), taken off it. */
static const uint8_t *next_part(const uint8_t **data, size_t *left, size_t *len)
{
    const uint8_t *part = *data, *nul = memchr(part, 0, *left);
    *len = nul ? (size_t)(nul - part) : *left;
    *data += nul ? *len + 1 : *len;
    *left -= nul ? *len + 1 : *len;
    return part;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!*root) {
        snprintf(root, sizeof(root), "/tmp/profd-fuzz-cpus-XXXXXX");
        if (!mkdtemp(root))
            abort();
        atexit(remove_root);
    }
    static const char *const quota_files[] = {
        "/sys/fs/cgroup/cpu.max",           "/sys/fs/cgroup/a/cpu.max",
        "/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu/a/cpu.cfs_quota_us",
        "/sys/fs/cgroup/cpu/cpu.cfs_period_us", "/sys/fs/cgroup/cpu/a/cpu.cfs_period_us",
        "/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/a/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
        "/sys/fs/cgroup/memory/a/memory.limit_in_bytes",
        "/proc/meminfo", "/proc/self/statm",
    };
    size_t len;
    const uint8_t *part = next_part(&data, &size, &len);
    put("/proc/self/mountinfo", part, len);
    part = next_part(&data, &size, &len);
    put("/proc/self/cgroup", part, len);
    for (size_t i = 0; i < sizeof(quota_files) / sizeof(*quota_files); i++) {
        part = next_part(&data, &size, &len);
        put(quota_files[i], part, len);
    }
    unsigned cpus = cpus_under_quota(root, AFFINITY);
    if (cpus < 1 || cpus > AFFINITY)
        abort();   /* more than the affinity allows, or none */
    uint64_t in_use;
    memory_in_use(root, &in_use);
    uint64_t total = 0;
    char path[128];
    snprintf(path, sizeof(path), "%s/proc/meminfo", root);
    FILE *f = fopen(path, "r");
    if (f && fscanf(f, "MemTotal: %" SCNu64, &total) != 1)
        total = 0;
    if (f)
        fclose(f);
    if (total && memory_available(root) > total * 1024)
        abort();   /* more than the machine has */
    return 0;
}
