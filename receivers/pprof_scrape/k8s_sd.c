// SPDX-License-Identifier: Apache-2.0
#include "k8s_sd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/grow.h"
#include "../../lib/hash.h"
#include "../../lib/k8s_api.h"
#include "../../lib/label_valid.h"

#define META "__meta_kubernetes_"

/* cfg's selector of role (validate lets it have one of each), or NULL. */
static const struct k8s_selector *selector_of(const struct kubernetes_sd_config *cfg,
                                              const char *role)
{
    const struct k8s_selector *sel = cfg->selectors.items;
    for (size_t i = 0; i < cfg->selectors.n; i++)
        if (!strcmp(sel[i].role, role))
            return &sel[i];
    return NULL;
}

/* The role whose selector picks the objects of resource. */
static const char *role_listing(const char *resource)
{
    return !strcmp(resource, "pods")           ? "pod"
           : !strcmp(resource, "services")     ? "service"
           : !strcmp(resource, "endpoints")    ? "endpoints"
           : !strcmp(resource, "ingresses")    ? "ingress"
                                               : "endpointslice";
}

/* Whether role has a use for the objects of resource. */
static bool role_lists(const char *role, const char *resource)
{
    bool endpoints = !strcmp(role, "endpointslice") || !strcmp(role, "endpoints");
    if (!strcmp(resource, "pods"))
        return endpoints || !strcmp(role, "pod");
    if (!strcmp(resource, "services"))
        return endpoints || !strcmp(role, "service");
    return !strcmp(role_listing(resource), role);   /* its own kind's */
}

char **k8s_sd_urls(const struct kubernetes_sd_config *cfg, const char *base,
                   const char *own_namespace, const char *resource)
{
    const struct profd_str_list *names = &cfg->namespaces.names;
    bool own = cfg->namespaces.own_namespace && own_namespace && *own_namespace;
    size_t n = names->n + own;
    char **urls = calloc(n + 2, sizeof(char *));
    if (!urls)
        abort();
    if (!role_lists(cfg->role, resource))
        return urls;   /* none of these */
    const struct k8s_selector *sel = selector_of(cfg, role_listing(resource));
    const char *label = sel ? sel->label : NULL, *field = sel ? sel->field : NULL;
    if (n == 0)
        urls[0] = k8s_api_list_url(base, resource, NULL, label, field);
    for (size_t i = 0; i < n; i++)
        urls[i] = k8s_api_list_url(base, resource,
                                   i < names->n ? names->items[i] : own_namespace, label, field);
    return urls;
}

char *k8s_sd_nodes_url(const struct kubernetes_sd_config *cfg, const char *base)
{
    bool attach = cfg->attach_metadata.node &&
                  (!strcmp(cfg->role, "pod") || !strcmp(cfg->role, "endpointslice") ||
                   !strcmp(cfg->role, "endpoints"));
    if (strcmp(cfg->role, "node") && !attach)
        return NULL;
    const struct k8s_selector *sel = selector_of(cfg, "node");
    return k8s_api_list_url(base, "nodes", NULL, sel ? sel->label : NULL,
                            sel ? sel->field : NULL);
}

void k8s_sd_urls_free(char **urls)
{
    free_string_array(urls);
}

void k8s_sd_set_pairs(const struct profd_host *h, struct profd_labels *l,
                      const struct k8s_pairs *pairs, const char *prefix, const char *present)
{
    for (size_t i = 0; i < pairs->n; i++) {
        char name[512], valid[512];
        snprintf(name, sizeof(name), META "%s%s", prefix, pairs->names[i]);
        label_valid_name(name, false, sizeof(valid) - 1, valid);
        h->labels_set(l, valid, pairs->values[i]);
        snprintf(name, sizeof(name), META "%s%s", present, pairs->names[i]);
        label_valid_name(name, false, sizeof(valid) - 1, valid);
        h->labels_set(l, valid, "true");
    }
}

/* Where an object goes in k8s_names. */
static uint64_t name_key(const char *ns, const char *name)
{
    return hash_mix(hash_string(ns), hash_string(name));
}

