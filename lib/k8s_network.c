// SPDX-License-Identifier: Apache-2.0
#include "k8s_network.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "k8s_json.h"

/* obj's string member key, copied; NULL when absent or not a string. */
static char *string_or_null(json_t *obj, const char *key)
{
    return must_strdup_or_null(json_string_value(json_object_get(obj, key)));
}

static enum k8s_condition condition_of(json_t *conditions, const char *key)
{
    json_t *c = json_object_get(conditions, key);
    return json_is_boolean(c) ? (json_is_true(c) ? K8S_TRUE : K8S_FALSE) : K8S_UNSET;
}

/* targetRef's kind, name and namespace into ep, when e has one. */
static void read_target_ref(json_t *e, struct k8s_endpoint *ep)
{
    json_t *ref = json_object_get(e, "targetRef");
    if (!json_is_object(ref))
        return;
    ep->target_kind = k8s_json_string(ref, "kind");
    ep->target_name = k8s_json_string(ref, "name");
    ep->target_namespace = k8s_json_string(ref, "namespace");
}

/* A new endpoint at the end of p's, zeroed. */
static struct k8s_endpoint *new_endpoint(struct k8s_pod *p, size_t *cap)
{
    p->endpoints = grow_array(p->endpoints, cap, p->nendpoints + 1, sizeof(*p->endpoints));
    p->endpoints[p->nendpoints] = (struct k8s_endpoint){0};
    return &p->endpoints[p->nendpoints++];
}

/* The strings of array (those that are strings, not empty), NULL-ended,
 * their count in *n. */
static char **string_array_of(json_t *array, size_t *n)
{
    char **v = calloc(json_array_size(array) + 1, sizeof(char *));
    if (!v)
        abort();
    size_t i;
    json_t *e;
    *n = 0;
    json_array_foreach(array, i, e)
        if (json_string_value(e) && *json_string_value(e))
            v[(*n)++] = must_strdup(json_string_value(e));
    return v;
}

/* An EndpointSlice's endpoint. */
static void read_endpoint(json_t *e, struct k8s_endpoint *ep)
{
    json_t *conditions = json_object_get(e, "conditions");
    *ep = (struct k8s_endpoint){.ready = condition_of(conditions, "ready"),
                                .serving = condition_of(conditions, "serving"),
                                .terminating = condition_of(conditions, "terminating"),
                                .hostname = string_or_null(e, "hostname"),
                                .node_name = string_or_null(e, "nodeName"),
                                .zone = string_or_null(e, "zone")};
    read_target_ref(e, ep);
    k8s_pairs_read(json_object_get(e, "deprecatedTopology"), &ep->topology);
    ep->addresses = string_array_of(json_object_get(e, "addresses"), &ep->naddresses);
}

/* The addresses of one of an Endpoints object's subsets (addresses, or
 * notReadyAddresses as ready says), each an endpoint of subset. */
static void read_subset_addresses(struct k8s_pod *p, size_t *cap, json_t *addresses,
                                  uint32_t subset, enum k8s_condition ready)
{
    size_t i;
    json_t *a;
    json_array_foreach(addresses, i, a) {
        const char *ip = json_string_value(json_object_get(a, "ip"));
        if (!ip || !*ip)
            continue;
        struct k8s_endpoint *ep = new_endpoint(p, cap);
        ep->subset = subset;
        ep->ready = ready;
        ep->addresses = calloc(2, sizeof(char *));
        if (!ep->addresses)
            abort();
        ep->addresses[ep->naddresses++] = must_strdup(ip);
        const char *hostname = json_string_value(json_object_get(a, "hostname"));
        ep->hostname = hostname && *hostname ? must_strdup(hostname) : NULL;
        ep->node_name = string_or_null(a, "nodeName");
        read_target_ref(a, ep);
    }
}

/* The ports of ports into p's, of subset; a port number out of range
 * reads as none. */
static void read_object_ports(struct k8s_pod *p, size_t *cap, json_t *ports, uint32_t subset)
{
    size_t i;
    json_t *e;
    json_array_foreach(ports, i, e) {
        if (!json_is_object(e))
            continue;
        json_int_t number = json_integer_value(json_object_get(e, "port"));
        p->ports = grow_array(p->ports, cap, p->nports + 1, sizeof(*p->ports));
        struct k8s_port *port = &p->ports[p->nports++];
        k8s_port_read(e, number > 0 && number <= 65535 ? (uint32_t)number : 0, port);
        port->subset = subset;
    }
}

