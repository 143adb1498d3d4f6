// SPDX-License-Identifier: Apache-2.0
#include "k8s_pods.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hash.h"
#include "json_pull.h"
#include "k8s_json.h"
#include "k8s_network.h"

/* obj's string member key, copied; "" when absent or not a string. */
char *k8s_json_string(json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return must_strdup(s ? s : "");
}

/* Room in p for n pairs, none there yet. */
static void k8s_pairs_room(struct k8s_pairs *p, size_t n)
{
    p->names = calloc(n + 1, sizeof(char *));
    p->values = calloc(n + 1, sizeof(char *));
    if (!p->names || !p->values)
        abort();
}

void k8s_pairs_read(json_t *obj, struct k8s_pairs *p)
{
    k8s_pairs_room(p, json_object_size(obj));
    const char *name;
    json_t *value;
    json_object_foreach(obj, name, value) {
        if (!json_is_string(value))
            continue;
        p->names[p->n] = must_strdup(name);
        p->values[p->n++] = must_strdup(json_string_value(value));
    }
}

/* A node's addresses: [{"type": ..., "address": ...}] as type/address pairs. */
static void read_addresses(json_t *addresses, struct k8s_pairs *p)
{
    k8s_pairs_room(p, json_array_size(addresses));
    size_t i;
    json_t *a;
    json_array_foreach(addresses, i, a) {
        const char *type = json_string_value(json_object_get(a, "type"));
        const char *address = json_string_value(json_object_get(a, "address"));
        if (!type || !address || !*address)
            continue;
        p->names[p->n] = must_strdup(type);
        p->values[p->n++] = must_strdup(address);
    }
}

/* A port's name, protocol (TCP when it says none, as the API defaults
 * it) and appProtocol into *p, with number. */
void k8s_port_read(json_t *port, uint32_t number, struct k8s_port *p)
{
    const char *protocol = json_string_value(json_object_get(port, "protocol"));
    const char *app = json_string_value(json_object_get(port, "appProtocol"));
    *p = (struct k8s_port){.name = k8s_json_string(port, "name"),
                           .protocol = must_strdup(protocol && *protocol ? protocol : "TCP"),
                           .app_protocol = must_strdup_or_null(app),
                           .number = number};
}

static void read_ports(json_t *ports, struct k8s_container *c)
{
    size_t i, cap = 0;
    json_t *port;
    json_array_foreach(ports, i, port) {
        json_int_t number = json_integer_value(json_object_get(port, "containerPort"));
        if (number <= 0 || number > 65535)
            continue;   /* the API refuses such a pod; a list never has one */
        c->ports = grow_array(c->ports, &cap, c->nports + 1, sizeof(*c->ports));
        k8s_port_read(port, (uint32_t)number, &c->ports[c->nports++]);
    }
}

/* The status of the container named name among statuses, or NULL. */
static json_t *status_named(json_t *statuses, const char *name)
{
    size_t i;
    json_t *st;
    json_array_foreach(statuses, i, st) {
        const char *n = json_string_value(json_object_get(st, "name"));
        if (n && !strcmp(n, name))
            return st;
    }
    return NULL;
}

static char *id_of(json_t *status)
{
    const char *id = json_string_value(json_object_get(status, "containerID"));
    return id && *id ? must_strdup(id) : NULL;
}

/* Adds the containers of one kind: those of the spec, then those that
 * have a status and no spec entry. */
static void read_containers(struct k8s_pod *p, size_t *cap, json_t *spec, json_t *statuses,
                            enum k8s_container_kind kind)
{
    size_t i;
    json_t *c;
    json_array_foreach(spec, i, c) {
        p->containers = grow_array(p->containers, cap, p->ncontainers + 1, sizeof(*p->containers));
        struct k8s_container *k = &p->containers[p->ncontainers++];
        *k = (struct k8s_container){.name = k8s_json_string(c, "name"),
                                    .image = k8s_json_string(c, "image"),
                                    .kind = kind};
        k->id = id_of(status_named(statuses, k->name));
        read_ports(json_object_get(c, "ports"), k);
    }
    json_array_foreach(statuses, i, c) {
        const char *name = json_string_value(json_object_get(c, "name"));
        bool in_spec = false;
        for (size_t k = 0; name && k < p->ncontainers && !in_spec; k++)
            in_spec = p->containers[k].kind == kind && !strcmp(p->containers[k].name, name);
        if (in_spec)
            continue;
        p->containers = grow_array(p->containers, cap, p->ncontainers + 1, sizeof(*p->containers));
        p->containers[p->ncontainers++] = (struct k8s_container){
            .name = k8s_json_string(c, "name"), .image = k8s_json_string(c, "image"),
            .id = id_of(c),
            .kind = kind};
    }
}

