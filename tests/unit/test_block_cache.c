// SPDX-License-Identifier: Apache-2.0
/* The block cache: large blocks given back are handed out again to a
 * request they fit (at most twice its size), the cache holds at most
 * BLOCK_CACHE_MAX bytes, and trimming frees what is idle. */
#include "check.h"

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
    /* blocks a page more than 8 MiB each, so that one handed out again
     * is told from a new one by its size (addresses may repeat: a block
     * freed for want of room may come back from malloc) */
    enum { N = BLOCK_CACHE_MAX / (8u << 20) + 2 };
    void *blocks[N];
    size_t got;
    for (size_t i = 0; i < N; i++)
        blocks[i] = profd_block_get((8u << 20) + 4096 * (i + 1), &got);
    for (size_t i = 0; i < N; i++)
        profd_block_put(blocks[i], (8u << 20) + 4096 * (i + 1));
    size_t reused = 0;
    size_t sizes[N];
    for (size_t i = 0; i < N; i++) {
        blocks[i] = profd_block_get(8u << 20, &sizes[i]);
        reused += sizes[i] > (8u << 20);
    }
    CHECK_INT(reused, BLOCK_CACHE_MAX / (8u << 20) - 1);   /* as many as fit in the maximum */
    for (size_t i = 0; i < N; i++)
        profd_block_put(blocks[i], sizes[i]);
    profd_block_trim(0);
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
