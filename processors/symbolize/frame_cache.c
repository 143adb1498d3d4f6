// SPDX-License-Identifier: Apache-2.0
#include "frame_cache.h"

#include <stdlib.h>
#include <string.h>

#include "../../lib/hash.h"

/* The sets a cache starts with. */
#define FIRST_SETS 64

/* Two entries: their keys first, so that a miss reads one cache line. */
struct cache_set {
    uint64_t keys[2];   /* vaddr + 1 of each way; 0: empty */
    uint32_t n[2];
    uint32_t recent;    /* the way used last */
    struct elf_frame frames[2][FRAME_CACHE_FRAMES];
};

struct frame_cache {
    struct cache_set *sets;
    size_t mask;       /* sets - 1 (a power of two) */
    size_t used;       /* entries */
    size_t max_sets;
    size_t hits;       /* lookups answered */
};

static struct cache_set *cache_sets_new(size_t n)
{
    struct cache_set *sets = calloc(n, sizeof(*sets));
    if (!sets)
        abort();
    return sets;
}

struct frame_cache *frame_cache_new(size_t bytes)
{
    size_t max_sets = bytes / sizeof(struct cache_set);
    if (max_sets < FIRST_SETS)
        return NULL;
    struct frame_cache *c = malloc(sizeof(*c));
    if (!c)
        abort();
    *c = (struct frame_cache){cache_sets_new(FIRST_SETS), FIRST_SETS - 1, 0, max_sets, 0};
    return c;
}

static struct cache_set *cache_set_of(const struct frame_cache *c, uint64_t key)
{
    return &c->sets[hash_mix(0, key) & c->mask];
}

bool frame_cache_get(struct frame_cache *c, uint64_t vaddr, struct elf_frame *out, size_t max,
                     size_t *n)
{
    struct cache_set *s = cache_set_of(c, vaddr + 1);
    uint32_t w = s->keys[0] == vaddr + 1 ? 0 : s->keys[1] == vaddr + 1 ? 1 : 2;
    if (w == 2 || s->n[w] > max)
        return false;
    memcpy(out, s->frames[w], s->n[w] * sizeof(*out));
    *n = s->n[w];
    s->recent = w;
    c->hits++;
    return true;
}

void frame_cache_prefetch(const struct frame_cache *c, uint64_t vaddr)
{
    __builtin_prefetch(cache_set_of(c, vaddr + 1));
}

/* Puts key's n frames in its set: in the way that has the key, else an
 * empty one, else in place of the one used least recently. */
static void cache_place(struct frame_cache *c, uint64_t key, const struct elf_frame *frames,
                        uint32_t n)
{
    struct cache_set *s = cache_set_of(c, key);
    uint32_t w = s->keys[0] == key ? 0 : s->keys[1] == key ? 1
               : !s->keys[0] ? 0 : !s->keys[1] ? 1 : 1 - s->recent;
    c->used += !s->keys[w];
    s->keys[w] = key;
    s->n[w] = n;
    memcpy(s->frames[w], frames, n * sizeof(*frames));
    s->recent = w;
}

/* Doubles the table, placing its entries again. */
static void cache_grow(struct frame_cache *c)
{
    struct cache_set *old = c->sets;
    size_t nold = c->mask + 1;
    c->sets = cache_sets_new(2 * nold);
    c->mask = 2 * nold - 1;
    c->used = 0;
    for (size_t i = 0; i < nold; i++)
        for (uint32_t w = 0; w < 2; w++)
            if (old[i].keys[w])
                cache_place(c, old[i].keys[w], old[i].frames[w], old[i].n[w]);
    free(old);
}

void frame_cache_put(struct frame_cache *c, uint64_t vaddr, const struct elf_frame *frames,
                     size_t n)
{
    if (n > FRAME_CACHE_FRAMES)
        return;
    if (c->used >= c->mask + 1 && 2 * (c->mask + 1) <= c->max_sets)   /* half the ways full */
        cache_grow(c);
    cache_place(c, vaddr + 1, frames, (uint32_t)n);
}

size_t frame_cache_room_of(size_t bytes)
{
    size_t max_sets = bytes / sizeof(struct cache_set), sets = FIRST_SETS;
    if (max_sets < FIRST_SETS)
        return 0;
    while (2 * sets <= max_sets)
        sets *= 2;
    return 2 * sets;
}

size_t frame_cache_footprint(const struct frame_cache *c)
{
    return c ? sizeof(*c) + (c->mask + 1) * sizeof(struct cache_set) : 0;
}

void frame_cache_free(struct frame_cache *c)
{
    if (!c)
        return;
    free(c->sets);
    free(c);
}
