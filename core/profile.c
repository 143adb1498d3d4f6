// SPDX-License-Identifier: Apache-2.0
#include "profile.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/hash.h"
#include "alloc.h"
#include "arena.h"

/* Open-addressing set of string positions, keyed by content. */
struct profd_strindex {
    uint32_t *slots;   /* position + 1; 0 = empty */
    size_t mask, used;
};

struct profd_profile *profd_profile_new(size_t size_hint)
{
    struct profd_profile *p = profd_xcalloc(1, sizeof(*p));
    p->arena = profd_arena_create(size_hint);
    p->strings_cap = 16;
    p->strings = profd_arena_alloc(p->arena, p->strings_cap * sizeof(*p->strings));
    p->strings[0] = (struct profd_str){"", 0};
    p->nstrings = 1;
    return p;
}

void profd_profile_free(struct profd_profile *p)
{
    if (!p)
        return;
    if (p->string_index)
        free(p->string_index->slots);
    free(p->string_index);
    profd_arena_destroy(p->arena);
    free(p->backing);
    free(p);
}

/* Appends one zeroed entry of size bytes to the table *items_ptr (a
 * pointer to the table's pointer) of *n entries and room for *cap, which
 * doubles in p's arena when full. */
static void *add_entry(struct profd_profile *p, void *items_ptr, size_t *n, size_t *cap,
                       size_t size)
{
    void **items = items_ptr;
    if (*n == *cap) {
        size_t grown = *cap ? 2 * *cap : 64;
        *items = profd_arena_realloc(p->arena, *items, *n * size, grown * size);
        *cap = grown;
    }
    void *entry = (char *)*items + (*n)++ * size;
    memset(entry, 0, size);
    return entry;
}

/* add_entry for a table counted in 32 bits. */
static void *add_entry32(struct profd_profile *p, void *items_ptr, uint32_t *n, uint32_t *cap,
                         size_t size)
{
    size_t n_wide = *n, cap_wide = *cap;
    void *entry = add_entry(p, items_ptr, &n_wide, &cap_wide, size);
    *n = (uint32_t)n_wide;
    *cap = (uint32_t)cap_wide;
    return entry;
}

struct profd_sample *profd_profile_add_sample(struct profd_profile *p)
{
    return add_entry(p, &p->samples, &p->nsamples, &p->samples_cap, sizeof(*p->samples));
}

struct profd_location *profd_profile_add_location(struct profd_profile *p)
{
    return add_entry32(p, &p->locations, &p->nlocations, &p->locations_cap,
                       sizeof(*p->locations));
}

struct profd_function *profd_profile_add_function(struct profd_profile *p)
{
    return add_entry32(p, &p->functions, &p->nfunctions, &p->functions_cap,
                       sizeof(*p->functions));
}

struct profd_mapping *profd_profile_add_mapping(struct profd_profile *p)
{
    return add_entry32(p, &p->mappings, &p->nmappings, &p->mappings_cap, sizeof(*p->mappings));
}

bool profd_profile_str_eq(const struct profd_profile *p, uint32_t idx, const char *s)
{
    if (idx >= p->nstrings)
        return false;
    size_t n = strlen(s);
    return p->strings[idx].len == n && memcmp(p->strings[idx].ptr, s, n) == 0;
}

static void index_insert(struct profd_strindex *ix, const struct profd_str *strings, uint32_t pos)
{
    size_t i = hash_bytes(strings[pos].ptr, strings[pos].len) & ix->mask;
    while (ix->slots[i])
        i = (i + 1) & ix->mask;
    ix->slots[i] = pos + 1;
    ix->used++;
}

static void index_rebuild(struct profd_profile *p, size_t want)
{
    struct profd_strindex *ix = p->string_index;
    if (!ix)
        ix = p->string_index = profd_xcalloc(1, sizeof(*ix));
    size_t size = 64;
    while (size < want * 2)
        size *= 2;
    free(ix->slots);
    ix->slots = profd_xcalloc(size, sizeof(*ix->slots));
    ix->mask = size - 1;
    ix->used = 0;
    for (uint32_t i = 0; i < p->nstrings; i++)
        index_insert(ix, p->strings, i);
}

