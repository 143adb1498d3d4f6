// SPDX-License-Identifier: Apache-2.0
/*
 * The directory of the process's cgroup for one controller ("cpu",
 * "memory"), where that controller's limits are read: found through
 * root's proc/self/cgroup and proc/self/mountinfo (root "" for the running
 * system, a directory laid out the same way in tests), in cgroup v1's
 * hierarchy of that controller or v2's unified one, a container's own view
 * (its cgroup mounted at the hierarchy's top) included. A limit may be set
 * at any level between the process's cgroup and the top, so readers walk
 * up with cgroup_dir_up.
 */
#ifndef PROFD_LIB_CGROUP_DIR_H
#define PROFD_LIB_CGROUP_DIR_H

#include <stdbool.h>

struct cgroup_dir {
    char top[4096];    /* the hierarchy's mount point, under root */
    char dir[4096];    /* the process's cgroup, top or below it */
    bool v1;           /* found in v1's hierarchy of the controller, else v2's */
};

/* Fills q for controller in v1's hierarchy (v1) or v2's: false when that
 * hierarchy is not mounted or the process's cgroup is outside what is. */
bool cgroup_dir_locate(const char *root, const char *controller, bool v1, struct cgroup_dir *q);

/* Moves q->dir one level up; false (q unchanged) when it is the top. */
bool cgroup_dir_up(struct cgroup_dir *q);

#endif
