// SPDX-License-Identifier: Apache-2.0
#include "pods.h"

#include <stdlib.h>
#include <string.h>

#include "../../lib/grow.h"
#include "../../lib/hash.h"

/* Adds name -> uid (detail) to ix. */
static void name_add(struct name_index *ix, const char *name, const char *uid,
                     const char *detail)
{
    uint32_t e;
    if (ix->free) {
        e = ix->free - 1;
        ix->free = ix->entries[e].next;
    } else {
        ix->entries = grow_array(ix->entries, &ix->cap, ix->n + 1, sizeof(*ix->entries));
        e = (uint32_t)ix->n++;
    }
    uint64_t h = hash_string(name);
    uint32_t head;
    ix->entries[e] = (struct name_entry){name, uid, detail,
                                         key_map_get(&ix->heads, h, &head) ? head + 1 : 0};
    key_map_put(&ix->heads, h, e);
}

/* Removes name -> uid from ix, when there. */
static void name_remove(struct name_index *ix, const char *name, const char *uid)
{
    uint64_t h = hash_string(name);
    uint32_t head;
    if (!key_map_get(&ix->heads, h, &head))
        return;
    uint32_t *link = NULL;   /* what points at e: NULL the head */
    for (uint32_t e = head; ; link = &ix->entries[e].next, e = *link - 1) {
        struct name_entry *en = &ix->entries[e];
        if (!strcmp(en->name, name) && !strcmp(en->uid, uid)) {
            if (link)
                *link = en->next;
            else if (en->next)
                key_map_put(&ix->heads, h, en->next - 1);
            else
                key_map_remove(&ix->heads, h);
            en->next = ix->free;
            ix->free = e + 1;
            return;
        }
        if (!en->next)
            return;
    }
}

/* The entry of name in ix, or NULL; *shared set when objects of several
 * UIDs have it. */
static const struct name_entry *name_find(const struct name_index *ix, const char *name,
                                          bool *shared)
{
    uint32_t e;
    const struct name_entry *found = NULL;
    *shared = false;
    if (!key_map_get(&ix->heads, hash_string(name), &e))
        return NULL;
    for (e++; e; e = ix->entries[e - 1].next) {
        const struct name_entry *en = &ix->entries[e - 1];
        if (strcmp(en->name, name))
            continue;   /* another name of the same hash */
        if (found && strcmp(found->uid, en->uid))
            *shared = true;
        found = found ? found : en;
    }
    return found;
}

static void name_index_free(struct name_index *ix)
{
    free(ix->entries);
    key_map_free(&ix->heads);
    *ix = (struct name_index){0};
}

/* A started container's id without its runtime ("containerd://"), or
 * NULL. */
static const char *container_id(const struct k8s_container *c)
{
    const char *sep = c->id ? strstr(c->id, "://") : NULL;
    return sep && sep[3] ? sep + 3 : NULL;
}

/* Adds (or with add false removes) p's container ids and IPs. */
static void index_pod(struct pod_index *ix, const struct k8s_pod *p, bool add)
{
    for (size_t k = 0; k < p->ncontainers; k++) {
        const char *id = container_id(&p->containers[k]);
        if (id && add)
            name_add(&ix->containers, id, p->uid, p->containers[k].name);
        else if (id)
            name_remove(&ix->containers, id, p->uid);
    }
    for (size_t k = 0; k < p->nips; k++) {
        if (add)
            name_add(&ix->ips, p->ips[k], p->uid, NULL);
        else
            name_remove(&ix->ips, p->ips[k], p->uid);
    }
}

/* Indexes every pod of ix->pods. */
static void index_pods(struct pod_index *ix)
{
    k8s_pod_list_index(&ix->pods);
    for (size_t i = 0; i < ix->pods.n; i++)
        index_pod(ix, &ix->pods.pods[i], true);
}

/* Indexes every node of ix->nodes by name. */
static void index_nodes(struct pod_index *ix)
{
    k8s_pod_list_index(&ix->nodes);
    for (size_t i = 0; i < ix->nodes.n; i++)
        name_add(&ix->node_names, ix->nodes.pods[i].name, ix->nodes.pods[i].uid, NULL);
}

static struct pod_index *new_index(void)
{
    struct pod_index *ix = calloc(1, sizeof(*ix));
    if (!ix)
        abort();
    return ix;
}

