// SPDX-License-Identifier: Apache-2.0
#include "memory_usage.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup_dir.h"
#include "file_io.h"

#define PROC_FILE_MAX (1u << 20)

bool memory_in_use(const char *root, uint64_t *bytes)
{
    char path[4096];
    size_t len;
    snprintf(path, sizeof(path), "%s/proc/self/statm", root);
    char *text = read_small_file(path, 256, &len);
    uint64_t size, resident, shared;
    bool ok = text && sscanf(text, "%" SCNu64 " %" SCNu64 " %" SCNu64, &size, &resident,
                             &shared) == 3 && shared <= resident;
    free(text);
    long page = sysconf(_SC_PAGESIZE);
    if (ok)
        *bytes = (resident - shared) * (uint64_t)(page > 0 ? page : 4096);
    return ok;
}

/* MemTotal in root's proc/meminfo, in bytes; 0 when it cannot be read. */
static uint64_t mem_total(const char *root)
{
    char path[4096];
    size_t len;
    snprintf(path, sizeof(path), "%s/proc/meminfo", root);
    char *text = read_small_file(path, PROC_FILE_MAX, &len);
    const char *at = text ? strstr(text, "MemTotal:") : NULL;
    uint64_t kib = 0;
    if (!at || sscanf(at, "MemTotal: %" SCNu64 " kB", &kib) != 1)
        kib = 0;
    free(text);
    return kib * 1024;
}

/* The limit dir's own memory file sets, 0 for none ("max", v1's number
 * for none, or unreadable). */
static uint64_t dir_limit(const struct cgroup_dir *q)
{
    char path[4200];
    size_t len;
    snprintf(path, sizeof(path), "%s/%s", q->dir, q->v1 ? "memory.limit_in_bytes" : "memory.max");
    char *text = read_small_file(path, 64, &len);
    uint64_t limit = 0;
    if (!text || sscanf(text, "%" SCNu64, &limit) != 1)
        limit = 0;
    free(text);
    return limit;
}

uint64_t memory_available(const char *root)
{
    uint64_t total = mem_total(root);
    for (int v1 = 1; v1 >= 0; v1--) {
        struct cgroup_dir q;
        if (!cgroup_dir_locate(root, "memory", v1, &q))
            continue;
        do {
            uint64_t here = dir_limit(&q);
            if (here && (!total || here < total))
                total = here;
        } while (cgroup_dir_up(&q));
        break;
    }
    return total;
}
