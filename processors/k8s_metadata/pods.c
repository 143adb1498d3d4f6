// SPDX-License-Identifier: Apache-2.0
#include "pods.h"

#include <stdlib.h>
#include <string.h>

#include "../../lib/grow.h"
#include "../../lib/hash.h"

/* An index entry's value for a key no entry may have: several pods. */
#define AMBIGUOUS UINT32_MAX

static uint64_t key_hash(const char *s)
{
    return hash_bytes(s, strlen(s));
}

static void index_container(struct pod_index *ix, size_t *cap, const struct k8s_container *c,
                          size_t pod)
{
    const char *sep = c->id ? strstr(c->id, "://") : NULL;
    if (!sep || !sep[3])
        return;   /* not started yet */
    char *id = strdup(sep + 3);
    if (!id)
        abort();
    ix->containers = grow_array(ix->containers, cap, ix->ncontainers + 1,
                                sizeof(*ix->containers));
    ix->containers[ix->ncontainers] = (struct pod_container){id, c->name, pod};
    key_map_put(&ix->by_container, key_hash(id), (uint32_t)ix->ncontainers++);
}

static void index_ip(struct pod_index *ix, size_t *cap, const char *ip, size_t pod)
{
    uint32_t had;
    if (key_map_get(&ix->by_ip, key_hash(ip), &had)) {
        if (had != AMBIGUOUS && ix->ips[had].pod != pod)
            key_map_put(&ix->by_ip, key_hash(ip), AMBIGUOUS);
        return;
    }
    ix->ips = grow_array(ix->ips, cap, ix->nips + 1, sizeof(*ix->ips));
    ix->ips[ix->nips] = (struct pod_ip){ip, pod};
    key_map_put(&ix->by_ip, key_hash(ip), (uint32_t)ix->nips++);
}

/* Indexes the pods ix->pods holds. */
static void index_pods(struct pod_index *ix)
{
    size_t container_cap = 0, ip_cap = 0;
    for (size_t i = 0; i < ix->npods; i++) {
        const struct k8s_pod *p = &ix->pods[i]->pod;
        key_map_put(&ix->by_uid, key_hash(p->uid), (uint32_t)i);
        for (size_t k = 0; k < p->ncontainers; k++)
            index_container(ix, &container_cap, &p->containers[k], i);
        for (size_t k = 0; k < p->nips; k++)
            index_ip(ix, &ip_cap, p->ips[k], i);
    }
}

/* An index of n pods (none in it yet) at resourceVersion version. */
static struct pod_index *new_index(size_t n, const char *version)
{
    struct pod_index *ix = calloc(1, sizeof(*ix));
    if (!ix || !(ix->pods = calloc(n + 1, sizeof(*ix->pods))))
        abort();
    ix->resource_version = must_strdup_or_null(version);
    return ix;
}

/* A pod of its own, its refs 1, that *p's contents are moved into. */
static struct shared_pod *share(struct k8s_pod *p)
{
    struct shared_pod *sp = malloc(sizeof(*sp));
    if (!sp)
        abort();
    *sp = (struct shared_pod){*p, 1};
    *p = (struct k8s_pod){0};
    return sp;
}

struct pod_index *pod_index_parse(const char *json, size_t len, char *why, size_t whylen)
{
    struct k8s_pod_list list;
    if (k8s_pod_list_parse(json, len, &list, why, whylen) < 0)
        return NULL;
    struct pod_index *ix = new_index(list.n, list.resource_version);
    for (; ix->npods < list.n; ix->npods++)
        ix->pods[ix->npods] = share(&list.pods[ix->npods]);
    k8s_pod_list_free(&list);   /* the pods moved out of it */
    index_pods(ix);
    return ix;
}

/* Indexes the nodes ix->nodes holds by name. */
static void index_nodes(struct pod_index *ix)
{
    for (size_t i = 0; i < ix->nodes.n; i++)
        key_map_put(&ix->by_node, key_hash(ix->nodes.pods[i].name), (uint32_t)i);
}

