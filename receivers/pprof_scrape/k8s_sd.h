// SPDX-License-Identifier: Apache-2.0
/*
 * kubernetes_sd_configs, roles pod and node, as Prometheus reads them:
 * which URLs list the pods and nodes, and the targets they make. Each container port of
 * each pod with an IP is a target at <pod IP>:<port>; a container with no
 * port is one at the pod IP alone (for relabeling to add one). Init
 * containers are targets too (__meta_kubernetes_pod_container_init
 * "true"), ephemeral ones are not. Every target has the labels
 *   __meta_kubernetes_namespace, _pod_name, _pod_ip, _pod_uid,
 *   _pod_node_name, _pod_host_ip, _pod_phase, _pod_ready,
 *   _pod_controller_kind/_name (when it has a controller),
 *   _pod_label_<name>/_labelpresent_<name>,
 *   _pod_annotation_<name>/_annotationpresent_<name> (names made valid
 *   label names), _pod_container_name, _image, _init, _id (when started),
 *   _port_name, _port_number and _port_protocol (when it has a port).
 * With attach_metadata's node, a pod whose node is listed adds
 *   __meta_kubernetes_node_name, _node_label_<name>/_labelpresent_<name>
 *   and _node_annotation_<name>/_annotationpresent_<name>.
 * Role node: each node is a target at its kubelet's port on its address
 * (InternalIP first, as node_address picks it), with instance its name and
 * the labels __meta_kubernetes_node_name, _node_provider_id,
 * _node_label_*, _node_labelpresent_*, _node_annotation_*,
 * _node_annotationpresent_* and _node_address_<type> (the first of each).
 */
#ifndef PPROF_SCRAPE_K8S_SD_H
#define PPROF_SCRAPE_K8S_SD_H

#include "../../lib/k8s_pods.h"
#include "../../lib/key_map.h"
#include "config.h"

/*
 * The URLs cfg lists pods from, under the API's base URL: one for each
 * namespace it names (own_namespace, when asked for, among them), else
 * one for every namespace; the pod role's selector as labelSelector and
 * fieldSelector; none for the node role. NULL-terminated, each and the
 * array malloc'd.
 */
char **k8s_sd_urls(const struct kubernetes_sd_config *cfg, const char *base,
                   const char *own_namespace);

/*
 * The URL cfg lists nodes from under base, with its node selector: NULL
 * unless the role is node or attach_metadata asks for nodes. malloc'd.
 */
char *k8s_sd_nodes_url(const struct kubernetes_sd_config *cfg, const char *base);

/* Frees what k8s_sd_urls returned (accepts NULL). */
void k8s_sd_urls_free(char **urls);

/* The nodes of a list by name. */
struct k8s_node_names {
    const struct k8s_pod_list *nodes;
    struct key_map by_hash;   /* of the name -> index into nodes->pods */
};

/* Indexes nodes (NULL: none) into *names, which refers to it from then on. */
void k8s_node_names_init(struct k8s_node_names *names, const struct k8s_pod_list *nodes);

/* The node named name (NULL: none), or NULL. */
const struct k8s_pod *k8s_node_named(const struct k8s_node_names *names, const char *name);

void k8s_node_names_free(struct k8s_node_names *names);

/*
 * Appends to *groups (*n of them, room for *cap) a group of one target
 * for each target pod p makes, with its labels, and those of node (NULL:
 * none). A pod without an IP (pending, or evicted) makes none.
 */
void k8s_sd_pod_groups(const struct profd_host *h, const struct k8s_pod *p,
                       const struct k8s_pod *node, struct profd_target_group **groups,
                       size_t *n, size_t *cap);

/* k8s_sd_pod_groups of each of pods, with its node when nodes (NULL:
 * none) has it. */
void k8s_sd_groups(const struct profd_host *h, const struct k8s_pod_list *pods,
                   const struct k8s_pod_list *nodes, struct profd_target_group **groups,
                   size_t *n, size_t *cap);

/* Appends to *groups a group of one target for each node with an address,
 * as the node role makes them. */
void k8s_sd_node_groups(const struct profd_host *h, const struct k8s_pod_list *nodes,
                        struct profd_target_group **groups, size_t *n, size_t *cap);

#endif
