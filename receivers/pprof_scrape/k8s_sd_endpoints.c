// SPDX-License-Identifier: Apache-2.0
/* Roles endpointslice and endpoints: the targets of one EndpointSlice or
 * Endpoints object (k8s_sd.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/grow.h"
#include "k8s_sd.h"

#define META "__meta_kubernetes_"

/* A pod some endpoint of the object refers to, and the object's ports it
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

const struct k8s_pod *k8s_sd_endpoints_service(enum k8s_endpoints_role role,
                                               const struct k8s_pod *obj,
                                               const struct k8s_names *services)
{
    if (role == K8S_ROLE_ENDPOINTS)   /* an Endpoints object is named as its service */
        return k8s_named(services, obj->namespace, obj->name);
    for (size_t i = 0; i < obj->labels.n; i++)
        if (!strcmp(obj->labels.names[i], "kubernetes.io/service-name"))
            return k8s_named(services, obj->namespace, obj->labels.values[i]);
    return NULL;
}

/* The labels every target of obj has, with its service's (NULL: none). */
static void object_labels(const struct profd_host *h, enum k8s_endpoints_role role,
                          const struct k8s_pod *obj, const struct k8s_pod *service,
                          struct profd_labels *l)
{
    h->labels_set(l, META "namespace", obj->namespace);
    if (service)
        k8s_sd_service_labels(h, service, l);
    if (role == K8S_ROLE_ENDPOINTS) {
        h->labels_set(l, META "endpoints_name", obj->name);
        k8s_sd_set_pairs(h, l, &obj->labels, "endpoints_label_", "endpoints_labelpresent_");
        k8s_sd_set_pairs(h, l, &obj->annotations, "endpoints_annotation_",
                         "endpoints_annotationpresent_");
        return;
    }
    h->labels_set(l, META "endpointslice_name", obj->name);
    h->labels_set(l, META "endpointslice_address_type",
                  obj->address_type ? obj->address_type : "");
    k8s_sd_set_pairs(h, l, &obj->labels, "endpointslice_label_", "endpointslice_labelpresent_");
    k8s_sd_set_pairs(h, l, &obj->annotations, "endpointslice_annotation_",
                     "endpointslice_annotationpresent_");
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

/* The labels of an Endpoints object's address ep at port. */
static void address_labels(const struct profd_host *h, const struct k8s_endpoint *ep,
                           const struct k8s_port *port, struct profd_labels *l)
{
    h->labels_set(l, META "endpoint_port_name", port->name);
    h->labels_set(l, META "endpoint_port_protocol", port->protocol);
    h->labels_set(l, META "endpoint_ready", ep->ready == K8S_TRUE ? "true" : "false");
    set_if(h, l, META "endpoint_address_target_kind", ep->target_kind);
    set_if(h, l, META "endpoint_address_target_name", ep->target_name);
    set_if(h, l, META "endpoint_node_name", ep->node_name);
    set_if(h, l, META "endpoint_hostname", ep->hostname);
}

/* The labels of a slice's endpoint ep at port. */
static void slice_endpoint_labels(const struct profd_host *h, const struct k8s_endpoint *ep,
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

const struct k8s_pod *k8s_sd_endpoint_node(enum k8s_endpoints_role role,
                                           const struct k8s_endpoint *ep,
                                           const struct k8s_names *nodes)
{
    bool node_ref = ep->target_kind && !strcmp(ep->target_kind, "Node");
    const char *name = role == K8S_ROLE_ENDPOINTS ? (ep->node_name ? ep->node_name
                                                     : node_ref  ? ep->target_name
                                                                 : NULL)
                       : node_ref ? ep->target_name
                                  : ep->node_name;
    return nodes ? k8s_named(nodes, "", name) : NULL;
}

/* The first port numbered number of pod's containers, then its init
 * containers (sidecars serve ports too), as Prometheus looks; NULL when
 * none has it, else its container in *c. */
static const struct k8s_port *container_port(const struct k8s_pod *pod, uint32_t number,
                                              const struct k8s_container **c)
{
    for (size_t k = 0; number && k < pod->ncontainers; k++)
        for (size_t q = 0; pod->containers[k].kind != K8S_EPHEMERAL_CONTAINER &&
                           q < pod->containers[k].nports; q++)
            if (pod->containers[k].ports[q].number == number) {
                *c = &pod->containers[k];
                return &pod->containers[k].ports[q];
            }
    return NULL;
}

/* What every target of one object is made with. */
struct endpoints_build {
    const struct profd_host *h;
    enum k8s_endpoints_role role;
    const struct profd_labels *group;   /* the object's labels */
    const struct k8s_names *pods, *nodes;
    struct seen_pods seen_pods;
    struct profd_target_group **groups;
    size_t *n, *cap;
};

/* The target of address of endpoint ep at port. */
static void add_endpoint_target(struct endpoints_build *b, const struct k8s_endpoint *ep,
                                const struct k8s_port *port, const char *address)
{
    const struct profd_host *h = b->h;
    struct profd_target_group *g = k8s_sd_add_group(h, address, port->number ? &port->number
                                                                             : NULL,
                                                    b->group, b->groups, b->n, b->cap);
    if (b->role == K8S_ROLE_ENDPOINTS)
        address_labels(h, ep, port, &g->labels);
    else
        slice_endpoint_labels(h, ep, port, &g->labels);
    const struct k8s_pod *node = k8s_sd_endpoint_node(b->role, ep, b->nodes);
    if (node)
        k8s_sd_node_labels(h, node, &g->labels);
    const struct k8s_pod *pod = referred(ep, "Pod", b->pods, ep->target_namespace);
    if (!pod)
        return;
    struct seen_pod *sp = seen(&b->seen_pods, pod);
    sp->ports = grow_array(sp->ports, &sp->cap, sp->nports + 1, sizeof(*sp->ports));
    sp->ports[sp->nports++] = port;
    k8s_sd_pod_labels(h, pod, &g->labels);
    const struct k8s_container *c;
    const struct k8s_port *cport = container_port(pod, port->number, &c);
    if (cport)
        k8s_sd_container_labels(h, c, cport, false, &g->labels);
}

/* Whether a port of the object sp was given has number. */
static bool covered(const struct seen_pod *sp, uint32_t number)
{
    for (size_t i = 0; i < sp->nports; i++)
        if (sp->ports[i]->number == number)
            return true;
    return false;
}

/* The targets of the container ports of sp's pod, its init containers'
 * included, that no port of the object covers. */
static void add_uncovered(struct endpoints_build *b, const struct seen_pod *sp)
{
    const struct k8s_pod *pod = sp->pod;
    if (pod->nips == 0)
        return;   /* starting, or evicted */
    for (size_t k = 0; k < pod->ncontainers; k++) {
        const struct k8s_container *c = &pod->containers[k];
        for (size_t q = 0; c->kind != K8S_EPHEMERAL_CONTAINER && q < c->nports; q++) {
            if (covered(sp, c->ports[q].number))
                continue;
            struct profd_target_group *g = k8s_sd_add_group(
                b->h, pod->ips[0], &c->ports[q].number, b->group, b->groups, b->n, b->cap);
            k8s_sd_pod_labels(b->h, pod, &g->labels);
            k8s_sd_container_labels(b->h, c, &c->ports[q], false, &g->labels);
        }
    }
}

void k8s_sd_endpoints_groups(const struct profd_host *h, enum k8s_endpoints_role role,
                             const struct k8s_pod *obj, const struct k8s_pod *service,
                             const struct k8s_names *pods, const struct k8s_names *nodes,
                             struct profd_target_group **groups, size_t *n, size_t *cap)
{
    struct profd_labels group = {0};
    object_labels(h, role, obj, service, &group);
    struct endpoints_build b = {h, role, &group, pods, nodes, {0}, groups, n, cap};
    /* in Prometheus's order: a slice's endpoints each at every port, an
     * Endpoints object's ports each with every address of its subset */
    bool by_port = role == K8S_ROLE_ENDPOINTS;
    size_t outer = by_port ? obj->nports : obj->nendpoints;
    size_t inner = by_port ? obj->nendpoints : obj->nports;
    for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < inner; i++) {
            const struct k8s_endpoint *ep = &obj->endpoints[by_port ? i : o];
            const struct k8s_port *port = &obj->ports[by_port ? o : i];
            for (size_t a = 0; port->subset == ep->subset && a < ep->naddresses; a++)
                add_endpoint_target(&b, ep, port, ep->addresses[a]);
        }
    for (size_t i = 0; i < b.seen_pods.n; i++)
        add_uncovered(&b, &b.seen_pods.items[i]);
    seen_free(&b.seen_pods);
    h->labels_clear(&group);
}