/* An EndpointSlice's address type, endpoints and ports, an Endpoints
 * object's subsets, or a Service's ports (none of them in objects of
 * other kinds). */
static void read_endpoints(struct k8s_pod *p, json_t *item)
{
    p->address_type = string_or_null(item, "addressType");
    size_t endpoints_cap = 0, ports_cap = 0, i;
    json_t *e;
    json_array_foreach(json_object_get(item, "endpoints"), i, e)
        if (json_is_object(e))
            read_endpoint(e, new_endpoint(p, &endpoints_cap));
    read_object_ports(p, &ports_cap, json_object_get(item, "ports"), 0);
    read_object_ports(p, &ports_cap, json_object_get(json_object_get(item, "spec"), "ports"), 0);
    json_array_foreach(json_object_get(item, "subsets"), i, e) {
        uint32_t subset = (uint32_t)i;
        read_subset_addresses(p, &endpoints_cap, json_object_get(e, "addresses"), subset,
                              K8S_TRUE);
        read_subset_addresses(p, &endpoints_cap, json_object_get(e, "notReadyAddresses"),
                              subset, K8S_FALSE);
        read_object_ports(p, &ports_cap, json_object_get(e, "ports"), subset);
    }
}

/* An Ingress's class, rules and TLS hosts (none in other kinds). */
static void read_ingress(struct k8s_pod *p, json_t *spec)
{
    p->ingress_class = string_or_null(spec, "ingressClassName");
    json_t *rules = json_object_get(spec, "rules"), *tls = json_object_get(spec, "tls"), *e;
    size_t i, cap = 0;
    if (json_array_size(rules) && !(p->rules = calloc(json_array_size(rules), sizeof(*p->rules))))
        abort();
    json_array_foreach(rules, i, e) {
        struct k8s_ingress_rule *r = &p->rules[p->nrules++];
        *r = (struct k8s_ingress_rule){.host = k8s_json_string(e, "host")};
        json_t *http = json_object_get(e, "http"), *path;
        r->paths = calloc(json_array_size(json_object_get(http, "paths")) + 2, sizeof(char *));
        if (!r->paths)
            abort();
        size_t k;
        json_array_foreach(json_object_get(http, "paths"), k, path) {
            const char *text = json_string_value(json_object_get(path, "path"));
            r->paths[r->npaths++] = must_strdup(text && *text ? text : "/");
        }
        if (r->npaths == 0)
            r->paths[r->npaths++] = must_strdup("/");
    }
    json_array_foreach(tls, i, e) {
        size_t k;
        json_t *host;
        json_array_foreach(json_object_get(e, "hosts"), k, host) {
            if (!json_string_value(host) || !*json_string_value(host))
                continue;
            p->tls_hosts = grow_array(p->tls_hosts, &cap, p->ntls_hosts + 2, sizeof(char *));
            p->tls_hosts[p->ntls_hosts++] = must_strdup(json_string_value(host));
            p->tls_hosts[p->ntls_hosts] = NULL;
        }
    }
}

static void free_endpoint(struct k8s_endpoint *ep)
{
    free_string_array(ep->addresses);
    free(ep->hostname);
    free(ep->node_name);
    free(ep->zone);
    free(ep->target_kind);
    free(ep->target_name);
    free(ep->target_namespace);
    k8s_pairs_free(&ep->topology);
}

void k8s_network_read(struct k8s_pod *p, json_t *item)
{
    json_t *spec = json_object_get(item, "spec");
    read_endpoints(p, item);
    p->service_type = string_or_null(spec, "type");
    p->cluster_ip = string_or_null(spec, "clusterIP");
    p->external_name = string_or_null(spec, "externalName");
    p->load_balancer_ip = string_or_null(spec, "loadBalancerIP");
    read_ingress(p, spec);
}

void k8s_network_free(struct k8s_pod *p)
{
    free(p->address_type);
    for (size_t k = 0; k < p->nendpoints; k++)
        free_endpoint(&p->endpoints[k]);
    free(p->endpoints);
    k8s_ports_free(p->ports, p->nports);
    free(p->service_type);
    free(p->cluster_ip);
    free(p->external_name);
    free(p->load_balancer_ip);
    free(p->ingress_class);
    for (size_t k = 0; k < p->nrules; k++) {
        free(p->rules[k].host);
        free_string_array(p->rules[k].paths);
    }
    free(p->rules);
    free_string_array(p->tls_hosts);
}