struct pod_index *pod_index_parse(const char *json, size_t len, unsigned drop, char *why,
                                  size_t whylen)
{
    struct k8s_pod_list list;
    if (k8s_pod_list_parse(json, len, drop, &list, why, whylen) < 0)
        return NULL;
    struct pod_index *ix = new_index();
    ix->pods = list;
    index_pods(ix);
    return ix;
}

void pod_index_put_nodes(struct pod_index *ix, struct k8s_pod_list *nodes)
{
    name_index_free(&ix->node_names);
    k8s_pod_list_free(&ix->nodes);
    ix->nodes = *nodes;
    *nodes = (struct k8s_pod_list){0};
    index_nodes(ix);
}

int pod_index_set_nodes(struct pod_index *ix, const char *json, size_t len, unsigned drop,
                        char *why, size_t whylen)
{
    struct k8s_pod_list nodes;
    if (k8s_pod_list_parse(json, len, drop, &nodes, why, whylen) < 0)
        return -1;
    pod_index_put_nodes(ix, &nodes);
    return 0;
}

struct pod_index *pod_index_of(struct k8s_pod_list *pods)
{
    struct pod_index *ix = new_index();
    ix->pods = *pods;
    *pods = (struct k8s_pod_list){0};
    index_pods(ix);
    return ix;
}

void pod_index_move_nodes(struct pod_index *ix, struct pod_index *from)
{
    ix->nodes = from->nodes;
    ix->node_names = from->node_names;
    from->nodes = (struct k8s_pod_list){0};
    from->node_names = (struct name_index){0};
}

/* The index entries of the pod (or with node, the node) of UID uid
 * removed, before its strings go; it, or NULL when ix has none. */
static const struct k8s_pod *unindex(struct pod_index *ix, const char *uid, bool node)
{
    const struct k8s_pod *was = k8s_pod_list_get(node ? &ix->nodes : &ix->pods, uid);
    if (was && node)
        name_remove(&ix->node_names, was->name, was->uid);
    else if (was)
        index_pod(ix, was, false);
    return was;
}

void pod_index_remove(struct pod_index *ix, const char *uid)
{
    if (unindex(ix, uid, false))
        k8s_pod_list_remove(&ix->pods, uid);
}

const struct k8s_pod *pod_index_put(struct pod_index *ix, struct k8s_pod *pod)
{
    unindex(ix, pod->uid, false);
    const struct k8s_pod *now = k8s_pod_list_put(&ix->pods, pod);
    index_pod(ix, now, true);
    return now;
}

void pod_index_remove_node(struct pod_index *ix, const char *uid)
{
    if (unindex(ix, uid, true))
        k8s_pod_list_remove(&ix->nodes, uid);
}

const struct k8s_pod *pod_index_put_node(struct pod_index *ix, struct k8s_pod *node)
{
    unindex(ix, node->uid, true);
    const struct k8s_pod *now = k8s_pod_list_put(&ix->nodes, node);
    name_add(&ix->node_names, now->name, now->uid, NULL);
    return now;
}

const struct k8s_pod *pod_index_container(const struct pod_index *ix, const char *id,
                                          const char **container)
{
    bool shared;
    const struct name_entry *e = ix ? name_find(&ix->containers, id, &shared) : NULL;
    if (!e)
        return NULL;
    *container = e->detail;
    return k8s_pod_list_get(&ix->pods, e->uid);
}

const struct k8s_pod *pod_index_uid(const struct pod_index *ix, const char *uid)
{
    return ix ? k8s_pod_list_get(&ix->pods, uid) : NULL;
}

const struct k8s_pod *pod_index_ip(const struct pod_index *ix, const char *ip)
{
    bool shared;
    const struct name_entry *e = ix ? name_find(&ix->ips, ip, &shared) : NULL;
    return e && !shared ? k8s_pod_list_get(&ix->pods, e->uid) : NULL;
}

const struct k8s_pod *pod_index_node(const struct pod_index *ix, const char *name)
{
    bool shared;
    const struct name_entry *e = ix && name ? name_find(&ix->node_names, name, &shared) : NULL;
    return e ? k8s_pod_list_get(&ix->nodes, e->uid) : NULL;
}

void pod_index_free(struct pod_index *ix)
{
    if (!ix)
        return;
    name_index_free(&ix->containers);
    name_index_free(&ix->ips);
    name_index_free(&ix->node_names);
    k8s_pod_list_free(&ix->pods);
    k8s_pod_list_free(&ix->nodes);
    free(ix);
}
