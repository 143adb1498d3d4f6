// SPDX-License-Identifier: Apache-2.0
/*
 * How many CPUs profd may use: the CPUs its affinity mask allows, fewer
 * when its cgroup (v1 or v2, or any cgroup above it) limits its CPU time
 * with a quota, as Kubernetes does for a container with a CPU limit. The
 * daemon sizes its serving loops and worker threads by it, so that a
 * sidecar limited to one CPU on a large node does not run a thread for
 * each of the node's CPUs only to be throttled.
 */
#ifndef PROFD_LIB_CPUS_H
#define PROFD_LIB_CPUS_H

/* The CPUs this process may use, at least 1: worked out on the first
 * call and kept (a quota changed later is not seen). Any thread. */
unsigned cpus_usable(void);

/*
 * The affinity CPUs limited by the CPU quota of the cgroups named in
 * root's proc/self/cgroup, found through root's proc/self/mountinfo, the
 * quota files read under root too: root is "" for the running system
 * and a directory laid out the same way in tests. A quota of q periods
 * allows ceil(q) CPUs; the smallest along the path from the process's
 * cgroup to its hierarchy's root counts. affinity when no quota is set
 * or none can be read; never below 1.
 */
unsigned cpus_under_quota(const char *root, unsigned affinity);

#endif
