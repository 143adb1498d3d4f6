// SPDX-License-Identifier: Apache-2.0
#include "huge_arena.h"

#include <jemalloc/jemalloc.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

/* jemalloc's control call (jemalloc(3)), declared weak: NULL where jemalloc
 * is not linked in. The header's own declaration is of its prefixed name. */
extern int profd_mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp,
                         size_t newlen) __asm__("mallctl") __attribute__((weak));

static extent_hooks_t *default_hooks;   /* arena 0's, which the new one calls */
static extent_hooks_t huge_hooks;       /* the same, but for alloc */
static int huge_arena = -1;
static pthread_once_t made = PTHREAD_ONCE_INIT;

/* Maps an extent as jemalloc would, but from 2 MiB on a huge page's
 * boundary, and marks its whole huge pages. jemalloc maps its memory (its
 * retained address space, its default on Linux) 2 MiB and more at a time,
 * each mapping a size class larger than the one before (2, 2.5, 3, 3.5,
 * 4, 5 MiB...), on no particular boundary: as it came, the first few
 * hundred KiB of a mapping were left in small pages too, faulted one by
 * one. What lies past a mapping's last whole huge page stays small:
 * rounded up to one, it would cost a perf.data conversion's peak 2 MB
 * more (a page whose start alone is used) for no time saved. */
static void *map_marked(extent_hooks_t *hooks, void *new_addr, size_t size, size_t alignment,
                        bool *zero, bool *commit, unsigned arena)
{
    (void)hooks;
    if (!new_addr && size >= HUGE_PAGE_BYTES && alignment < HUGE_PAGE_BYTES)
        alignment = HUGE_PAGE_BYTES;
    void *p = default_hooks->alloc(default_hooks, new_addr, size, alignment, zero, commit, arena);
    huge_pages_mark(p, size);
    return p;
}

static void make_arena(void)
{
    size_t len = sizeof(default_hooks);
    if (!profd_mallctl || profd_mallctl("arena.0.extent_hooks", &default_hooks, &len, NULL, 0))
        return;
    huge_hooks = *default_hooks;
    huge_hooks.alloc = map_marked;
    extent_hooks_t *hooks = &huge_hooks;
    unsigned index;
    len = sizeof(index);
    if (profd_mallctl("arenas.create", &index, &len, &hooks, sizeof(hooks)) == 0)
        huge_arena = (int)index;
}

int profd_huge_arena_enter(void)
{
    pthread_once(&made, make_arena);
    unsigned before, mine = (unsigned)huge_arena;
    size_t len = sizeof(before);
    if (huge_arena < 0 ||
        profd_mallctl("thread.arena", &before, &len, &mine, sizeof(mine)) != 0)
        return -1;
    return (int)before;
}

void profd_huge_arena_leave(int before)
{
    unsigned arena = (unsigned)before;
    if (before >= 0)
        profd_mallctl("thread.arena", NULL, NULL, &arena, sizeof(arena));
}

void *profd_xmalloc_large(size_t n)
{
    return profd_xrealloc_large(NULL, n);
}

void *profd_xrealloc_large(void *p, size_t n)
{
    if (n < HUGE_PAGES_FROM)
        return profd_xrealloc(p, n);
    int before = profd_huge_arena_enter();
    if (before < 0) {   /* no arena: marked where it lies */
        p = profd_xrealloc(p, n);
        profd_advise_huge(p, n);
        return p;
    }
    size_t had = p ? malloc_usable_size(p) : 0;
    void *q;
    if (had < HUGE_PAGES_FROM) {   /* a small block (or none) is in another arena: moved */
        q = profd_xmalloc(n);
        if (had)
            memcpy(q, p, had);
        free(p);
    } else {   /* grown in place in the huge arena, or moved within it */
        q = profd_xrealloc(p, n);
    }
    profd_huge_arena_leave(before);
    return q;
}