static void add_ip(struct k8s_pod *p, size_t *cap, const char *ip)
{
    if (!ip || !*ip)
        return;
    for (size_t i = 0; i < p->nips; i++)
        if (!strcmp(p->ips[i], ip))
            return;
    p->ips = grow_array(p->ips, cap, p->nips + 1, sizeof(*p->ips));
    p->ips[p->nips++] = must_strdup(ip);
}

/* The Ready condition's status in lower case, as Prometheus labels it. */
static const char *readiness(json_t *status)
{
    size_t i;
    json_t *cond;
    json_array_foreach(json_object_get(status, "conditions"), i, cond) {
        const char *type = json_string_value(json_object_get(cond, "type"));
        const char *st = json_string_value(json_object_get(cond, "status"));
        if (type && st && !strcmp(type, "Ready"))
            return !strcmp(st, "True") ? "true" : !strcmp(st, "False") ? "false" : "unknown";
    }
    return "unknown";
}

static void read_controller(json_t *meta, struct k8s_pod *p)
{
    size_t i;
    json_t *owner;
    json_array_foreach(json_object_get(meta, "ownerReferences"), i, owner) {
        if (json_is_true(json_object_get(owner, "controller"))) {
            p->controller_kind = k8s_json_string(owner, "kind");
            p->controller_name = k8s_json_string(owner, "name");
            return;
        }
    }
}

static void read_pod(struct k8s_pod *p, json_t *item)
{
    json_t *meta = json_object_get(item, "metadata"), *spec = json_object_get(item, "spec"),
           *status = json_object_get(item, "status");
    *p = (struct k8s_pod){.namespace = k8s_json_string(meta, "namespace"),
                          .name = k8s_json_string(meta, "name"),
                          .uid = k8s_json_string(meta, "uid"),
                          .resource_version = k8s_json_string(meta, "resourceVersion"),
                          .node = k8s_json_string(spec, "nodeName"),
                          .phase = k8s_json_string(status, "phase"),
                          .host_ip = k8s_json_string(status, "hostIP"),
                          .ready = readiness(status),
                          .provider_id = k8s_json_string(spec, "providerID")};
    json_int_t kubelet = json_integer_value(json_object_get(
        json_object_get(json_object_get(status, "daemonEndpoints"), "kubeletEndpoint"), "Port"));
    p->kubelet_port = kubelet > 0 && kubelet <= 65535 ? (uint32_t)kubelet : 0;
    k8s_network_read(p, item);
    read_addresses(json_object_get(status, "addresses"), &p->addresses);
    read_controller(meta, p);
    k8s_pairs_read(json_object_get(meta, "labels"), &p->labels);
    k8s_pairs_read(json_object_get(meta, "annotations"), &p->annotations);
    size_t cap = 0, i;
    add_ip(p, &cap, json_string_value(json_object_get(status, "podIP")));
    json_t *ip;
    json_array_foreach(json_object_get(status, "podIPs"), i, ip)
        add_ip(p, &cap, json_string_value(json_object_get(ip, "ip")));
    static const struct {
        const char *spec, *status;
        enum k8s_container_kind kind;
    } kinds[] = {
        {"containers", "containerStatuses", K8S_CONTAINER},
        {"initContainers", "initContainerStatuses", K8S_INIT_CONTAINER},
        {"ephemeralContainers", "ephemeralContainerStatuses", K8S_EPHEMERAL_CONTAINER},
    };
    cap = 0;
    for (size_t k = 0; k < sizeof(kinds) / sizeof(*kinds); k++)
        read_containers(p, &cap, json_object_get(spec, kinds[k].spec),
                        json_object_get(status, kinds[k].status), kinds[k].kind);
}

/* Reads item i of a list, the len bytes of JSON at text, into a new pod of
 * out when it has metadata. */
static int read_item(const char *text, size_t len, size_t i, unsigned drop,
                     struct k8s_pod_list *out, char *why, size_t whylen)
{
    json_error_t je;
    json_t *item = json_loadb(text, len, 0, &je);
    if (!item) {
        snprintf(why, whylen, "not JSON: item %zu: %s", i, je.text);
        return -1;
    }
    if (json_is_object(json_object_get(item, "metadata"))) {
        out->pods = grow_array(out->pods, &out->cap, out->n + 1, sizeof(*out->pods));
        read_pod(&out->pods[out->n], item);
        k8s_pod_trim(&out->pods[out->n++], drop);
    }
    json_decref(item);
    return 0;
}

