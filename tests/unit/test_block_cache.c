// SPDX-License-Identifier: Apache-2.0
/* The block cache: large blocks given back are handed out again to a
 * request they fit (at most twice its size), the cache holds at most
 * BLOCK_CACHE_MAX bytes, and trimming frees what is idle; the largest are
 * mapped whole huge pages at a time. */
#include "check.h"

#include <stdint.h>
#include <string.h>

#include "../../core/block_cache.h"

#if BLOCK_CACHE_KEEPS

TEST(a_block_given_back_is_handed_out_again_when_it_fits)
{
    size_t got;
    void *p = profd_block_get(1 << 20, &got);
    CHECK_INT(got, 1 << 20);
    profd_block_put(p, got);
    void *q = profd_block_get(400 << 10, &got);   /* 1 MiB is more than twice this */
    CHECK(q != p);
    CHECK_INT(got, 400 << 10);
    void *r = profd_block_get(600 << 10, &got);   /* fits */
    CHECK(r == p);
    CHECK_INT(got, 1 << 20);
    profd_block_put(q, 400 << 10);
    profd_block_put(r, 1 << 20);
    void *s = profd_block_get(300 << 10, &got);   /* the smallest that fits */
    CHECK(s == q);
    profd_block_put(s, got);
    profd_block_trim(0);
}

TEST(the_cache_holds_at_most_its_maximum)
{
    /* blocks a page more than 2 MiB each (malloc'd ones), so that one
     * handed out again is told from a new one by its size (addresses may
     * repeat: a block freed for want of room may come back from malloc) */
    enum { N = BLOCK_CACHE_MAX / (2u << 20) + 2 };
    void *blocks[N];
    size_t got;
    for (size_t i = 0; i < N; i++)
        blocks[i] = profd_block_get((2u << 20) + 4096 * (i + 1), &got);
    for (size_t i = 0; i < N; i++)
        profd_block_put(blocks[i], (2u << 20) + 4096 * (i + 1));
    size_t reused = 0;
    size_t sizes[N];
    for (size_t i = 0; i < N; i++) {
        blocks[i] = profd_block_get(2u << 20, &sizes[i]);
        reused += sizes[i] > (2u << 20);
    }
    CHECK_INT(reused, BLOCK_CACHE_MAX / (2u << 20) - 1);   /* as many as fit in the maximum */
    for (size_t i = 0; i < N; i++)
        profd_block_put(blocks[i], sizes[i]);
    profd_block_trim(0);
}

TEST(large_blocks_are_whole_huge_pages_known_by_their_size_however_little_is_used)
{
    size_t got;
    uint8_t *p = profd_block_get(5u << 20, &got);
    CHECK_INT(got, 6u << 20);   /* whole 2 MiB pages, on a 2 MiB boundary */
    CHECK_INT((uintptr_t)p % (2u << 20), 0);
    memset(p, 1, got);
    profd_block_put(p, got - 23);   /* as an array of 24-byte entries gives it back */
    void *q = profd_block_get((5u << 20) - 1000, &got);
    CHECK(q == p);
    CHECK_INT(got, 6u << 20);   /* its whole size again */
    profd_block_put(q, got);
    profd_block_trim(0);   /* unmapped, not freed as a malloc'd block */
}

TEST(trimming_frees_what_is_idle)
{
    size_t got;
    void *p = profd_block_get(1 << 20, &got);
    profd_block_put(p, got);
    profd_block_trim(BLOCK_CACHE_IDLE_NS);   /* asked for just now: kept */
    void *q = profd_block_get(1 << 20, &got);
    CHECK(q == p);
    profd_block_put(q, got);
    profd_block_trim(0);
    void *r = profd_block_get(1 << 20, &got);   /* a new one (perhaps at the same place) */
    CHECK_INT(got, 1 << 20);
    profd_block_put(r, got);
    profd_block_trim(0);
}

#else
TEST(under_address_sanitizer_nothing_is_kept)
{
    size_t got;
    void *p = profd_block_get(1 << 20, &got);
    profd_block_put(p, got);
    void *q = profd_block_get(600 << 10, &got);   /* never the block given back */
    CHECK_INT(got, 600 << 10);
    profd_block_put(q, got);
}
#endif

RUN_TESTS()
