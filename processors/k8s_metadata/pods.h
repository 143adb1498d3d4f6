// SPDX-License-Identifier: Apache-2.0
/* The pods the Kubernetes API listed, looked up by container id, pod UID
 * or pod IP, and the nodes it listed, by name. */
#ifndef PROFD_K8S_PODS_H
#define PROFD_K8S_PODS_H

#include <stddef.h>

#include "../../lib/k8s_pods.h"
#include "../../lib/key_map.h"

struct pod_container {
    char *id;     /* the runtime's id, without its "containerd://" */
    const char *name;
    size_t pod;   /* index into pods */
};

/* A pod as indexes hold it: one copy shared by the indexes made while it
 * did not change (its resourceVersion the same), so that making the index
 * again after a change copies the pods that changed, not every pod. */
struct shared_pod {
    struct k8s_pod pod;
    size_t refs;   /* the indexes holding it: changed on one thread alone */
};

struct pod_index {
    struct shared_pod **pods;
    size_t npods;
    char *resource_version;   /* the list's, from which a watch goes on */
    struct pod_container *containers;
    size_t ncontainers;
    struct pod_ip {
        const char *ip;
        size_t pod;   /* index into pods */
    } *ips;
    size_t nips;
    struct key_map by_container, by_uid, by_ip;   /* hash of the key -> index */
    struct k8s_pod_list nodes;   /* none unless node labels are asked for */
    struct key_map by_node;      /* hash of a node's name -> index into nodes.pods */
};

/*
 * The pods of a PodList (the JSON of GET /api/v1/pods), indexed by the ids
 * of their started containers (of every kind), their UIDs and their IPs.
 * NULL with why set when the JSON is not a PodList.
 */
struct pod_index *pod_index_parse(const char *json, size_t len, char *why, size_t whylen);

/* Puts in ix the nodes of a NodeList (the JSON of GET /api/v1/nodes),
 * indexed by name, in place of those it had: 0, or -1 with why set (and
 * ix as it was) when it is not one. */
int pod_index_set_nodes(struct pod_index *ix, const char *json, size_t len, char *why,
                        size_t whylen);

/*
 * The pods of pods, indexed as pod_index_parse does: those that last
 * (NULL: none) holds at the same resourceVersion shared with it, the
 * others copied; and the nodes of nodes (NULL: none), copied and indexed
 * by name. Indexes that share pods are made and freed on one thread.
 */
struct pod_index *pod_index_of(const struct k8s_pod_list *pods, const struct k8s_pod_list *nodes,
                               const struct pod_index *last);

/* A copy of the pods of ix, with its list's resourceVersion, into *out
 * (empty before). */
void pod_index_copy_pods(const struct pod_index *ix, struct k8s_pod_list *out);

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

/* Frees ix (accepts NULL), and the pods no other index holds. */
void pod_index_free(struct pod_index *ix);

#endif
