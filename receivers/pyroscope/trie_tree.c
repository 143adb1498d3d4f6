// SPDX-License-Identifier: Apache-2.0
#include "trie_tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/grow.h"
#include "../../lib/pb_reader.h"

/* One node as both formats write it: a name, a value, a child count. */
struct node {
    const uint8_t *name;
    uint64_t name_len, value, children;
};

static bool read_node(struct pb_reader *r, struct node *n)
{
    if (!pb_varint(r, &n->name_len) || n->name_len > (uint64_t)(r->end - r->p))
        return false;
    n->name = r->p;
    r->p += n->name_len;
    return pb_varint(r, &n->value) && pb_varint(r, &n->children) && n->value <= INT64_MAX;
}

/* A node's place while its children are read: how many are still to come,
 * and how long the key was before (trie) or with (tree) its name. */
struct open_node {
    uint64_t left;
    size_t key_len;
};

/* A walk over the nodes: the profile being built, the reader, the key
 * being built and the nodes open above the one read next. */
struct walk {
    struct folded_builder b;
    struct pb_reader r;
    char *key;
    size_t key_len, key_cap;
    struct open_node *open;
    size_t nopen, open_cap;
};

/* Reads the next node into *n, *at where it starts; false when it is cut
 * short. */
static bool next_node(struct walk *w, struct node *n, size_t *at)
{
    *at = (size_t)(w->r.p - w->r.base);
    return read_node(&w->r, n);
}

static void append(struct walk *w, const void *bytes, size_t n)
{
    w->key = grow_array(w->key, &w->key_cap, w->key_len + n + 1, 1);
    memcpy(w->key + w->key_len, bytes, n);
    w->key_len += n;
}

static void push(struct walk *w, uint64_t children, size_t key_len)
{
    w->open = grow_array(w->open, &w->open_cap, w->nopen + 1, sizeof(*w->open));
    w->open[w->nopen++] = (struct open_node){children, key_len};
}

/* A trie's nodes until the data ends; false with *what set. */
static bool walk_trie(struct walk *w, size_t *at, const char **what)
{
    struct node n;
    while (w->r.p < w->r.end) {
        if (!next_node(w, &n, at))
            return false;
        append(w, n.name, n.name_len);
        if (n.value && !folded_add(&w->b, w->key, w->key_len, (int64_t)n.value)) {
            *what = "a key that is not frame;frame;leaf";
            return false;
        }
        if (n.children) {   /* its label stays while its children are read */
            push(w, n.children, w->key_len - n.name_len);
            continue;
        }
        w->key_len -= n.name_len;
        while (w->nopen && --w->open[w->nopen - 1].left == 0)
            w->key_len = w->open[--w->nopen].key_len;   /* a node's last child was read */
    }
    return true;
}

/* A tree's root and the nodes below it; false with *what set. */
static bool walk_tree(struct walk *w, size_t *at, const char **what)
{
    struct node n;
    if (!next_node(w, &n, at))   /* the root: its name and value are no frame's */
        return false;
    push(w, n.children, 0);
    while (w->nopen) {
        struct open_node *parent = &w->open[w->nopen - 1];
        if (!parent->left) {
            w->nopen--;
            continue;
        }
        parent->left--;
        w->key_len = parent->key_len;
        if (!next_node(w, &n, at))
            return false;
        if (w->key_len)
            append(w, ";", 1);
        append(w, n.name, n.name_len);
        if (!n.name_len || (n.value && !folded_add(&w->b, w->key, w->key_len, (int64_t)n.value))) {
            *what = "a node whose name is no frame";
            return false;
        }
        if (n.children)
            push(w, n.children, w->key_len);
    }
    return true;
}

struct profd_profile *binary_stacks_profile(const struct profd_host *host,
                                            enum binary_stacks format, const uint8_t *data,
                                            size_t len, const struct folded_meta *meta,
                                            char *why, size_t whylen)
{
    struct walk w = {0};
    size_t at = 0;
    const char *what = "a node cut short";
    folded_begin(&w.b, host, meta, len);
    static const uint8_t empty[1];   /* an empty body may come as no pointer */
    pb_reader_init(&w.r, len ? data : empty, len ? data : empty, len);
    bool ok = format == STACKS_TRIE ? walk_trie(&w, &at, &what) : walk_tree(&w, &at, &what);
    free(w.key);
    free(w.open);
    if (!ok)
        snprintf(why, whylen, "%s at byte %zu", what, at);
    return folded_end(&w.b, ok);
}
