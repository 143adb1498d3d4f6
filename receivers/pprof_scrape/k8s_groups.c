// SPDX-License-Identifier: Apache-2.0
#include "k8s_groups.h"

#include <stdlib.h>
#include <string.h>

#include "../../lib/grow.h"
#include "../../lib/hash.h"
#include "k8s_sd.h"
#include "targets.h"

static uint64_t text_hash(const char *s)
{
    return hash_bytes(s, strlen(s));
}

/* The key of pod p as it is now, with node's labels (NULL: none): its UID
 * and version, and its node's version; 0, never reused, when the list
 * gave no version. */
static uint64_t pod_key(const struct k8s_pod *p, const struct k8s_pod *node)
{
    if (!*p->resource_version || (node && !*node->resource_version))
        return 0;
    uint64_t k = hash_mix(text_hash(p->uid), text_hash(p->resource_version));
    k = hash_mix(k, node ? hash_mix(text_hash(node->name), text_hash(node->resource_version))
                         : 0);
    return k | 1;
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

void k8s_groups_add_pod(const struct profd_host *h, struct k8s_groups *next,
                        struct k8s_groups *last, const struct k8s_pod *p,
                        const struct k8s_pod *node)
{
    uint64_t key = pod_key(p, node);
    uint32_t i;
    struct pod_made *had = key && last && key_map_get(&last->by_key, key, &i) &&
                                   last->made[i].key == key
                               ? &last->made[i]
                               : NULL;
    next->made = grow_array(next->made, &next->made_cap, next->nmade + 1, sizeof(*next->made));
    struct pod_made *made = &next->made[next->nmade++];
    *made = (struct pod_made){key, next->n, 0};
    if (had) {
        move_groups(next, last, had);
    } else {
        k8s_sd_pod_groups(h, p, node, &next->groups, &next->n, &next->cap);
        hash_groups_from(next, made->first);
    }
    made->n = next->n - made->first;
    if (key)
        key_map_put(&next->by_key, key, (uint32_t)(next->nmade - 1));
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
