// SPDX-License-Identifier: Apache-2.0
#include "cpus.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "cgroup_dir.h"
#include "file_io.h"

/* More CPUs than any machine has: a quota past it limits nothing. */
#define CPUS_MAX 65536.0

/* The CPUs dir's own quota allows, 0 for none (or none readable). */
static unsigned dir_quota(const struct cgroup_dir *q, const char *dir)
{
    char path[4200];
    size_t len;
    double quota = -1, period = 0;
    if (q->v1) {
        snprintf(path, sizeof(path), "%s/cpu.cfs_quota_us", dir);
        char *text = read_small_file(path, 64, &len);
        if (text && sscanf(text, "%lf", &quota) != 1)
            quota = -1;
        free(text);
        snprintf(path, sizeof(path), "%s/cpu.cfs_period_us", dir);
        text = read_small_file(path, 64, &len);
        if (!text || sscanf(text, "%lf", &period) != 1)
            period = 0;
        free(text);
    } else {
        snprintf(path, sizeof(path), "%s/cpu.max", dir);
        char *text = read_small_file(path, 64, &len);
        if (!text || sscanf(text, "%lf %lf", &quota, &period) != 2)   /* "max 100000": none */
            quota = -1;
        free(text);
    }
    double cpus = quota / period;
    if (!(quota > 0 && period > 0 && cpus < CPUS_MAX))   /* NaN too: no limit profd can use */
        return 0;
    unsigned whole = (unsigned)cpus;
    return whole < cpus || whole == 0 ? whole + 1 : whole;
}

/* The smallest quota from q->dir up to q->top, 0 for none. */
static unsigned path_quota(struct cgroup_dir *q)
{
    unsigned least = 0;
    do {
        unsigned here = dir_quota(q, q->dir);
        if (here && (!least || here < least))
            least = here;
    } while (cgroup_dir_up(q));
    return least;
}

unsigned cpus_under_quota(const char *root, unsigned affinity)
{
    unsigned cpus = affinity ? affinity : 1;
    for (int v1 = 1; v1 >= 0; v1--) {
        struct cgroup_dir q;
        if (!cgroup_dir_locate(root, "cpu", v1, &q))
            continue;
        unsigned quota = path_quota(&q);
        return quota && quota < cpus ? quota : cpus;
    }
    return cpus;
}

static unsigned usable;

static void work_out_usable(void)
{
    cpu_set_t set;
    int affinity = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
    usable = cpus_under_quota("", affinity > 0 ? (unsigned)affinity : 1);
}

unsigned cpus_usable(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, work_out_usable);
    return usable;
}
