// SPDX-License-Identifier: Apache-2.0
/* The pods the Kubernetes API listed, looked up by container id, pod UID
 * or pod IP, and the nodes it listed, by name; changed a pod at a time
 * as a watch tells of them, so a change costs what that pod holds, not
 * what every pod does. */
#ifndef PROFD_K8S_PODS_H
#define PROFD_K8S_PODS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../lib/k8s_pods.h"
#include "../../lib/key_map.h"

/* Strings (container ids, IPs, node names) each naming an object by its
 * UID; several objects may share a string (an IP). Every string is one an
 * object of the index holds, there as long as that object is. */
struct name_entry {
    const char *name, *uid;
    const char *detail;   /* a container id's: the container's name */
    uint32_t next;        /* the next entry of the same name hash, + 1; 0 none */
};

struct name_index {
    struct name_entry *entries;
    size_t n, cap;
    uint32_t free;           /* the first unused entry + 1; 0 none */
    struct key_map heads;    /* the hash of a name -> its first entry */
};

struct pod_index {
    struct k8s_pod_list pods;   /* by UID; its resourceVersion the list's */
    struct name_index containers, ips;
    struct k8s_pod_list nodes;  /* none unless node labels are asked for */
    struct name_index node_names;
};

/*
 * The pods of a PodList (the JSON of GET /api/v1/pods), without what drop
 * names (k8s_pod_trim), indexed by the ids of their started containers
 * (of every kind), their UIDs and their IPs. NULL with why set when the
 * JSON is not a PodList.
 */
struct pod_index *pod_index_parse(const char *json, size_t len, unsigned drop, char *why,
                                  size_t whylen);

/* Puts in ix the nodes of a NodeList (the JSON of GET /api/v1/nodes),
 * without what drop names (k8s_pod_trim), indexed by name, in place of
 * those it had: 0, or -1 with why set (and ix as it was) when it is not
 * one. */
int pod_index_set_nodes(struct pod_index *ix, const char *json, size_t len, unsigned drop,
                        char *why, size_t whylen);

/* The pods of pods (taken: pods is left empty, its resourceVersion
 * the index's), indexed as pod_index_parse indexes them; no nodes. */
struct pod_index *pod_index_of(struct k8s_pod_list *pods);

/* Puts the nodes of nodes (taken, as pod_index_of takes pods) in ix in
 * place of those it had, indexed by name. */
void pod_index_put_nodes(struct pod_index *ix, struct k8s_pod_list *nodes);

/* Moves from's nodes, and their index, into ix (which has none). */
void pod_index_move_nodes(struct pod_index *ix, struct pod_index *from);

/* Pod (or node) added or modified, as it is now: ix takes what it holds
 * (*pod is left empty), in place of the one of its UID. Returns where it
 * is now (until ix next changes). */
const struct k8s_pod *pod_index_put(struct pod_index *ix, struct k8s_pod *pod);
const struct k8s_pod *pod_index_put_node(struct pod_index *ix, struct k8s_pod *node);

/* The pod (or node) of UID uid removed, when ix has it. */
void pod_index_remove(struct pod_index *ix, const char *uid);
void pod_index_remove_node(struct pod_index *ix, const char *uid);

/* The pod running container id, its container's name into *container;
 * NULL when none listed. */
const struct k8s_pod *pod_index_container(const struct pod_index *ix, const char *id,
                                          const char **container);
/* The pod whose UID is uid, or NULL. */
const struct k8s_pod *pod_index_uid(const struct pod_index *ix, const char *uid);
/* The pod with IP ip, or NULL (host-network pods share their node's IP:
 * an IP several pods have is nobody's). */
const struct k8s_pod *pod_index_ip(const struct pod_index *ix, const char *ip);

/* The node named name, or NULL. */
const struct k8s_pod *pod_index_node(const struct pod_index *ix, const char *name);

/* Frees ix (accepts NULL). */
void pod_index_free(struct pod_index *ix);

#endif