int pod_index_set_nodes(struct pod_index *ix, const char *json, size_t len, char *why,
                        size_t whylen)
{
    struct k8s_pod_list nodes;
    if (k8s_pod_list_parse(json, len, &nodes, why, whylen) < 0)
        return -1;
    k8s_pod_list_free(&ix->nodes);
    key_map_free(&ix->by_node);
    ix->nodes = nodes;
    index_nodes(ix);
    return 0;
}

/* The pod of uid in ix (NULL: none), or NULL. */
static struct shared_pod *shared_of(const struct pod_index *ix, const char *uid)
{
    uint32_t i;
    if (!ix || !key_map_get(&ix->by_uid, key_hash(uid), &i) ||
        strcmp(ix->pods[i]->pod.uid, uid))
        return NULL;
    return ix->pods[i];
}

struct pod_index *pod_index_of(const struct k8s_pod_list *pods, const struct k8s_pod_list *nodes,
                               const struct pod_index *last)
{
    struct pod_index *ix = new_index(pods->n, pods->resource_version);
    for (; ix->npods < pods->n; ix->npods++) {
        const struct k8s_pod *p = &pods->pods[ix->npods];
        struct shared_pod *had = *p->resource_version ? shared_of(last, p->uid) : NULL;
        if (had && !strcmp(had->pod.resource_version, p->resource_version)) {
            had->refs++;
            ix->pods[ix->npods] = had;
            continue;
        }
        struct k8s_pod copy;
        k8s_pod_copy(&copy, p);
        ix->pods[ix->npods] = share(&copy);
    }
    index_pods(ix);
    if (nodes) {
        k8s_pod_list_copy(&ix->nodes, nodes);
        index_nodes(ix);
    }
    return ix;
}

const struct k8s_pod *pod_index_container(const struct pod_index *ix, const char *id,
                                          const char **container)
{
    uint32_t i;
    if (!ix || !key_map_get(&ix->by_container, key_hash(id), &i) ||
        strcmp(ix->containers[i].id, id))
        return NULL;
    *container = ix->containers[i].name;
    return &ix->pods[ix->containers[i].pod]->pod;
}

const struct k8s_pod *pod_index_uid(const struct pod_index *ix, const char *uid)
{
    const struct shared_pod *sp = shared_of(ix, uid);
    return sp ? &sp->pod : NULL;
}

const struct k8s_pod *pod_index_ip(const struct pod_index *ix, const char *ip)
{
    uint32_t i;
    if (!ix || !key_map_get(&ix->by_ip, key_hash(ip), &i) || i == AMBIGUOUS ||
        strcmp(ix->ips[i].ip, ip))
        return NULL;
    return &ix->pods[ix->ips[i].pod]->pod;
}

const struct k8s_pod *pod_index_node(const struct pod_index *ix, const char *name)
{
    uint32_t i;
    if (!ix || !name || !key_map_get(&ix->by_node, key_hash(name), &i) ||
        strcmp(ix->nodes.pods[i].name, name))
        return NULL;
    return &ix->nodes.pods[i];
}

void pod_index_free(struct pod_index *ix)
{
    if (!ix)
        return;
    for (size_t i = 0; i < ix->ncontainers; i++)
        free(ix->containers[i].id);
    free(ix->containers);
    free(ix->ips);
    key_map_free(&ix->by_container);
    key_map_free(&ix->by_uid);
    key_map_free(&ix->by_ip);
    key_map_free(&ix->by_node);
    for (size_t i = 0; i < ix->npods; i++)
        if (--ix->pods[i]->refs == 0) {
            k8s_pod_free(&ix->pods[i]->pod);
            free(ix->pods[i]);
        }
    free(ix->pods);
    free(ix->resource_version);
    k8s_pod_list_free(&ix->nodes);
    free(ix);
}

void pod_index_copy_pods(const struct pod_index *ix, struct k8s_pod_list *out)
{
    *out = (struct k8s_pod_list){.resource_version = must_strdup_or_null(ix->resource_version),
                                 .pods = calloc(ix->npods + 1, sizeof(*out->pods)),
                                 .n = ix->npods, .cap = ix->npods + 1};
    if (!out->pods)
        abort();
    for (size_t i = 0; i < ix->npods; i++)
        k8s_pod_copy(&out->pods[i], &ix->pods[i]->pod);
}