/* Reads the items of the array at the cursor into out, each alone and
 * trimmed of what drop names at once: what a list costs at once is one
 * item's tree, not the list's, and what is dropped leaves no holes among
 * what is kept, as the next item's memory takes its place. Items that are
 * not objects are left out, as those without metadata are. */
static int read_items(struct json_pull *j, unsigned drop, struct k8s_pod_list *out, char *why,
                      size_t whylen)
{
    json_pull_array(j);
    for (size_t i = 0; json_pull_element(j); i++) {
        bool object = json_pull_kind(j) == JSON_PULL_OBJECT;
        const char *start = json_pull_mark(j).p;
        if (json_pull_skip(j) && object &&
            read_item(start, (size_t)(json_pull_mark(j).p - start), i, drop, out, why,
                      whylen) < 0)
            return -1;
    }
    return 0;
}

/* The string member key of the object at the cursor, copied; NULL when it
 * has none (or the value is not an object). */
static char *member_string(struct json_pull *j, const char *key)
{
    const char *name, *s;
    char *found = NULL;
    if (json_pull_kind(j) != JSON_PULL_OBJECT) {
        json_pull_skip(j);
        return NULL;
    }
    json_pull_object(j);
    while (json_pull_member(j, &name)) {
        bool wanted = !strcmp(name, key);
        if (json_pull_string(j, &s, NULL) && wanted) {
            free(found);
            found = must_strdup(s);
        }
    }
    return found;
}

int k8s_pod_list_parse(const char *json, size_t len, unsigned drop, struct k8s_pod_list *out,
                       char *why, size_t whylen)
{
    *out = (struct k8s_pod_list){0};
    struct json_pull j;
    json_pull_init(&j, json, len);
    char *kind = NULL, *version = NULL;
    const char *key, *s;
    bool items = false;
    int rc = 0;
    if (json_pull_kind(&j) == JSON_PULL_OBJECT && json_pull_object(&j)) {
        while (rc == 0 && json_pull_member(&j, &key)) {
            if (!strcmp(key, "items") && json_pull_kind(&j) == JSON_PULL_ARRAY) {
                k8s_pod_list_free(out);   /* a list named twice: the last */
                items = true;
                rc = read_items(&j, drop, out, why, whylen);
            } else if (!strcmp(key, "kind")) {
                free(kind);
                kind = json_pull_string(&j, &s, NULL) ? must_strdup(s) : NULL;
            } else if (!strcmp(key, "metadata")) {
                free(version);
                version = member_string(&j, "resourceVersion");
            } else {
                items = items && strcmp(key, "items");
                json_pull_skip(&j);
            }
        }
    } else {
        json_pull_skip(&j);
    }
    if (rc == 0 && !json_pull_end(&j)) {
        char error[160];
        json_pull_error(&j, error, sizeof(error));
        snprintf(why, whylen, "not JSON: %s", error);
        rc = -1;
    } else if (rc == 0 && !items) {
        snprintf(why, whylen, "not a list of objects (kind \"%.40s\", no items)",
                 kind ? kind : "");
        rc = -1;
    }
    if (rc == 0) {
        out->resource_version = version;
    } else {
        free(version);
        k8s_pod_list_free(out);
    }
    free(kind);
    json_pull_free(&j);
    return rc;
}

int k8s_watch_event_parse(const char *line, size_t len, struct k8s_watch_event *ev, char *why,
                          size_t whylen)
{
    *ev = (struct k8s_watch_event){0};
    json_error_t je;
    json_t *root = json_loadb(line, len, 0, &je);
    if (!root) {
        snprintf(why, whylen, "not JSON: %s at column %d", je.text, je.column);
        return -1;
    }
    static const char *const types[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"};
    const char *type = json_string_value(json_object_get(root, "type"));
    size_t t = 0;
    while (type && t < sizeof(types) / sizeof(*types) && strcmp(type, types[t]))
        t++;
    json_t *object = json_object_get(root, "object");
    json_t *meta = json_object_get(object, "metadata");
    int rc = 0;
    if (!type || t == sizeof(types) / sizeof(*types)) {
        snprintf(why, whylen, "a watch event of type \"%.40s\"", type ? type : "(none)");
        rc = -1;
    } else if (t <= K8S_DELETED && !json_is_object(meta)) {
        snprintf(why, whylen, "%s event without an object's metadata", type);
        rc = -1;
    } else {
        ev->type = (enum k8s_event_type)t;
        ev->resource_version = k8s_json_string(meta, "resourceVersion");
        if (t <= K8S_DELETED)
            read_pod(&ev->pod, object);
        if (t == K8S_ERROR) {
            ev->code = (long)json_integer_value(json_object_get(object, "code"));
            ev->message = k8s_json_string(object, "message");
        }
    }
    json_decref(root);
    return rc;
}

void k8s_pairs_free(struct k8s_pairs *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->names[i]);
        free(p->values[i]);
    }
    free(p->names);
    free(p->values);
}

