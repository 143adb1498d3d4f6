// SPDX-License-Identifier: Apache-2.0
/*
 * The pods of a Kubernetes PodList (the JSON of GET /api/v1/pods), with
 * what the modules that read them use: the k8s_metadata processor (which
 * pod a process or an IP belongs to) and the scrape receiver's
 * kubernetes_sd_configs (a target for each port of each container). The
 * other lists the scrape receiver watches are read by the same functions,
 * each object a k8s_pod with its metadata (namespace, name, uid, labels,
 * annotations) and the fields only its kind has: a NodeList's (GET
 * /api/v1/nodes) provider id, addresses and kubelet port; an
 * EndpointSliceList's (GET /apis/discovery.k8s.io/v1/endpointslices)
 * address type, endpoints and ports; an EndpointsList's (GET
 * /api/v1/endpoints) subsets, as endpoints and ports of each subset; a
 * ServiceList's (GET /api/v1/services) type, addresses and ports; an
 * IngressList's (GET /apis/networking.k8s.io/v1/ingresses) class, rules
 * and TLS hosts.
 */
#ifndef PROFD_LIB_K8S_PODS_H
#define PROFD_LIB_K8S_PODS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "key_map.h"

/* Name/value pairs: a pod's labels or annotations, in the list's order. */
struct k8s_pairs {
    char **names, **values;
    size_t n;
};

struct k8s_port {
    char *name;       /* "" when the port has none */
    char *protocol;   /* TCP when the list says none, as the API defaults it */
    char *app_protocol;   /* an EndpointSlice port's appProtocol; NULL none */
    uint32_t number;      /* 0: an EndpointSlice port without one (all ports) */
    uint32_t subset;      /* an Endpoints port's subset (0 for the other kinds) */
};

/* An EndpointSlice condition: the API leaves one out when it is unknown. */
enum k8s_condition { K8S_UNSET, K8S_FALSE, K8S_TRUE };

/* One of an EndpointSlice's endpoints, or one address of an Endpoints
 * object's subset (ready, or not, as its list of addresses says). */
struct k8s_endpoint {
    char **addresses;
    size_t naddresses;
    uint32_t subset;   /* an Endpoints address's subset (0 for slices) */
    enum k8s_condition ready, serving, terminating;
    char *hostname, *node_name, *zone;   /* NULL when the object says none */
    /* targetRef's kind, name and namespace ("" where it says none); NULL
     * kinds when the endpoint has no targetRef */
    char *target_kind, *target_name, *target_namespace;
    struct k8s_pairs topology;   /* deprecatedTopology */
};

/* One of an Ingress's rules: its host ("" none) and its HTTP paths ("/"
 * for one that names none, and the one path of a rule without http). */
struct k8s_ingress_rule {
    char *host;
    char **paths;
    size_t npaths;
};

enum k8s_container_kind { K8S_CONTAINER, K8S_INIT_CONTAINER, K8S_EPHEMERAL_CONTAINER };

struct k8s_container {
    char *name;           /* "" when the list says none */
    char *image;          /* "" when the list says none; NULL when trimmed (k8s_pod_trim) */
    char *id;             /* its status's containerID ("containerd://<hex>"); NULL not started */
    enum k8s_container_kind kind;
    struct k8s_port *ports;
    size_t nports;
};

struct k8s_pod {
    char *namespace, *name, *uid, *node, *phase, *host_ip;
    char *resource_version;       /* metadata.resourceVersion: another one, another pod */
    char **ips;                   /* status.podIP first, then podIPs' others; none pending */
    size_t nips;
    const char *ready;            /* the Ready condition: "true", "false", else "unknown" */
    char *controller_kind, *controller_name;   /* its controlling owner's; NULL none */
    struct k8s_pairs labels, annotations;
    struct k8s_container *containers;   /* spec order: containers, init, ephemeral */
    size_t ncontainers;
    /* A node's: spec.providerID ("" none), status.addresses (each a type,
     * such as InternalIP, and an address, in the node's order) and
     * status.daemonEndpoints.kubeletEndpoint.Port (0 none). */
    char *provider_id;
    struct k8s_pairs addresses;
    uint32_t kubelet_port;
    /* (k8s_network.h) An EndpointSlice's: addressType (NULL none),
     * endpoints and ports; an
     * Endpoints object's subsets' addresses and ports, each with its
     * subset; a Service's spec.ports. */
    char *address_type;
    struct k8s_endpoint *endpoints;
    size_t nendpoints;
    struct k8s_port *ports;
    size_t nports;
    /* A Service's spec: type, clusterIP, externalName, loadBalancerIP
     * (NULL none). */
    char *service_type, *cluster_ip, *external_name, *load_balancer_ip;
    /* An Ingress's spec: ingressClassName (NULL none), each rule's host and
     * paths, and the hosts of its tls. */
    char *ingress_class;
    struct k8s_ingress_rule *rules;
    size_t nrules;
    char **tls_hosts;
    size_t ntls_hosts;
};

