// SPDX-License-Identifier: Apache-2.0
#include "arena.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

#define ARENA_ALIGN 16
#define ARENA_MIN_CHUNK (4 * 1024)

struct chunk {
    struct chunk *next;
    size_t size, used;
    _Alignas(ARENA_ALIGN) unsigned char data[];
};

struct profd_arena {
    struct chunk *head;
    size_t next_size, footprint;
};

static struct chunk *chunk_new(size_t size)
{
    struct chunk *c = profd_xmalloc(sizeof(*c) + size);
    c->next = NULL;
    c->size = size;
    c->used = 0;
    return c;
}

struct profd_arena *profd_arena_create(size_t first_chunk)
{
    struct profd_arena *a = profd_xcalloc(1, sizeof(*a));
    a->next_size = first_chunk > ARENA_MIN_CHUNK ? first_chunk : ARENA_MIN_CHUNK;
    return a;
}

void profd_arena_destroy(struct profd_arena *a)
{
    if (!a)
        return;
    struct chunk *c = a->head;
    while (c) {
        struct chunk *next = c->next;
        free(c);
        c = next;
    }
    free(a);
}

void *profd_arena_alloc(struct profd_arena *a, size_t n)
{
    n = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    struct chunk *c = a->head;
    if (!c || c->size - c->used < n) {
        size_t size = a->next_size;
        if (size < n)
            size = n;
        c = chunk_new(size);
        c->next = a->head;
        a->head = c;
        a->footprint += size;
        if (a->next_size < (64u << 20))
            a->next_size *= 2;
    }
    void *p = c->data + c->used;
    c->used += n;
    return p;
}

void *profd_arena_zalloc(struct profd_arena *a, size_t n)
{
    void *p = profd_arena_alloc(a, n);
    memset(p, 0, n);
    return p;
}

void *profd_arena_realloc(struct profd_arena *a, void *old, size_t old_n, size_t new_n)
{
    void *p = profd_arena_alloc(a, new_n);
    if (old_n)
        memcpy(p, old, old_n < new_n ? old_n : new_n);
    return p;
}

size_t profd_arena_footprint(const struct profd_arena *a)
{
    return a->footprint;
}
