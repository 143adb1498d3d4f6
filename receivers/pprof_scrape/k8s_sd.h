// SPDX-License-Identifier: Apache-2.0
/*
 * kubernetes_sd_configs, roles pod, node, endpointslice, endpoints,
 * service and ingress, as Prometheus reads them: which URLs list the objects, and the targets
 * they make. Role pod: each container port of each pod with an IP is a
 * target at <pod IP>:<port>; a container with no
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
 * Roles endpointslice, endpoints, service and ingress: see
 * k8s_sd_endpoints_groups, k8s_sd_service_groups, k8s_sd_ingress_groups.
 */
#ifndef PPROF_SCRAPE_K8S_SD_H
#define PPROF_SCRAPE_K8S_SD_H

#include "../../lib/k8s_pods.h"
#include "../../lib/key_map.h"
#include "config.h"

/*
 * The URLs cfg lists resource ("pods", "services", "endpointslices",
 * "endpoints" or "ingresses") from, under the API's base URL: one for
 * each namespace it names (own_namespace, when asked for, among them),
 * else one for every namespace; the selector of the role that lists it
 * (pod, service, endpointslice, endpoints, ingress) as labelSelector and
 * fieldSelector. None when cfg's role has no use for resource: roles pod,
 * service and ingress list their own kind, role endpointslice
 * (endpoints) its own kind, services and pods, role node none. NULL-terminated, each and the array
 * malloc'd.
 */
char **k8s_sd_urls(const struct kubernetes_sd_config *cfg, const char *base,
                   const char *own_namespace, const char *resource);

/*
 * The URL cfg lists nodes from under base, with its node selector: NULL
 * unless the role is node, or attach_metadata asks for nodes in a role
 * that has them (pod, endpointslice, endpoints). malloc'd.
 */
char *k8s_sd_nodes_url(const struct kubernetes_sd_config *cfg, const char *base);

/* Frees what k8s_sd_urls returned (accepts NULL). */
void k8s_sd_urls_free(char **urls);

/* The objects of lists (pods, services, nodes) by namespace and name. */
struct k8s_names {
    const struct k8s_pod **objects;
    size_t n, cap;
    struct key_map by_hash;   /* of the namespace and name -> index into objects */
};

/* Indexes the objects of list (NULL: none) into *names (zero-initialized:
 * empty), which refers to them from then on. */
void k8s_names_add(struct k8s_names *names, const struct k8s_pod_list *list);

/* The object named name in namespace ns ("" for nodes; name NULL: none),
 * or NULL. */
const struct k8s_pod *k8s_named(const struct k8s_names *names, const char *ns, const char *name);

void k8s_names_free(struct k8s_names *names);

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

/*
 * Role service (k8s_sd_service.c): appends to *groups a group of one
 * target for each port of service, at <name>.<namespace>.svc:<port>, with
 * its labels (k8s_sd_service_labels) and _service_port_name,
 * _service_port_number, _service_port_protocol, _service_type,
 * _service_cluster_ip (_service_external_name for an ExternalName
 * service) and _service_loadbalancer_ip (a LoadBalancer's).
 */
void k8s_sd_service_groups(const struct profd_host *h, const struct k8s_pod *service,
                           struct profd_target_group **groups, size_t *n, size_t *cap);

/*
 * Role ingress (k8s_sd_ingress.c): appends to *groups a group of one
 * target for each path of each rule of ingress that has a host, at the
 * host, with _namespace, _ingress_name, its labels and annotations
 * (_ingress_label_*, ...), _ingress_class_name (when it has one),
 * _ingress_scheme (https when a TLS host, or its wildcard, names the
 * host), _ingress_host and _ingress_path.
 */
void k8s_sd_ingress_groups(const struct profd_host *h, const struct k8s_pod *ingress,
                           struct profd_target_group **groups, size_t *n, size_t *cap);

/* The roles whose targets are a service's endpoints. */
enum k8s_endpoints_role { K8S_ROLE_ENDPOINTSLICE, K8S_ROLE_ENDPOINTS };

/*
 * Roles endpointslice and endpoints (k8s_sd_endpoints.c): appends to
 * *groups a group of one target for each address of each endpoint of
 * obj (an EndpointSlice, or an Endpoints object's subsets) at each of its
 * ports, with obj's labels, its service's (NULL: none;
 * k8s_sd_endpoints_service finds it) and, where the endpoint's targetRef is a pod
 * in pods, the pod's with those of its container serving that port; then
 * one for each container port of those pods that no port of obj covers.
 * nodes (NULL: not asked for) adds the labels of each endpoint's node
 * (k8s_sd_endpoint_node).
 */
void k8s_sd_endpoints_groups(const struct profd_host *h, enum k8s_endpoints_role role,
                             const struct k8s_pod *obj, const struct k8s_pod *service,
                             const struct k8s_names *pods, const struct k8s_names *nodes,
                             struct profd_target_group **groups, size_t *n, size_t *cap);

/* The service of obj among services, or NULL: a slice's is named by its
 * kubernetes.io/service-name label, an Endpoints object's as itself. */
const struct k8s_pod *k8s_sd_endpoints_service(enum k8s_endpoints_role role,
                                               const struct k8s_pod *obj,
                                               const struct k8s_names *services);

/* The node of endpoint ep among nodes (NULL: none), or NULL: its
 * targetRef's when that is a node, else its nodeName's (an Endpoints
 * address's: its nodeName's first), as Prometheus picks it. */
const struct k8s_pod *k8s_sd_endpoint_node(enum k8s_endpoints_role role,
                                           const struct k8s_endpoint *ep,
                                           const struct k8s_names *nodes);

/* What the roles share (k8s_sd.c): */

/* Sets __meta_kubernetes_<prefix><name> = value and
 * __meta_kubernetes_<present><name> = "true" for each pair, the names made
 * valid label names. */
void k8s_sd_set_pairs(const struct profd_host *h, struct profd_labels *l,
                      const struct k8s_pairs *pairs, const char *prefix, const char *present);

/* The labels of service's metadata (_namespace, _service_name,
 * _service_label_*, ...): what roles endpointslice and endpoints add,
 * and role service's targets have with more. */
void k8s_sd_service_labels(const struct profd_host *h, const struct k8s_pod *service,
                           struct profd_labels *l);

/* The labels of node's metadata (_node_name, _node_label_*, ...). */
void k8s_sd_node_labels(const struct profd_host *h, const struct k8s_pod *node,
                        struct profd_labels *l);

/* The labels every target of pod p has (_namespace, _pod_name, ...). */
void k8s_sd_pod_labels(const struct profd_host *h, const struct k8s_pod *p,
                       struct profd_labels *l);

/* The labels of container c and its port (NULL: none) on a target; its
 * id (when it has started) only with_id, as role pod gives it and the
 * endpoints roles do not. */
void k8s_sd_container_labels(const struct profd_host *h, const struct k8s_container *c,
                             const struct k8s_port *port, bool with_id, struct profd_labels *l);

/* A new group at the end of *groups: one target at host (an IP, or a
 * name) and *port (NULL: the host alone), with the labels in l. */
struct profd_target_group *k8s_sd_add_group(const struct profd_host *h, const char *host,
                                            const uint32_t *port, const struct profd_labels *l,
                                            struct profd_target_group **groups, size_t *n,
                                            size_t *cap);

#endif
