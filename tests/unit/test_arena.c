// SPDX-License-Identifier: Apache-2.0
/* The arena: alignment, zeroing, growth, and pages made present ahead. */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../core/arena.h"
#include "check.h"

TEST(allocations_are_aligned_zeroed_when_asked_and_grow_past_a_chunk)
{
    struct profd_arena *a = profd_arena_create(64);
    unsigned char *prev = NULL;
    size_t asked = 0;   /* sizes rounded up to 16 */
    for (size_t n = 1; n < 20000; n = n * 3 + 1) {
        asked += (n + 15) / 16 * 16;
        unsigned char *p = profd_arena_zalloc(a, n);
        CHECK_INT((uintptr_t)p % 16, 0);
        size_t nonzero = 0;
        for (size_t i = 0; i < n; i++)
            nonzero += p[i] != 0;
        CHECK_INT(nonzero, 0);
        memset(p, 0xab, n);   /* ASan sees the whole block is ours */
        CHECK(p != prev);
        prev = p;
    }
    CHECK(profd_arena_footprint(a) >= 20000);
    CHECK_INT(profd_arena_used(a), asked);
    CHECK(asked < profd_arena_footprint(a));
    profd_arena_alloc(a, 1);
    CHECK_INT(profd_arena_used(a), asked + 16);
    unsigned char *grown = profd_arena_realloc(a, prev, 4, 8);
    CHECK_INT(grown[3], 0xab);
    profd_arena_destroy(a);
}

TEST(an_adopted_arena_lives_as_long_as_its_adopter)
{
    struct profd_arena *a = profd_arena_create(64), *other = profd_arena_create(1u << 16);
    char *mine = profd_arena_alloc(a, 8);
    char *theirs = profd_arena_alloc(other, 40000);
    strcpy(mine, "mine");
    strcpy(theirs + 39990, "theirs");
    size_t footprint = profd_arena_footprint(a) + profd_arena_footprint(other);
    profd_arena_adopt(a, other);
    CHECK_INT(profd_arena_footprint(a), footprint);
    char *next = profd_arena_alloc(a, 8);   /* from a's own chunk, as before */
    CHECK(next == mine + 16);
    CHECK_STR(theirs + 39990, "theirs");
    profd_arena_destroy(a);   /* ASan and valgrind: other's chunks freed with it */
}

TEST(a_reset_arena_keeps_its_newest_block_for_what_comes_next)
{
    struct profd_arena *a = profd_arena_create(64);
    profd_arena_reset(a);   /* nothing yet: nothing to keep */
    CHECK_INT(profd_arena_footprint(a), 0);
    for (int i = 0; i < 4; i++)
        memset(profd_arena_alloc(a, 6000), i, 6000);
    size_t newest = profd_arena_footprint(a);
    char *last = profd_arena_alloc(a, 16);
    profd_arena_reset(a);
    CHECK(profd_arena_footprint(a) < newest);
    char *first = profd_arena_alloc(a, 16);   /* the kept block, from its start */
    CHECK(first != NULL && (uintptr_t)first % 16 == 0);
    CHECK(first <= last);
    memset(profd_arena_alloc(a, 1 << 20), 1, 1 << 20);   /* grows again past it */
    CHECK(profd_arena_footprint(a) > (1u << 20));
    profd_arena_destroy(a);   /* ASan and valgrind: the dropped blocks were freed */
}

/* Pages of [p, p + len) present in memory. */
static size_t resident_pages(const void *p, size_t len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t from = (uintptr_t)p & ~(uintptr_t)(page - 1);
    size_t n = ((uintptr_t)p + len - from + page - 1) / page;
    unsigned char *in = calloc(n, 1);
    if (!in || mincore((void *)from, n * page, in) != 0) {
        free(in);
        return SIZE_MAX;
    }
    size_t resident = 0;
    for (size_t i = 0; i < n; i++)
        resident += in[i] & 1;
    free(in);
    return resident;
}

TEST(a_large_chunk_is_present_a_window_ahead_of_its_use_and_no_further)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), mib = 1u << 20;
    void *probe = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int populates = madvise(probe, page, MADV_POPULATE_WRITE) == 0;
    munmap(probe, page);
    if (!populates) {
        printf("  (MADV_POPULATE_WRITE not on this kernel: nothing to check)\n");
        return;
    }
    struct profd_arena *a = profd_arena_create(64 * mib);
    unsigned char *first = profd_arena_alloc(a, 16);
    CHECK(profd_arena_alloc(a, 3 * mib - 64) != NULL);   /* nothing written */
    size_t resident = resident_pages(first, 64 * mib);
    CHECK(resident != SIZE_MAX);
    CHECK(resident * page >= 3 * mib);        /* what is used */
    CHECK(resident * page <= 4 * mib + page); /* and the window holding its end */
    profd_arena_destroy(a);
}

RUN_TESTS()
