// SPDX-License-Identifier: Apache-2.0
/*
 * How much memory profd uses, and how much the machine lets it: what a
 * memory limit is set against. In use is the process's anonymous resident
 * memory (its heap, thread stacks, buffers), not the files it maps (the
 * binaries symbolize reads), which the kernel can drop and read again. The
 * memory there is for it is the machine's, or less when its cgroup (v1 or
 * v2, or any cgroup above it) has a memory limit, as Kubernetes gives a
 * container with a memory limit.
 */
#ifndef PROFD_LIB_MEMORY_USAGE_H
#define PROFD_LIB_MEMORY_USAGE_H

#include <stdbool.h>
#include <stdint.h>

/* The process's anonymous resident bytes into *bytes (root's
 * proc/self/statm: resident less shared pages); false when it cannot be
 * read. root as in memory_available. Any thread. */
bool memory_in_use(const char *root, uint64_t *bytes);

/* The bytes of memory the process may use: root's proc/meminfo's
 * MemTotal, or the smallest memory limit of the cgroups from the process's
 * up to its hierarchy's top when that is less (v2's memory.max, v1's
 * memory.limit_in_bytes); 0 when not even MemTotal can be read. root is ""
 * for the running system and a directory laid out as / in tests. */
uint64_t memory_available(const char *root);

#endif
