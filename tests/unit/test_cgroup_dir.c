// SPDX-License-Identifier: Apache-2.0
/* Finding the process's cgroup directory for a controller
 * (lib/cgroup_dir.c) under a made-up root, and walking up from it. */
#include <string.h>

#include "../../lib/cgroup_dir.h"
#include "check.h"
#include "fake_root.h"

/* q->dir with r's path taken off its front. */
static const char *under(const struct fake_root *r, const struct cgroup_dir *q)
{
    return q->dir + strlen(r->path);
}

TEST(v2s_unified_hierarchy_serves_every_controller_and_walks_up_to_its_top)
{
    struct fake_root r;
    fake_root_make(&r);
    fake_root_put(&r, "/proc/self/mountinfo",
                  "31 22 0:28 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n");
    fake_root_put(&r, "/proc/self/cgroup", "0::/kubepods/pod1/c1\n");
    struct cgroup_dir q;
    CHECK(!cgroup_dir_locate(r.path, "memory", true, &q));   /* no v1 hierarchy */
    CHECK(cgroup_dir_locate(r.path, "memory", false, &q));
    CHECK(!q.v1);
    CHECK_STR(under(&r, &q), "/sys/fs/cgroup/kubepods/pod1/c1");
    CHECK(cgroup_dir_up(&q));
    CHECK_STR(under(&r, &q), "/sys/fs/cgroup/kubepods/pod1");
    CHECK(cgroup_dir_up(&q));
    CHECK(cgroup_dir_up(&q));
    CHECK_STR(under(&r, &q), "/sys/fs/cgroup");
    CHECK(!cgroup_dir_up(&q));   /* the top: it stays */
    CHECK_STR(under(&r, &q), "/sys/fs/cgroup");
    fake_root_free(&r);
}

TEST(v1_finds_each_controller_in_its_own_hierarchy)
{
    struct fake_root r;
    fake_root_make(&r);
    fake_root_put(&r, "/proc/self/mountinfo",
                  "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
                  "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n");
    fake_root_put(&r, "/proc/self/cgroup", "5:memory:/docker/m\n4:cpu,cpuacct:/docker/c\n");
    struct cgroup_dir q;
    CHECK(cgroup_dir_locate(r.path, "memory", true, &q));
    CHECK(q.v1);
    CHECK_STR(under(&r, &q), "/sys/fs/cgroup/memory/docker/m");
    CHECK(cgroup_dir_locate(r.path, "cpu", true, &q));
    CHECK_STR(under(&r, &q), "/sys/fs/cgroup/cpu,cpuacct/docker/c");
    CHECK(!cgroup_dir_locate(r.path, "pids", true, &q));
    fake_root_free(&r);
}

TEST(a_cgroup_outside_what_is_mounted_has_no_directory)
{
    struct fake_root r;
    fake_root_make(&r);
    fake_root_put(&r, "/proc/self/mountinfo",
                  "600 590 0:29 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n");
    fake_root_put(&r, "/proc/self/cgroup", "0::/docker/abc/sub\n");
    struct cgroup_dir q;
    CHECK(cgroup_dir_locate(r.path, "memory", false, &q));   /* a container's own view */
    CHECK_STR(under(&r, &q), "/sys/fs/cgroup/sub");
    fake_root_put(&r, "/proc/self/cgroup", "0::/other\n");
    CHECK(!cgroup_dir_locate(r.path, "memory", false, &q));
    fake_root_free(&r);
}

RUN_TESTS()
