// SPDX-License-Identifier: Apache-2.0
#include "block_cache.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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
    *got = size;
    return profd_xmalloc(size);
}

void profd_block_put(void *p, size_t size)
{
    if (!p)
        return;
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
    free(p);
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
            free(kept[i].p);
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
