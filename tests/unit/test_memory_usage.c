// SPDX-License-Identifier: Apache-2.0
/* What a memory limit is set against (lib/memory_usage.c): the process's
 * anonymous resident memory, and the memory there is for it, the
 * machine's or its cgroup's when less, read under a made-up root and under
 * the real one. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/memory_usage.c"
#include "check.h"
#include "fake_root.h"

#define GIB ((uint64_t)1 << 30)

static const char meminfo[] = "MemTotal:       16777216 kB\nMemFree:         1000 kB\n";

TEST(in_use_is_resident_less_shared_pages)
{
    struct fake_root r;
    fake_root_make(&r);
    fake_root_put(&r, "/proc/self/statm", "100000 3000 1000 10 0 5000 0\n");
    uint64_t bytes = 0;
    CHECK(memory_in_use(r.path, &bytes));
    CHECK_INT(bytes, 2000 * (uint64_t)sysconf(_SC_PAGESIZE));
    fake_root_put(&r, "/proc/self/statm", "garbage\n");
    CHECK(!memory_in_use(r.path, &bytes));
    fake_root_free(&r);
}

TEST(in_use_here_grows_with_memory_touched)
{
    uint64_t before = 0, after = 0;
    CHECK(memory_in_use("", &before));
    size_t n = (size_t)64 << 20;
    static char *volatile kept;   /* seen to be used, so no compiler leaves it out */
    char *block = kept = malloc(n);
    CHECK(block != NULL);
    memset(block, 1, n);
    CHECK(memory_in_use("", &after));
    CHECK(after >= before + n / 2);
    free(block);
}

TEST(available_is_the_machines_or_the_smallest_cgroup_limit_above_the_process)
{
    struct fake_root r;
    fake_root_make(&r);
    fake_root_put(&r, "/proc/meminfo", meminfo);
    CHECK_INT(memory_available(r.path), 16 * GIB);   /* no cgroup to be found */
    fake_root_put(&r, "/proc/self/mountinfo",
                  "31 22 0:28 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n");
    fake_root_put(&r, "/proc/self/cgroup", "0::/kubepods/pod1/c1\n");
    fake_root_put(&r, "/sys/fs/cgroup/kubepods/memory.max", "8589934592\n");
    fake_root_put(&r, "/sys/fs/cgroup/kubepods/pod1/memory.max", "max\n");
    fake_root_put(&r, "/sys/fs/cgroup/kubepods/pod1/c1/memory.max", "max\n");
    CHECK_INT(memory_available(r.path), 8 * GIB);
    fake_root_put(&r, "/sys/fs/cgroup/kubepods/pod1/c1/memory.max", "1073741824\n");
    CHECK_INT(memory_available(r.path), GIB);
    fake_root_put(&r, "/sys/fs/cgroup/kubepods/memory.max", "68719476736\n");   /* past MemTotal */
    fake_root_put(&r, "/sys/fs/cgroup/kubepods/pod1/c1/memory.max", "max\n");
    CHECK_INT(memory_available(r.path), 16 * GIB);
    fake_root_free(&r);
}

TEST(v1s_memory_controller_counts_and_its_no_limit_number_limits_nothing)
{
    struct fake_root r;
    fake_root_make(&r);
    fake_root_put(&r, "/proc/meminfo", meminfo);
    fake_root_put(&r, "/proc/self/mountinfo",
                  "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
                  "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n");
    fake_root_put(&r, "/proc/self/cgroup", "5:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n");
    fake_root_put(&r, "/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes",
                  "9223372036854771712\n");
    CHECK_INT(memory_available(r.path), 16 * GIB);
    fake_root_put(&r, "/sys/fs/cgroup/memory/docker/memory.limit_in_bytes", "536870912\n");
    CHECK_INT(memory_available(r.path), GIB / 2);
    fake_root_free(&r);
}

TEST(available_here_is_some_memory)
{
    CHECK(memory_available("") > 0);
}

RUN_TESTS()
