// SPDX-License-Identifier: Apache-2.0
/* The container and pod a process runs in, from its /proc/<pid>/cgroup. */
#ifndef PROFD_K8S_CGROUP_H
#define PROFD_K8S_CGROUP_H

#include <stdbool.h>
#include <stddef.h>

#define CONTAINER_ID_SIZE 65   /* 64 hex digits and a NUL */
#define POD_UID_SIZE 37        /* a UUID and a NUL */

/*
 * Reads the cgroup paths of text (a /proc/<pid>/cgroup: "id:controllers:
 * path" a line) for the container runtimes' names: the innermost path
 * component holding 64 hex digits (docker-<id>.scope, cri-containerd-<id>
 * .scope, crio-<id>.scope, a bare <id>) gives the container id, lower
 * case, and one holding "pod" and a UUID (pod<uid>, or kubepods-...-pod
 * <uid with '_' for '-'>.slice) the pod's UID, with '-'. Each is "" when
 * no path names it; true when either was found.
 */
bool cgroup_container(const char *text, size_t len, char id[CONTAINER_ID_SIZE],
                      char pod_uid[POD_UID_SIZE]);

#endif