struct k8s_pod_list {
    struct k8s_pod *pods;
    size_t n, cap;
    char *resource_version;   /* the list's metadata.resourceVersion, from which to watch */
    /* The hash of each UID -> its pod's place, for pods[0, indexed)
     * (k8s_pod_list_index). */
    struct key_map by_uid;
    size_t indexed;
};

/* What a watch (GET ...?watch=1) streams: one JSON object a line. */
enum k8s_event_type { K8S_ADDED, K8S_MODIFIED, K8S_DELETED, K8S_BOOKMARK, K8S_ERROR };

struct k8s_watch_event {
    enum k8s_event_type type;
    struct k8s_pod pod;         /* ADDED, MODIFIED, DELETED: the pod as it is now */
    char *resource_version;     /* the object's: where a watch goes on from */
    long code;                  /* ERROR: the Status's code (410: the version is gone) */
    char *message;              /* ERROR: the Status's message */
};

/*
 * Reads the PodList json (len bytes), or another list, into *out: every
 * item with metadata, its containers from the spec (containers,
 * initContainers, ephemeralContainers) with the ids of their statuses,
 * and containers that have a status alone; a node's and an
 * EndpointSlice's own fields; each without what drop (k8s_drop flags,
 * k8s_pod_trim) names, trimmed as it is read. Fields of the wrong JSON
 * type read as absent. Returns 0, or -1 with why set (not JSON, with line
 * and column; not a list) and *out empty.
 */
int k8s_pod_list_parse(const char *json, size_t len, unsigned drop, struct k8s_pod_list *out,
                       char *why, size_t whylen);

/* Frees what k8s_pod_list_parse put in l and empties it. */
void k8s_pod_list_free(struct k8s_pod_list *l);

/*
 * Reads one line of a watch (len bytes, no line end) into *ev. Returns 0,
 * or -1 with why set: not JSON, an unknown type, an ADDED, MODIFIED or
 * DELETED without an object's metadata.
 */
int k8s_watch_event_parse(const char *line, size_t len, struct k8s_watch_event *ev, char *why,
                          size_t whylen);

/* Frees what k8s_watch_event_parse put in ev. */
void k8s_watch_event_free(struct k8s_watch_event *ev);

/* Puts *p in l in place of the pod of its UID, or at the end; l owns what
 * *p held from then on. The pod is found by its UID's hash, not by
 * walking the list. Returns where it is now (until l next changes). */
const struct k8s_pod *k8s_pod_list_put(struct k8s_pod_list *l, struct k8s_pod *p);

/* Indexes by UID the pods of l not indexed yet (those a parse
 * appended); a put or a remove does it first. */
void k8s_pod_list_index(struct k8s_pod_list *l);

/* The pod of UID uid in l, or NULL: found by the UID's hash among the pods
 * indexed, by a walk among the others. */
const struct k8s_pod *k8s_pod_list_get(const struct k8s_pod_list *l, const char *uid);

/* Frees what p holds (not p). */
void k8s_pod_free(struct k8s_pod *p);

/* What of an object a reader may not need, freed by k8s_pod_trim: its
 * labels, its annotations, its containers' images and ports. */
enum k8s_drop {
    K8S_DROP_LABELS = 1,
    K8S_DROP_ANNOTATIONS = 2,
    K8S_DROP_CONTAINER_DETAILS = 4,
};

/* Frees what drop (k8s_drop flags) names of p: no labels, annotations or
 * ports left, images NULL. */
void k8s_pod_trim(struct k8s_pod *p, unsigned drop);

/* Removes (and frees) the pod of UID uid from l, the last pod moved into
 * its place; false when l has none. */
bool k8s_pod_list_remove(struct k8s_pod_list *l, const char *uid);

#endif
