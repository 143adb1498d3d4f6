// SPDX-License-Identifier: Apache-2.0
/* huge_arena: a thread inside allocates from an arena of its own whose
 * memory the kernel may back with huge pages, and from its own arena
 * again once it leaves. Linked with the daemon's allocator; where that is
 * not jemalloc (sanitizer builds) entering does nothing and says so. */
#include "check.h"
#include "smaps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/huge_arena.c"

/* The calling thread's arena, -1 without jemalloc. */
static int thread_arena(void)
{
    unsigned arena;
    size_t len = sizeof(arena);
    if (!profd_mallctl || profd_mallctl("thread.arena", &arena, &len, NULL, 0))
        return -1;
    return (int)arena;
}

/* Whether this system gives transparent huge pages to memory marked for
 * them (its mode is not "never"). */
static bool huge_pages_on_request(void)
{
    char mode[128] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f) {
        if (!fgets(mode, sizeof(mode), f))
            mode[0] = 0;
        fclose(f);
    }
    return mode[0] && !strstr(mode, "[never]");
}

TEST(a_thread_inside_allocates_memory_marked_for_huge_pages_and_leaves)
{
    int own = thread_arena();
    int before = huge_arena_enter();
    if (before < 0) {   /* only where jemalloc is not linked in */
        CHECK(getenv("PROFD_SANITIZED") && *getenv("PROFD_SANITIZED"));
        return;
    }
    CHECK_INT(before, own);
    CHECK(thread_arena() != own);
    enum { N = 16384, SIZE = 1024 };   /* 16 MiB in small blocks, as libdw makes them */
    char **blocks = malloc(N * sizeof(*blocks));
    for (size_t i = 0; i < N; i++) {
        blocks[i] = malloc(SIZE);
        memset(blocks[i], 1, SIZE);
    }
    if (huge_pages_on_request()) {
        /* the arena's memory comes 2 MiB and more at a time, marked but
         * for what lies off the 2 MiB boundaries: most of it is eligible */
        int eligible = 0, looked = 0;
        for (size_t i = 0; i < N; i += 256, looked++)
            eligible += smaps_field(blocks[i], "THPeligible") == 1;
        CHECK(eligible * 2 >= looked);
    }
    huge_arena_leave(before);
    CHECK_INT(thread_arena(), own);
    CHECK_INT(huge_arena_enter(), own);   /* the same arena again, made once */
    huge_arena_leave(own);
    for (size_t i = 0; i < N; i++)
        free(blocks[i]);   /* outside: a block goes back to the arena it came from */
    free(blocks);
}

RUN_TESTS()