void k8s_ports_free(struct k8s_port *ports, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(ports[i].name);
        free(ports[i].protocol);
        free(ports[i].app_protocol);
    }
    free(ports);
}

static void free_container(struct k8s_container *c)
{
    free(c->name);
    free(c->image);
    free(c->id);
    k8s_ports_free(c->ports, c->nports);
}

/* Frees what p holds. */
void k8s_pod_free(struct k8s_pod *p)
{
    free(p->namespace);
    free(p->name);
    free(p->uid);
    free(p->resource_version);
    free(p->node);
    free(p->phase);
    free(p->host_ip);
    for (size_t k = 0; k < p->nips; k++)
        free(p->ips[k]);
    free(p->ips);
    free(p->controller_kind);
    free(p->controller_name);
    k8s_pairs_free(&p->labels);
    k8s_pairs_free(&p->annotations);
    free(p->provider_id);
    k8s_pairs_free(&p->addresses);
    for (size_t k = 0; k < p->ncontainers; k++)
        free_container(&p->containers[k]);
    free(p->containers);
    k8s_network_free(p);
}

void k8s_pod_trim(struct k8s_pod *p, unsigned drop)
{
    if (drop & K8S_DROP_LABELS) {
        k8s_pairs_free(&p->labels);
        p->labels = (struct k8s_pairs){0};
    }
    if (drop & K8S_DROP_ANNOTATIONS) {
        k8s_pairs_free(&p->annotations);
        p->annotations = (struct k8s_pairs){0};
    }
    for (size_t k = 0; drop & K8S_DROP_CONTAINER_DETAILS && k < p->ncontainers; k++) {
        struct k8s_container *c = &p->containers[k];
        free(c->image);
        c->image = NULL;
        k8s_ports_free(c->ports, c->nports);
        c->ports = NULL;
        c->nports = 0;
    }
}

void k8s_pod_list_free(struct k8s_pod_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        k8s_pod_free(&l->pods[i]);
    free(l->pods);
    free(l->resource_version);
    key_map_free(&l->by_uid);
    *l = (struct k8s_pod_list){0};
}

void k8s_watch_event_free(struct k8s_watch_event *ev)
{
    k8s_pod_free(&ev->pod);   /* zeroed unless the event had one */
    free(ev->resource_version);
    free(ev->message);
    *ev = (struct k8s_watch_event){0};
}

void k8s_pod_list_index(struct k8s_pod_list *l)
{
    for (; l->indexed < l->n; l->indexed++)
        key_map_put(&l->by_uid, hash_string(l->pods[l->indexed].uid), (uint32_t)l->indexed);
}

/* Where the pod of UID uid is in l, or l->n. */
static size_t pod_at(const struct k8s_pod_list *l, const char *uid)
{
    uint32_t i;
    if (key_map_get(&l->by_uid, hash_string(uid), &i) && i < l->indexed &&
        !strcmp(l->pods[i].uid, uid))
        return i;
    size_t k = l->indexed;   /* those not indexed yet */
    while (k < l->n && strcmp(l->pods[k].uid, uid))
        k++;
    return k;
}

const struct k8s_pod *k8s_pod_list_get(const struct k8s_pod_list *l, const char *uid)
{
    size_t i = pod_at(l, uid);
    return i < l->n ? &l->pods[i] : NULL;
}

const struct k8s_pod *k8s_pod_list_put(struct k8s_pod_list *l, struct k8s_pod *p)
{
    k8s_pod_list_index(l);
    size_t i = pod_at(l, p->uid);
    if (i < l->n) {
        k8s_pod_free(&l->pods[i]);
    } else {
        l->pods = grow_array(l->pods, &l->cap, l->n + 1, sizeof(*l->pods));
        l->n++;
    }
    l->pods[i] = *p;
    *p = (struct k8s_pod){0};
    k8s_pod_list_index(l);   /* the pod appended */
    return &l->pods[i];
}

bool k8s_pod_list_remove(struct k8s_pod_list *l, const char *uid)
{
    k8s_pod_list_index(l);
    size_t i = pod_at(l, uid);
    if (i == l->n)
        return false;
    key_map_remove(&l->by_uid, hash_string(uid));
    k8s_pod_free(&l->pods[i]);
    l->indexed = --l->n;
    if (i < l->n) {
        l->pods[i] = l->pods[l->n];
        key_map_put(&l->by_uid, hash_string(l->pods[i].uid), (uint32_t)i);
    }
    return true;
}
