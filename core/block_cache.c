// SPDX-License-Identifier: Apache-2.0
#include "block_cache.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../lib/clock.h"
#include "alloc.h"

#define MAX_KEPT (BLOCK_CACHE_MAX / BLOCK_CACHE_MIN)

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct kept {
    void *p;
    size_t size;
} kept[MAX_KEPT];
static size_t nkept, kept_bytes;
static int64_t last_get;   /* CLOCK_MONOTONIC ns of the last profd_block_get */

/* Whether a block of size bytes (asked for, or given back) is mapped here
 * rather than malloc'd. A mapped one has whole huge pages for 3 MiB or
 * more, so 4 MiB at least: an array that gives back the whole number of
 * its elements that fit (profd_block_grow: less than the block by less
 * than an element of at most 1 MiB) is still known by its size. */
static bool mapped(size_t size)
{
    return BLOCK_CACHE_KEEPS && size >= BLOCK_CACHE_HUGE_MIN;
}

static size_t whole_huge_pages(size_t size)
{
    return (size + HUGE_PAGE_BYTES - 1) & ~(HUGE_PAGE_BYTES - 1);
}

/* A new block of at least size bytes (a whole number of huge pages, into
 * *got), mapped on a huge page boundary and marked for transparent huge
 * pages: one fault and one TLB entry for 2 MiB instead of 512. */
static void *map_block(size_t size, size_t *got)
{
    const size_t huge = HUGE_PAGE_BYTES;
    size_t len = whole_huge_pages(size);
    uint8_t *p = mmap(NULL, len + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        profd_out_of_memory(len);
    size_t head = (huge - (uintptr_t)p % huge) % huge;   /* up to the first boundary */
    if (head)
        munmap(p, head);
    munmap(p + head + len, huge - head);   /* the rest past the block */
    profd_advise_huge(p + head, len);
    *got = len;
    return p + head;
}

/* Frees block p of size bytes, mapped or malloc'd as its size says. */
static void free_block(void *p, size_t size)
{
    if (mapped(size))
        munmap(p, whole_huge_pages(size));
    else
        free(p);
}

void *profd_block_get(size_t size, size_t *got)
{
    if (size >= BLOCK_CACHE_MIN) {
        pthread_mutex_lock(&mu);
        last_get = monotonic_ns();
        size_t best = nkept;   /* the smallest that fits */
        for (size_t i = 0; i < nkept; i++)
            if (kept[i].size >= size && kept[i].size / 2 <= size &&
                (best == nkept || kept[i].size < kept[best].size))
                best = i;
        if (best < nkept) {
            void *p = kept[best].p;
            *got = kept[best].size;
            kept_bytes -= kept[best].size;
            kept[best] = kept[--nkept];
            pthread_mutex_unlock(&mu);
            return p;
        }
        pthread_mutex_unlock(&mu);
    }
    if (mapped(size))
        return map_block(size, got);
    *got = size;
    return profd_xmalloc(size);
}

void profd_block_put(void *p, size_t size)
{
    if (!p)
        return;
    if (mapped(size))   /* its whole size, however little of it an array used */
        size = whole_huge_pages(size);
    if (BLOCK_CACHE_KEEPS && size >= BLOCK_CACHE_MIN) {
        pthread_mutex_lock(&mu);
        bool room = nkept < MAX_KEPT && kept_bytes + size <= BLOCK_CACHE_MAX;
        if (room) {
            kept[nkept++] = (struct kept){p, size};
            kept_bytes += size;
        }
        pthread_mutex_unlock(&mu);
        if (room)
            return;
    }
    free_block(p, size);
}

void profd_block_grow(void *items_ptr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return;
    size_t ncap = profd_grown_cap(*cap, need), got;
    void **items = items_ptr;
    void *grown = profd_block_get(ncap * elem, &got);
    if (*cap)
        memcpy(grown, *items, *cap * elem);
    profd_block_put(*items, *cap * elem);
    *items = grown;
    *cap = got / elem;
}

void profd_block_release(void *items, size_t cap, size_t elem)
{
    profd_block_put(items, cap * elem);
}

void profd_block_trim(int64_t max_idle_ns)
{
    pthread_mutex_lock(&mu);
    if (max_idle_ns == 0 || monotonic_ns() - last_get > max_idle_ns) {
        for (size_t i = 0; i < nkept; i++)
            free_block(kept[i].p, kept[i].size);
        nkept = kept_bytes = 0;
    }
    pthread_mutex_unlock(&mu);
}

/* Nothing kept past the process's end: leak checkers see every block
 * freed. */
__attribute__((destructor)) static void free_kept(void)
{
    profd_block_trim(0);
}
