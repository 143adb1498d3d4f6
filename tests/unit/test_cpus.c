// SPDX-License-Identifier: Apache-2.0
#include <sched.h>
#include <unistd.h>

#include "../../lib/cpus.h"
#include "check.h"
#include "fake_root.h"

static const char v2_mounts[] =
    "22 1 0:21 / / rw,relatime - ext4 /dev/vda1 rw\n"
    "31 22 0:28 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";

TEST(a_v2_quota_rounds_up_to_whole_cpus_and_never_raises_the_affinity)
{
    struct fake_root r;
    fake_root_make(&r);
    fake_root_put(&r, "/proc/self/mountinfo", v2_mounts);
    fake_root_put(&r, "/proc/self/cgroup", "0::/\n");
    fake_root_put(&r, "/sys/fs/cgroup/cpu.max", "150000 100000\n");
    CHECK_INT(cpus_under_quota(r.path, 8), 2);
    CHECK_INT(cpus_under_quota(r.path, 1), 1);
    fake_root_put(&r, "/sys/fs/cgroup/cpu.max", "20000 100000\n");   /* a fifth of a CPU is one */
    CHECK_INT(cpus_under_quota(r.path, 8), 1);
    fake_root_put(&r, "/sys/fs/cgroup/cpu.max", "max 100000\n");
    CHECK_INT(cpus_under_quota(r.path, 8), 8);
    fake_root_free(&r);
}

TEST(the_smallest_quota_from_the_process_cgroup_up_to_the_hierarchy_root_counts)
{
    struct fake_root r;
    fake_root_make(&r);
    fake_root_put(&r, "/proc/self/mountinfo", v2_mounts);
    fake_root_put(&r, "/proc/self/cgroup", "0::/kubepods/pod1/c1\n");
    fake_root_put(&r, "/sys/fs/cgroup/kubepods/cpu.max", "400000 100000\n");
    fake_root_put(&r, "/sys/fs/cgroup/kubepods/pod1/cpu.max", "300000 100000\n");
    fake_root_put(&r, "/sys/fs/cgroup/kubepods/pod1/c1/cpu.max", "max 100000\n");
    CHECK_INT(cpus_under_quota(r.path, 16), 3);
    fake_root_put(&r, "/sys/fs/cgroup/kubepods/cpu.max", "100000 50000\n");
    CHECK_INT(cpus_under_quota(r.path, 16), 2);
    fake_root_put(&r, "/sys/fs/cgroup/kubepods/pod1/c1/cpu.max", "50000 100000\n");
    CHECK_INT(cpus_under_quota(r.path, 16), 1);
    fake_root_free(&r);
}

TEST(v1s_cpu_controller_counts_on_a_host_with_both_hierarchies)
{
    struct fake_root r;
    fake_root_make(&r);
    fake_root_put(&r, "/proc/self/mountinfo",
        "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
        "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
        "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
        "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n");
    fake_root_put(&r, "/proc/self/cgroup",
        "5:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/docker/abc\n");
    fake_root_put(&r, "/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "250000\n");
    fake_root_put(&r, "/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
    fake_root_put(&r, "/sys/fs/cgroup/cpu,cpuacct/docker/cpu.cfs_quota_us", "-1\n");
    fake_root_put(&r, "/sys/fs/cgroup/cpu,cpuacct/docker/cpu.cfs_period_us", "100000\n");
    CHECK_INT(cpus_under_quota(r.path, 8), 3);
    fake_root_put(&r, "/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "-1\n");
    CHECK_INT(cpus_under_quota(r.path, 8), 8);
    fake_root_free(&r);
}

TEST(a_containers_own_cgroup_mounted_as_its_root_is_read_at_the_mount_point)
{
    struct fake_root r;
    fake_root_make(&r);
    fake_root_put(&r, "/proc/self/mountinfo",
        "600 590 0:29 /docker/abc /sys/fs/cgroup/my\\040cpu ro - cgroup cgroup rw,cpu\n");
    fake_root_put(&r, "/proc/self/cgroup", "4:cpu:/docker/abc\n");
    fake_root_put(&r, "/sys/fs/cgroup/my cpu/cpu.cfs_quota_us", "100000\n");
    fake_root_put(&r, "/sys/fs/cgroup/my cpu/cpu.cfs_period_us", "100000\n");
    CHECK_INT(cpus_under_quota(r.path, 4), 1);
    /* a cgroup outside what is mounted: nothing to read, no limit */
    fake_root_put(&r, "/proc/self/cgroup", "4:cpu:/other\n");
    CHECK_INT(cpus_under_quota(r.path, 4), 4);
    fake_root_put(&r, "/proc/self/cgroup", "4:cpu:/docker/abcd\n");
    CHECK_INT(cpus_under_quota(r.path, 4), 4);
    fake_root_free(&r);
}

TEST(no_cgroup_information_leaves_the_affinity_and_never_less_than_one)
{
    struct fake_root r;
    fake_root_make(&r);
    CHECK_INT(cpus_under_quota(r.path, 6), 6);
    CHECK_INT(cpus_under_quota(r.path, 0), 1);
    fake_root_put(&r, "/proc/self/mountinfo", v2_mounts);
    fake_root_put(&r, "/proc/self/cgroup", "0::/\n");
    CHECK_INT(cpus_under_quota(r.path, 6), 6);   /* no cpu.max: no cpu controller there */
    fake_root_put(&r, "/sys/fs/cgroup/cpu.max", "garbage\n");
    CHECK_INT(cpus_under_quota(r.path, 6), 6);
    fake_root_put(&r, "/sys/fs/cgroup/cpu.max", "nan 100000\n");
    CHECK_INT(cpus_under_quota(r.path, 6), 6);
    fake_root_put(&r, "/sys/fs/cgroup/cpu.max", "1e300 1e-300\n");   /* past what an unsigned holds */
    CHECK_INT(cpus_under_quota(r.path, 6), 6);
    fake_root_put(&r, "/proc/self/mountinfo", "31 22 0:28 / /sys/fs/cgroup rw - cgroup2\n");   /* cut short */
    CHECK_INT(cpus_under_quota(r.path, 6), 6);
    fake_root_free(&r);
}

TEST(the_running_process_may_use_at_least_one_cpu_and_no_more_than_its_affinity)
{
    cpu_set_t set;
    CHECK_INT(sched_getaffinity(0, sizeof(set), &set), 0);
    CHECK(cpus_usable() >= 1);
    CHECK(cpus_usable() <= (unsigned)CPU_COUNT(&set));
    CHECK_INT(cpus_usable(), cpus_usable());
}

RUN_TESTS()
