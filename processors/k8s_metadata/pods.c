// SPDX-License-Identifier: Apache-2.0
#include "pods.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/grow.h"
#include "../../lib/hash.h"

/* An index entry's value for a key no entry may have: several pods. */
#define AMBIGUOUS UINT32_MAX

static char *copy_of(json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return strdup(s ? s : "");
}

static uint64_t key_hash(const char *s)
{
    return hash_bytes(s, strlen(s));
}

/* The id of a container status ("containerd://<id>"): what follows "://". */
static char *container_id(json_t *status)
{
    const char *s = json_string_value(json_object_get(status, "containerID"));
    const char *sep = s ? strstr(s, "://") : NULL;
    return sep && sep[3] ? strdup(sep + 3) : NULL;
}

static void add_containers(struct pod_index *ix, size_t *cap, json_t *statuses, size_t pod)
{
    size_t i;
    json_t *st;
    json_array_foreach(statuses, i, st) {
        char *id = container_id(st);
        if (!id)
            continue;   /* not started yet */
        ix->containers = grow_array(ix->containers, cap, ix->ncontainers + 1,
                                    sizeof(*ix->containers));
        ix->containers[ix->ncontainers] = (struct pod_container){id, copy_of(st, "name"), pod};
        key_map_put(&ix->by_container, key_hash(id), (uint32_t)ix->ncontainers++);
    }
}

static void add_ip(struct pod_index *ix, size_t *cap, const char *ip, size_t pod)
{
    uint32_t had;
    if (!ip || !*ip)
        return;
    if (key_map_get(&ix->by_ip, key_hash(ip), &had)) {
        if (had != AMBIGUOUS && ix->ips[had].pod != pod)
            key_map_put(&ix->by_ip, key_hash(ip), AMBIGUOUS);
        return;
    }
    ix->ips = grow_array(ix->ips, cap, ix->nips + 1, sizeof(*ix->ips));
    ix->ips[ix->nips] = (struct pod_ip){strdup(ip), pod};
    key_map_put(&ix->by_ip, key_hash(ip), (uint32_t)ix->nips++);
}

/* Adds the pod of item, a PodList entry. */
static void add_pod(struct pod_index *ix, size_t caps[3], json_t *item)
{
    json_t *meta = json_object_get(item, "metadata"), *status = json_object_get(item, "status");
    ix->pods = grow_array(ix->pods, &caps[0], ix->npods + 1, sizeof(*ix->pods));
    size_t at = ix->npods++;
    struct pod *p = &ix->pods[at];
    *p = (struct pod){copy_of(meta, "namespace"), copy_of(meta, "name"), copy_of(meta, "uid"),
                      copy_of(json_object_get(item, "spec"), "nodeName"), NULL, NULL, 0};
    json_t *labels = json_object_get(meta, "labels");
    size_t n = json_object_size(labels), k = 0;
    p->label_names = calloc(n + 1, sizeof(char *));
    p->label_values = calloc(n + 1, sizeof(char *));
    if (!p->label_names || !p->label_values)
        abort();
    const char *name;
    json_t *value;
    json_object_foreach(labels, name, value) {
        if (!json_is_string(value))
            continue;
        p->label_names[k] = strdup(name);
        p->label_values[k++] = strdup(json_string_value(value));
    }
    p->nlabels = k;
    key_map_put(&ix->by_uid, key_hash(p->uid), (uint32_t)at);
    static const char *const kinds[] = {"containerStatuses", "initContainerStatuses",
                                        "ephemeralContainerStatuses"};
    for (size_t i = 0; i < 3; i++)
        add_containers(ix, &caps[1], json_object_get(status, kinds[i]), at);
    add_ip(ix, &caps[2], json_string_value(json_object_get(status, "podIP")), at);
    size_t i;
    json_t *ip;
    json_array_foreach(json_object_get(status, "podIPs"), i, ip)
        add_ip(ix, &caps[2], json_string_value(json_object_get(ip, "ip")), at);
}

struct pod_index *pod_index_parse(const char *json, size_t len, char *why, size_t whylen)
{
    json_error_t je;
    json_t *root = json_loadb(json, len, 0, &je);
    if (!root) {
        snprintf(why, whylen, "not JSON: %s at line %d, column %d", je.text, je.line, je.column);
        return NULL;
    }
    json_t *items = json_object_get(root, "items");
    if (!json_is_array(items)) {
        const char *kind = json_string_value(json_object_get(root, "kind"));
        snprintf(why, whylen, "not a PodList (kind \"%.40s\", no items)", kind ? kind : "");
        json_decref(root);
        return NULL;
    }
    struct pod_index *ix = calloc(1, sizeof(*ix));
    if (!ix)
        abort();
    size_t caps[3] = {0}, i;
    json_t *item;
    json_array_foreach(items, i, item)
        if (json_is_object(json_object_get(item, "metadata")))
            add_pod(ix, caps, item);
    json_decref(root);
    return ix;
}

const struct pod *pod_index_container(const struct pod_index *ix, const char *id,
                                      const char **container)
{
    uint32_t i;
    if (!ix || !key_map_get(&ix->by_container, key_hash(id), &i) ||
        strcmp(ix->containers[i].id, id))
        return NULL;
    *container = ix->containers[i].name;
    return &ix->pods[ix->containers[i].pod];
}

const struct pod *pod_index_uid(const struct pod_index *ix, const char *uid)
{
    uint32_t i;
    if (!ix || !key_map_get(&ix->by_uid, key_hash(uid), &i) || strcmp(ix->pods[i].uid, uid))
        return NULL;
    return &ix->pods[i];
}

const struct pod *pod_index_ip(const struct pod_index *ix, const char *ip)
{
    uint32_t i;
    if (!ix || !key_map_get(&ix->by_ip, key_hash(ip), &i) || i == AMBIGUOUS ||
        strcmp(ix->ips[i].ip, ip))
        return NULL;
    return &ix->pods[ix->ips[i].pod];
}

void pod_index_free(struct pod_index *ix)
{
    if (!ix)
        return;
    for (size_t i = 0; i < ix->npods; i++) {
        struct pod *p = &ix->pods[i];
        free(p->namespace);
        free(p->name);
        free(p->uid);
        free(p->node);
        for (size_t k = 0; k < p->nlabels; k++) {
            free(p->label_names[k]);
            free(p->label_values[k]);
        }
        free(p->label_names);
        free(p->label_values);
    }
    for (size_t i = 0; i < ix->ncontainers; i++) {
        free(ix->containers[i].id);
        free(ix->containers[i].name);
    }
    for (size_t i = 0; i < ix->nips; i++)
        free(ix->ips[i].ip);
    free(ix->pods);
    free(ix->containers);
    free(ix->ips);
    key_map_free(&ix->by_container);
    key_map_free(&ix->by_uid);
    key_map_free(&ix->by_ip);
    free(ix);
}