void k8s_names_add(struct k8s_names *names, const struct k8s_pod_list *list)
{
    for (size_t i = 0; list && i < list->n; i++) {
        names->objects = grow_array(names->objects, &names->cap, names->n + 1,
                                    sizeof(*names->objects));
        names->objects[names->n] = &list->pods[i];
        key_map_put(&names->by_hash, name_key(list->pods[i].namespace, list->pods[i].name),
                    (uint32_t)names->n++);
    }
}

const struct k8s_pod *k8s_named(const struct k8s_names *names, const char *ns, const char *name)
{
    uint32_t i;
    if (!name || !key_map_get(&names->by_hash, name_key(ns, name), &i) ||
        strcmp(names->objects[i]->name, name) || strcmp(names->objects[i]->namespace, ns))
        return NULL;
    return names->objects[i];
}

void k8s_names_free(struct k8s_names *names)
{
    free(names->objects);
    key_map_free(&names->by_hash);
    *names = (struct k8s_names){0};
}

/* attach_metadata's node adds these; the node role's targets have more. */
void k8s_sd_node_labels(const struct profd_host *h, const struct k8s_pod *node,
                        struct profd_labels *l)
{
    h->labels_set(l, META "node_name", node->name);
    k8s_sd_set_pairs(h, l, &node->labels, "node_label_", "node_labelpresent_");
    k8s_sd_set_pairs(h, l, &node->annotations, "node_annotation_", "node_annotationpresent_");
}

void k8s_sd_service_labels(const struct profd_host *h, const struct k8s_pod *service,
                           struct profd_labels *l)
{
    h->labels_set(l, META "namespace", service->namespace);
    h->labels_set(l, META "service_name", service->name);
    k8s_sd_set_pairs(h, l, &service->labels, "service_label_", "service_labelpresent_");
    k8s_sd_set_pairs(h, l, &service->annotations, "service_annotation_",
                     "service_annotationpresent_");
}

void k8s_sd_pod_labels(const struct profd_host *h, const struct k8s_pod *p,
                       struct profd_labels *l)
{
    h->labels_set(l, META "namespace", p->namespace);
    h->labels_set(l, META "pod_name", p->name);
    h->labels_set(l, META "pod_ip", p->nips ? p->ips[0] : "");
    h->labels_set(l, META "pod_uid", p->uid);
    h->labels_set(l, META "pod_node_name", p->node);
    h->labels_set(l, META "pod_host_ip", p->host_ip);
    h->labels_set(l, META "pod_phase", p->phase);
    h->labels_set(l, META "pod_ready", p->ready);
    if (p->controller_kind && *p->controller_kind)
        h->labels_set(l, META "pod_controller_kind", p->controller_kind);
    if (p->controller_name && *p->controller_name)
        h->labels_set(l, META "pod_controller_name", p->controller_name);
    k8s_sd_set_pairs(h, l, &p->labels, "pod_label_", "pod_labelpresent_");
    k8s_sd_set_pairs(h, l, &p->annotations, "pod_annotation_", "pod_annotationpresent_");
}

struct profd_target_group *k8s_sd_add_group(const struct profd_host *h, const char *host,
                                            const uint32_t *port, const struct profd_labels *l,
                                            struct profd_target_group **groups, size_t *n,
                                            size_t *cap)
{
    *groups = grow_array(*groups, cap, *n + 1, sizeof(**groups));
    struct profd_target_group *g = &(*groups)[(*n)++];
    *g = (struct profd_target_group){0};
    g->targets.items = calloc(1, sizeof(char *));
    if (!g->targets.items)
        abort();
    bool v6 = strchr(host, ':') != NULL;
    g->targets.items[0] = !port ? must_strdup(host)
                          : v6  ? must_asprintf("[%s]:%u", host, *port)
                                : must_asprintf("%s:%u", host, *port);
    g->targets.n = 1;
    h->labels_copy(&g->labels, l);
    return g;
}

void k8s_sd_container_labels(const struct profd_host *h, const struct k8s_container *c,
                             const struct k8s_port *port, bool with_id, struct profd_labels *l)
{
    h->labels_set(l, META "pod_container_name", c->name);
    h->labels_set(l, META "pod_container_image", c->image);
    h->labels_set(l, META "pod_container_init", c->kind == K8S_INIT_CONTAINER ? "true" : "false");
    if (with_id && c->id)
        h->labels_set(l, META "pod_container_id", c->id);
    if (port) {
        char number[16];
        snprintf(number, sizeof(number), "%u", port->number);
        h->labels_set(l, META "pod_container_port_name", port->name);
        h->labels_set(l, META "pod_container_port_number", number);
        h->labels_set(l, META "pod_container_port_protocol", port->protocol);
    }
}

