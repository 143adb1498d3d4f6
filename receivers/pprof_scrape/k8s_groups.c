// SPDX-License-Identifier: Apache-2.0
#include "k8s_groups.h"

#include <stdlib.h>
#include <string.h>

#include "../../lib/grow.h"
#include "../../lib/hash.h"
#include "k8s_sd.h"
#include "targets.h"

/* Mixes object o (NULL: none) as it is now into key k; false when the
 * list gave it no version. */
static bool mix_version(uint64_t *k, const struct k8s_pod *o)
{
    if (o && !*o->resource_version)
        return false;
    *k = hash_mix(*k, o ? hash_mix(hash_string(o->uid), hash_string(o->resource_version)) : 0);
    return true;
}

/* The key of object o as it is now, with the object whose labels its
 * targets have too (NULL: none; a pod's node): their UIDs and versions;
 * 0, never reused, when the list gave either no version. */
static uint64_t object_key(const struct k8s_pod *o, const struct k8s_pod *with)
{
    uint64_t k = 0;
    return mix_version(&k, o) && mix_version(&k, with) ? k | 1 : 0;
}

/* Hashes g's groups from number from on, the ones just made. */
static void hash_groups_from(struct k8s_groups *g, size_t from)
{
    g->hashes = grow_array(g->hashes, &g->hashes_cap, g->n, sizeof(*g->hashes));
    for (size_t i = from; i < g->n; i++)
        g->hashes[i] = target_group_hash(&g->groups[i]);
}

/* Moves the groups of made (in last) to the end of next, with their
 * hashes, leaving them empty in last. */
static void move_groups(struct k8s_groups *next, struct k8s_groups *last, struct pod_made *made)
{
    next->groups = grow_array(next->groups, &next->cap, next->n + made->n,
                              sizeof(*next->groups));
    next->hashes = grow_array(next->hashes, &next->hashes_cap, next->n + made->n,
                              sizeof(*next->hashes));
    memcpy(&next->groups[next->n], &last->groups[made->first],
           made->n * sizeof(*next->groups));
    memcpy(&next->hashes[next->n], &last->hashes[made->first],
           made->n * sizeof(*next->hashes));
    memset(&last->groups[made->first], 0, made->n * sizeof(*last->groups));
    next->n += made->n;
    made->key = 0;   /* taken: a pod listed twice makes its own */
}

/* The groups of key in last moved to next, when last has them; else a
 * made entry for them begun in next. Returns whether they were moved. */
static bool reuse(struct k8s_groups *next, struct k8s_groups *last, uint64_t key)
{
    uint32_t i;
    struct pod_made *had = key && last && key_map_get(&last->by_key, key, &i) &&
                                   last->made[i].key == key
                               ? &last->made[i]
                               : NULL;
    next->made = grow_array(next->made, &next->made_cap, next->nmade + 1, sizeof(*next->made));
    next->made[next->nmade++] = (struct pod_made){key, next->n, 0};
    if (had)
        move_groups(next, last, had);
    return had != NULL;
}

/* Ends the made entry reuse began: its groups hashed, when just made. */
static void made(struct k8s_groups *next, bool reused)
{
    struct pod_made *m = &next->made[next->nmade - 1];
    if (!reused)
        hash_groups_from(next, m->first);
    m->n = next->n - m->first;
    if (m->key)
        key_map_put(&next->by_key, m->key, (uint32_t)(next->nmade - 1));
}

void k8s_groups_add_pod(const struct profd_host *h, struct k8s_groups *next,
                        struct k8s_groups *last, const struct k8s_pod *p,
                        const struct k8s_pod *node)
{
    bool reused = reuse(next, last, object_key(p, node));
    if (!reused)
        k8s_sd_pod_groups(h, p, node, &next->groups, &next->n, &next->cap);
    made(next, reused);
}

/* The key of obj (role endpointslice's or endpoints') as it is now,
 * with the objects its targets' labels come from: service, and each
 * endpoint's pod and node; 0 as object_key. */
static uint64_t endpoints_key(enum k8s_endpoints_role role, const struct k8s_pod *obj,
                              const struct k8s_pod *service, const struct k8s_names *pods,
                              const struct k8s_names *nodes)
{
    uint64_t k = role;
    bool versioned = mix_version(&k, obj) && mix_version(&k, service);
    for (size_t e = 0; versioned && e < obj->nendpoints; e++) {
        const struct k8s_endpoint *ep = &obj->endpoints[e];
        const struct k8s_pod *pod = ep->target_kind && !strcmp(ep->target_kind, "Pod")
                                        ? k8s_named(pods, ep->target_namespace, ep->target_name)
                                        : NULL;
        versioned = mix_version(&k, pod) &&
                    mix_version(&k, k8s_sd_endpoint_node(role, ep, nodes));
    }
    return versioned ? k | 1 : 0;
}

void k8s_groups_add_endpoints(const struct profd_host *h, struct k8s_groups *next,
                              struct k8s_groups *last, enum k8s_endpoints_role role,
                              const struct k8s_pod *obj, const struct k8s_names *services,
                              const struct k8s_names *pods, const struct k8s_names *nodes)
{
    const struct k8s_pod *service = k8s_sd_endpoints_service(role, obj, services);
    bool reused = reuse(next, last, endpoints_key(role, obj, service, pods, nodes));
    if (!reused)
        k8s_sd_endpoints_groups(h, role, obj, service, pods, nodes, &next->groups, &next->n,
                                &next->cap);
    made(next, reused);
}

void k8s_groups_add_object(const struct profd_host *h, struct k8s_groups *next,
                           struct k8s_groups *last, const struct k8s_pod *obj,
                           k8s_groups_maker make)
{
    bool reused = reuse(next, last, object_key(obj, NULL));
    if (!reused)
        make(h, obj, &next->groups, &next->n, &next->cap);
    made(next, reused);
}

void k8s_groups_add_nodes(const struct profd_host *h, struct k8s_groups *g,
                          const struct k8s_pod_list *nodes)
{
    size_t from = g->n;
    k8s_sd_node_groups(h, nodes, &g->groups, &g->n, &g->cap);
    hash_groups_from(g, from);
}

uint64_t k8s_groups_signature(const struct k8s_groups *g)
{
    uint64_t sig = g->n;
    for (size_t i = 0; i < g->n; i++)
        sig = sig * 31 ^ g->hashes[i];
    return sig;
}

void k8s_groups_clear(const struct profd_host *h, struct k8s_groups *g)
{
    h->sd_groups_free(g->groups, g->n);
    free(g->hashes);
    free(g->made);
    key_map_free(&g->by_key);
    *g = (struct k8s_groups){0};
}