static char *arena_strndup(struct profd_arena *a, const char *s, size_t n)
{
    char *dst = profd_arena_alloc(a, n + 1);
    memcpy(dst, s, n);
    dst[n] = '\0';
    return dst;
}

uint32_t profd_profile_intern(struct profd_profile *p, const char *s, size_t len)
{
    if (!p->string_index || (p->string_index->used + 1) * 2 > p->string_index->mask)
        index_rebuild(p, p->nstrings + 1);
    struct profd_strindex *ix = p->string_index;
    size_t i = hash_bytes(s, len) & ix->mask;
    for (; ix->slots[i]; i = (i + 1) & ix->mask) {
        const struct profd_str *e = &p->strings[ix->slots[i] - 1];
        if (e->len == len && memcmp(e->ptr, s, len) == 0)
            return ix->slots[i] - 1;
    }
    if (p->nstrings == p->strings_cap) {
        uint32_t ncap = p->strings_cap * 2;
        p->strings = profd_arena_realloc(p->arena, p->strings, p->nstrings * sizeof(*p->strings),
                                         ncap * sizeof(*p->strings));
        p->strings_cap = ncap;
    }
    char *copy = arena_strndup(p->arena, s, len);
    uint32_t pos = p->nstrings++;
    p->strings[pos] = (struct profd_str){copy, (uint32_t)len};
    ix->slots[i] = pos + 1;
    ix->used++;
    return pos;
}

static void *arena_dup(struct profd_arena *a, const void *src, size_t n)
{
    if (!n)
        return NULL;
    void *dst = profd_arena_alloc(a, n);
    memcpy(dst, src, n);
    return dst;
}

struct profd_profile *profd_profile_clone(const struct profd_profile *src)
{
    struct profd_profile *p = profd_xcalloc(1, sizeof(*p));
    *p = *src;
    p->string_index = NULL;
    p->backing = NULL;
    p->arena = profd_arena_create(profd_arena_footprint(src->arena));
    struct profd_arena *a = p->arena;

    p->strings_cap = src->nstrings;
    p->strings = arena_dup(a, src->strings, src->nstrings * sizeof(*p->strings));
    for (uint32_t i = 0; i < p->nstrings; i++)
        p->strings[i].ptr = arena_strndup(a, src->strings[i].ptr, src->strings[i].len);
    p->sample_types = arena_dup(a, src->sample_types, src->nsample_types * sizeof(*p->sample_types));
    p->samples_cap = src->nsamples;
    p->samples = arena_dup(a, src->samples, src->nsamples * sizeof(*p->samples));
    for (size_t i = 0; i < p->nsamples; i++) {
        struct profd_sample *s = &p->samples[i];
        s->locations = arena_dup(a, s->locations, s->nlocations * sizeof(*s->locations));
        s->values = arena_dup(a, s->values, src->nsample_types * sizeof(*s->values));
        s->labels = arena_dup(a, s->labels, s->nlabels * sizeof(*s->labels));
    }
    p->mappings_cap = src->nmappings;
    p->mappings = arena_dup(a, src->mappings, src->nmappings * sizeof(*p->mappings));
    p->locations_cap = src->nlocations;
    p->locations = arena_dup(a, src->locations, src->nlocations * sizeof(*p->locations));
    for (uint32_t i = 0; i < p->nlocations; i++) {
        struct profd_location *l = &p->locations[i];
        l->lines = arena_dup(a, l->lines, l->nlines * sizeof(*l->lines));
    }
    p->functions_cap = src->nfunctions;
    p->functions = arena_dup(a, src->functions, src->nfunctions * sizeof(*p->functions));
    p->comments = arena_dup(a, src->comments, src->ncomments * sizeof(*p->comments));
    return p;
}