static void add_target(const struct profd_host *h, const struct profd_labels *pod,
                       const struct k8s_container *c, const struct k8s_port *port,
                       const char *ip, struct profd_target_group **groups, size_t *n,
                       size_t *cap)
{
    struct profd_target_group *g = k8s_sd_add_group(h, ip, port ? &port->number : NULL, pod,
                                                    groups, n, cap);
    k8s_sd_container_labels(h, c, port, true, &g->labels);
}

void k8s_sd_pod_groups(const struct profd_host *h, const struct k8s_pod *p,
                       const struct k8s_pod *node, struct profd_target_group **groups,
                       size_t *n, size_t *cap)
{
    if (p->nips == 0)
        return;   /* pending or evicted: nowhere to scrape */
    struct profd_labels labels = {0};
    k8s_sd_pod_labels(h, p, &labels);
    if (node)
        k8s_sd_node_labels(h, node, &labels);
    for (size_t k = 0; k < p->ncontainers; k++) {
        const struct k8s_container *c = &p->containers[k];
        if (c->kind == K8S_EPHEMERAL_CONTAINER)
            continue;   /* debugging shells serve nothing */
        if (c->nports == 0)
            add_target(h, &labels, c, NULL, p->ips[0], groups, n, cap);
        for (size_t q = 0; q < c->nports; q++)
            add_target(h, &labels, c, &c->ports[q], p->ips[0], groups, n, cap);
    }
    h->labels_clear(&labels);
}

void k8s_sd_groups(const struct profd_host *h, const struct k8s_pod_list *pods,
                   const struct k8s_pod_list *nodes, struct profd_target_group **groups,
                   size_t *n, size_t *cap)
{
    struct k8s_names names = {0};
    k8s_names_add(&names, nodes);
    for (size_t i = 0; i < pods->n; i++)
        k8s_sd_pod_groups(h, &pods->pods[i], k8s_named(&names, "", pods->pods[i].node),
                          groups, n, cap);
    k8s_names_free(&names);
}

/* The address a node is scraped at, as Prometheus picks it: its first of
 * the first type it has of InternalIP, InternalDNS, ExternalIP,
 * ExternalDNS, LegacyHostIP, Hostname; NULL none. */
static const char *node_address(const struct k8s_pod *node)
{
    static const char *const order[] = {"InternalIP", "InternalDNS", "ExternalIP",
                                        "ExternalDNS", "LegacyHostIP", "Hostname"};
    for (size_t t = 0; t < sizeof(order) / sizeof(*order); t++)
        for (size_t i = 0; i < node->addresses.n; i++)
            if (!strcmp(node->addresses.names[i], order[t]))
                return node->addresses.values[i];
    return NULL;
}

void k8s_sd_node_groups(const struct profd_host *h, const struct k8s_pod_list *nodes,
                        struct profd_target_group **groups, size_t *n, size_t *cap)
{
    for (size_t i = 0; i < nodes->n; i++) {
        const struct k8s_pod *node = &nodes->pods[i];
        const char *address = node_address(node);
        if (!address)
            continue;   /* nowhere to scrape */
        struct profd_labels labels = {0};
        k8s_sd_node_labels(h, node, &labels);
        h->labels_set(&labels, META "node_provider_id", node->provider_id);
        h->labels_set(&labels, "instance", node->name);
        for (size_t a = 0; a < node->addresses.n; a++) {
            char name[512], valid[512];
            snprintf(name, sizeof(name), META "node_address_%s", node->addresses.names[a]);
            label_valid_name(name, false, sizeof(valid) - 1, valid);
            if (!h->labels_get(&labels, valid))   /* the first of each type */
                h->labels_set(&labels, valid, node->addresses.values[a]);
        }
        /* at the kubelet's port, 0 when the node names none, as Prometheus */
        k8s_sd_add_group(h, address, &node->kubelet_port, &labels, groups, n, cap);
        h->labels_clear(&labels);
    }
}
