// SPDX-License-Identifier: Apache-2.0
/* Role endpointslice: the targets of one EndpointSlice (k8s_sd.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/grow.h"
#include "k8s_sd.h"

#define META "__meta_kubernetes_"

/* A pod some endpoint of the slice refers to, and the slice's ports it
 * was given targets at. */
struct seen_pod {
    const struct k8s_pod *pod;
    const struct k8s_port **ports;
    size_t nports, cap;
};

struct seen_pods {
    struct seen_pod *items;
    size_t n, cap;
};

/* The entry of pod in seen, added when it has none. */
static struct seen_pod *seen(struct seen_pods *s, const struct k8s_pod *pod)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->items[i].pod == pod)
            return &s->items[i];
    s->items = grow_array(s->items, &s->cap, s->n + 1, sizeof(*s->items));
    s->items[s->n] = (struct seen_pod){.pod = pod};
    return &s->items[s->n++];
}

static void seen_free(struct seen_pods *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->items[i].ports);
    free(s->items);
}

const struct k8s_pod *k8s_sd_slice_service(const struct k8s_pod *slice,
                                           const struct k8s_names *services)
{
    for (size_t i = 0; i < slice->labels.n; i++)
        if (!strcmp(slice->labels.names[i], "kubernetes.io/service-name"))
            return k8s_named(services, slice->namespace, slice->labels.values[i]);
    return NULL;
}

/* The labels every target of slice has, with its service's. */
static void slice_labels(const struct profd_host *h, const struct k8s_pod *slice,
                         const struct k8s_names *services, struct profd_labels *l)
{
    h->labels_set(l, META "namespace", slice->namespace);
    h->labels_set(l, META "endpointslice_name", slice->name);
    h->labels_set(l, META "endpointslice_address_type", slice->address_type);
    k8s_sd_set_pairs(h, l, &slice->labels, "endpointslice_label_", "endpointslice_labelpresent_");
    k8s_sd_set_pairs(h, l, &slice->annotations, "endpointslice_annotation_",
                     "endpointslice_annotationpresent_");
    const struct k8s_pod *service = k8s_sd_slice_service(slice, services);
    if (!service)
        return;
    h->labels_set(l, META "service_name", service->name);
    k8s_sd_set_pairs(h, l, &service->labels, "service_label_", "service_labelpresent_");
    k8s_sd_set_pairs(h, l, &service->annotations, "service_annotation_",
                     "service_annotationpresent_");
}

static void set_condition(const struct profd_host *h, struct profd_labels *l, const char *name,
                          enum k8s_condition c)
{
    if (c != K8S_UNSET)
        h->labels_set(l, name, c == K8S_TRUE ? "true" : "false");
}

static void set_if(const struct profd_host *h, struct profd_labels *l, const char *name,
                   const char *value)
{
    if (value)
        h->labels_set(l, name, value);
}

/* The labels of endpoint ep at port. */
static void endpoint_labels(const struct profd_host *h, const struct k8s_endpoint *ep,
                            const struct k8s_port *port, struct profd_labels *l)
{
    h->labels_set(l, META "endpointslice_port_name", port->name);
    h->labels_set(l, META "endpointslice_port_protocol", port->protocol);
    if (port->number) {
        char number[16];
        snprintf(number, sizeof(number), "%u", port->number);
        h->labels_set(l, META "endpointslice_port", number);
    }
    set_if(h, l, META "endpointslice_port_app_protocol", port->app_protocol);
    set_condition(h, l, META "endpointslice_endpoint_conditions_ready", ep->ready);
    set_condition(h, l, META "endpointslice_endpoint_conditions_serving", ep->serving);
    set_condition(h, l, META "endpointslice_endpoint_conditions_terminating", ep->terminating);
    set_if(h, l, META "endpointslice_endpoint_hostname", ep->hostname);
    set_if(h, l, META "endpointslice_address_target_kind", ep->target_kind);
    set_if(h, l, META "endpointslice_address_target_name", ep->target_name);
    set_if(h, l, META "endpointslice_endpoint_node_name", ep->node_name);
    set_if(h, l, META "endpointslice_endpoint_zone", ep->zone);
    k8s_sd_set_pairs(h, l, &ep->topology, "endpointslice_endpoint_topology_",
                     "endpointslice_endpoint_topology_present_");
}

/* The object ep's targetRef names if it is of kind, else NULL. */
static const struct k8s_pod *referred(const struct k8s_endpoint *ep, const char *kind,
                                      const struct k8s_names *names, const char *ns)
{
    if (!names || !ep->target_kind || strcmp(ep->target_kind, kind))
        return NULL;
    return k8s_named(names, ns, ep->target_name);
}

