// SPDX-License-Identifier: Apache-2.0
#include "huge_arena.h"

#include <dlfcn.h>
#include <jemalloc/jemalloc.h>
#include <pthread.h>

#include "huge_pages.h"

/* jemalloc's control call (jemalloc(3)), declared weak: NULL where jemalloc
 * is not linked in. The header's own declaration is of its prefixed name. */
extern int profd_mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp,
                         size_t newlen) __asm__("mallctl") __attribute__((weak));

static extent_hooks_t *default_hooks;   /* arena 0's, which the new one calls */
static extent_hooks_t huge_hooks;       /* the same, but for alloc */
static int huge_arena = -1;
static pthread_once_t made = PTHREAD_ONCE_INIT;

/* Maps an extent as jemalloc would, and marks its whole huge pages. With
 * jemalloc's retained address space (its default on Linux) memory is
 * mapped 2 MiB and more at a time, each mapping a size class larger than
 * the one before. */
static void *map_marked(extent_hooks_t *hooks, void *new_addr, size_t size, size_t alignment,
                        bool *zero, bool *commit, unsigned arena)
{
    (void)hooks;
    void *p = default_hooks->alloc(default_hooks, new_addr, size, alignment, zero, commit, arena);
    huge_pages_mark(p, size);
    return p;
}

/* Keeps the object this file is linked into (a module) loaded for good:
 * the arena calls its hooks for as long as the process lives, after the
 * module's own end too (jemalloc's background thread purges it later). */
static void stay_loaded(void)
{
    Dl_info self;
    if (dladdr((void *)map_marked, &self) && self.dli_fname)
        dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
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
    if (profd_mallctl("arenas.create", &index, &len, &hooks, sizeof(hooks)) == 0) {
        stay_loaded();
        huge_arena = (int)index;
    }
}

int huge_arena_enter(void)
{
    pthread_once(&made, make_arena);
    unsigned before, mine = (unsigned)huge_arena;
    size_t len = sizeof(before);
    if (huge_arena < 0 ||
        profd_mallctl("thread.arena", &before, &len, &mine, sizeof(mine)) != 0)
        return -1;
    return (int)before;
}

void huge_arena_leave(int before)
{
    unsigned arena = (unsigned)before;
    if (before >= 0)
        profd_mallctl("thread.arena", NULL, NULL, &arena, sizeof(arena));
}
