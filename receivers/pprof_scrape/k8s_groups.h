// SPDX-License-Identifier: Apache-2.0
/*
 * The target groups of one kubernetes_sd_config, made again as its
 * objects change. A build starts empty and is given the objects of its
 * role one by one (pods, EndpointSlices, Endpoints, services, ingresses);
 * one whose UID and resourceVersion (and those of the objects whose
 * labels are on its targets: a pod's node; a slice's service, pods and
 * nodes) are those it had in the last build gives the groups it made
 * then, moved over with their hashes, instead of making them again: in a
 * large cluster a change costs the objects that changed, not every
 * object's labels.
 */
#ifndef PPROF_SCRAPE_K8S_GROUPS_H
#define PPROF_SCRAPE_K8S_GROUPS_H

#include "../../lib/k8s_pods.h"
#include "../../lib/key_map.h"
#include "k8s_sd.h"
#include "profd/plugin.h"

/* The groups one pod (or slice, or Endpoints object) made: [first, first + n) of the build's. */
struct pod_made {
    uint64_t key;   /* the object as it was; 0 once its groups were moved on */
    size_t first, n;
};

/* Zero-initialized is an empty build. */
struct k8s_groups {
    struct profd_target_group *groups;
    uint64_t *hashes;   /* each group's target_group_hash */
    size_t n, cap, hashes_cap;
    struct pod_made *made;   /* each pod's groups, in the order given */
    size_t nmade, made_cap;
    struct key_map by_key;   /* a pod's key -> index into made */
};

/*
 * Adds to next the groups of pod p, with node's labels (NULL: none, or not
 * asked for): those last made for p as it is now, taken from last (NULL:
 * none), else made (k8s_sd_pod_groups).
 */
void k8s_groups_add_pod(const struct profd_host *h, struct k8s_groups *next,
                        struct k8s_groups *last, const struct k8s_pod *p,
                        const struct k8s_pod *node);

/*
 * Adds to next the groups of obj, an EndpointSlice or an Endpoints object
 * as role says, with the labels of its service, pods and nodes (NULL: not
 * asked for) among those given: those last made for it while none of
 * these changed, taken from last (NULL: none), else made
 * (k8s_sd_endpoints_groups).
 */
void k8s_groups_add_endpoints(const struct profd_host *h, struct k8s_groups *next,
                              struct k8s_groups *last, enum k8s_endpoints_role role,
                              const struct k8s_pod *obj, const struct k8s_names *services,
                              const struct k8s_names *pods, const struct k8s_names *nodes);

/* What makes the groups of one object of a role: k8s_sd_service_groups,
 * k8s_sd_ingress_groups. */
typedef void (*k8s_groups_maker)(const struct profd_host *h, const struct k8s_pod *obj,
                                 struct profd_target_group **groups, size_t *n, size_t *cap);

/* Adds to next the groups make makes of obj (roles service and ingress):
 * those last made for it as it is now, taken from last (NULL: none),
 * else made. */
void k8s_groups_add_object(const struct profd_host *h, struct k8s_groups *next,
                           struct k8s_groups *last, const struct k8s_pod *obj,
                           k8s_groups_maker make);

/* Adds to g the groups of the node role's targets, made from nodes. */
void k8s_groups_add_nodes(const struct profd_host *h, struct k8s_groups *g,
                          const struct k8s_pod_list *nodes);

/* A 64-bit identity of g's groups, in order. */
uint64_t k8s_groups_signature(const struct k8s_groups *g);

/* Frees what g holds (the groups moved out of it are empty) and empties it. */
void k8s_groups_clear(const struct profd_host *h, struct k8s_groups *g);

#endif
