// SPDX-License-Identifier: Apache-2.0
#include "seen_files.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/grow.h"
#include "../../lib/hash.h"
#include "../../lib/key_map.h"

struct seen {
    char *identity;
    int64_t until;   /* passed over before it (ns); INT64_MAX: until it changes */
    uint32_t holds;  /* since it was last added or let go */
    uint32_t scan;   /* the last scan that met it */
};

struct seen_files {
    struct seen *items;
    size_t n, cap;
    struct key_map by_hash;   /* hash of an identity -> its index */
    uint32_t scan;            /* the scan under way */
};

struct seen_files *seen_files_new(void)
{
    struct seen_files *s = must_malloc(sizeof(*s));
    *s = (struct seen_files){0};
    return s;
}

/* The index of identity, or SIZE_MAX. Two identities of one hash share a
 * slot: the one added last holds it, and the other is taken for unseen
 * (read once more rather than never). */
static size_t find(const struct seen_files *s, const char *identity)
{
    uint32_t i;
    if (!key_map_get(&s->by_hash, hash_string(identity), &i) ||
        strcmp(s->items[i].identity, identity))
        return SIZE_MAX;
    return i;
}

/* The entry of identity, made (not passed over) when there is none, and
 * met by the scan under way. */
static struct seen *entry(struct seen_files *s, const char *identity)
{
    size_t i = find(s, identity);
    if (i == SIZE_MAX) {
        s->items = grow_array(s->items, &s->cap, s->n + 1, sizeof(*s->items));
        i = s->n++;
        s->items[i] = (struct seen){.identity = must_strdup(identity)};
        key_map_put(&s->by_hash, hash_string(identity), (uint32_t)i);
    }
    s->items[i].scan = s->scan;
    return &s->items[i];
}

void seen_files_add(struct seen_files *s, const char *identity)
{
    struct seen *e = entry(s, identity);
    e->until = INT64_MAX;
    e->holds = 0;
}

int64_t seen_files_hold(struct seen_files *s, const char *identity, int64_t now_ns,
                        int64_t first_ns, int64_t max_ns)
{
    struct seen *e = entry(s, identity);
    int64_t wait = first_ns;
    for (uint32_t i = 0; i < e->holds && wait < max_ns; i++)
        wait *= 2;
    if (wait > max_ns)
        wait = max_ns;
    e->until = now_ns + wait;
    e->holds++;
    return wait;
}

void seen_files_let_go(struct seen_files *s, const char *identity)
{
    size_t i = find(s, identity);
    if (i != SIZE_MAX)
        s->items[i] = (struct seen){s->items[i].identity, 0, 0, s->items[i].scan};
}

bool seen_files_meet(struct seen_files *s, const char *identity, int64_t now_ns)
{
    size_t i = find(s, identity);
    if (i == SIZE_MAX)
        return false;
    s->items[i].scan = s->scan;
    return now_ns < s->items[i].until;
}

/* Whether every identity was met by the scan under way. */
static bool all_met(const struct seen_files *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->items[i].scan != s->scan)
            return false;
    return true;
}

void seen_files_sweep(struct seen_files *s)
{
    if (all_met(s)) {   /* the usual scan: nothing to forget, the table as it is */
        s->scan++;
        return;
    }
    size_t kept = 0;
    key_map_free(&s->by_hash);
    for (size_t i = 0; i < s->n; i++) {
        if (s->items[i].scan != s->scan) {
            free(s->items[i].identity);
            continue;
        }
        s->items[kept] = s->items[i];
        key_map_put(&s->by_hash, hash_string(s->items[kept].identity), (uint32_t)kept);
        kept++;
    }
    s->n = kept;
    s->scan++;
}

unsigned long seen_files_count(const struct seen_files *s)
{
    return (unsigned long)s->n;
}

void seen_files_free(struct seen_files *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        free(s->items[i].identity);
    free(s->items);
    key_map_free(&s->by_hash);
    free(s);
}