/* The first port of a container of pod (not an init one) numbered number,
 * or NULL, with its container in *c. */
static const struct k8s_port *container_port(const struct k8s_pod *pod, uint32_t number,
                                              const struct k8s_container **c)
{
    for (size_t k = 0; number && k < pod->ncontainers; k++)
        for (size_t q = 0; pod->containers[k].kind == K8S_CONTAINER &&
                           q < pod->containers[k].nports; q++)
            if (pod->containers[k].ports[q].number == number) {
                *c = &pod->containers[k];
                return &pod->containers[k].ports[q];
            }
    return NULL;
}

/* The target of address of endpoint ep at port. */
static void add_endpoint_target(const struct profd_host *h, const struct profd_labels *group,
                                const struct k8s_endpoint *ep, const struct k8s_port *port,
                                const char *address, const struct k8s_names *pods,
                                const struct k8s_names *nodes, struct seen_pods *seen_pods,
                                struct profd_target_group **groups, size_t *n, size_t *cap)
{
    struct profd_target_group *g = k8s_sd_add_group(h, address, port->number ? &port->number
                                                                             : NULL,
                                                    group, groups, n, cap);
    endpoint_labels(h, ep, port, &g->labels);
    if (nodes) {
        const struct k8s_pod *node = referred(ep, "Node", nodes, "");
        if (!node && (!ep->target_kind || strcmp(ep->target_kind, "Node")))
            node = k8s_named(nodes, "", ep->node_name);
        if (node)
            k8s_sd_node_labels(h, node, &g->labels);
    }
    const struct k8s_pod *pod = referred(ep, "Pod", pods, ep->target_namespace);
    if (!pod)
        return;
    struct seen_pod *sp = seen(seen_pods, pod);
    sp->ports = grow_array(sp->ports, &sp->cap, sp->nports + 1, sizeof(*sp->ports));
    sp->ports[sp->nports++] = port;
    k8s_sd_pod_labels(h, pod, &g->labels);
    const struct k8s_container *c;
    const struct k8s_port *cport = container_port(pod, port->number, &c);
    if (cport)
        k8s_sd_container_labels(h, c, cport, &g->labels);
}

/* Whether a port of the slice sp was given has number. */
static bool covered(const struct seen_pod *sp, uint32_t number)
{
    for (size_t i = 0; i < sp->nports; i++)
        if (sp->ports[i]->number == number)
            return true;
    return false;
}

/* The targets of the container ports of sp's pod that no port of the
 * slice covers. */
static void add_uncovered(const struct profd_host *h, const struct profd_labels *group,
                          const struct seen_pod *sp, struct profd_target_group **groups,
                          size_t *n, size_t *cap)
{
    const struct k8s_pod *pod = sp->pod;
    if (pod->nips == 0)
        return;   /* starting, or evicted */
    for (size_t k = 0; k < pod->ncontainers; k++) {
        const struct k8s_container *c = &pod->containers[k];
        for (size_t q = 0; c->kind == K8S_CONTAINER && q < c->nports; q++) {
            if (covered(sp, c->ports[q].number))
                continue;
            struct profd_target_group *g = k8s_sd_add_group(h, pod->ips[0], &c->ports[q].number,
                                                            group, groups, n, cap);
            k8s_sd_pod_labels(h, pod, &g->labels);
            k8s_sd_container_labels(h, c, &c->ports[q], &g->labels);
        }
    }
}

void k8s_sd_slice_groups(const struct profd_host *h, const struct k8s_pod *slice,
                         const struct k8s_names *services, const struct k8s_names *pods,
                         const struct k8s_names *nodes, struct profd_target_group **groups,
                         size_t *n, size_t *cap)
{
    struct profd_labels group = {0};
    slice_labels(h, slice, services, &group);
    struct seen_pods seen_pods = {0};
    for (size_t e = 0; e < slice->nendpoints; e++)
        for (size_t p = 0; p < slice->nslice_ports; p++)
            for (size_t a = 0; a < slice->endpoints[e].naddresses; a++)
                add_endpoint_target(h, &group, &slice->endpoints[e], &slice->slice_ports[p],
                                    slice->endpoints[e].addresses[a], pods, nodes, &seen_pods,
                                    groups, n, cap);
    for (size_t i = 0; i < seen_pods.n; i++)
        add_uncovered(h, &group, &seen_pods.items[i], groups, n, cap);
    seen_free(&seen_pods);
    h->labels_clear(&group);
}
