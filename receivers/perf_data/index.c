// SPDX-License-Identifier: Apache-2.0
#include "index.h"

#include <stdlib.h>

int64_t index_find(const struct index *ix, uint64_t hash, bool (*same)(void *arg, uint32_t pos),
                   void *arg)
{
    if (!ix->positions)
        return -1;
    for (size_t i = hash & ix->mask; ix->positions[i]; i = (i + 1) & ix->mask)
        if (ix->hashes[i] == hash && same(arg, ix->positions[i] - 1))
            return ix->positions[i] - 1;
    return -1;
}

static void put(struct index *ix, uint64_t hash, uint32_t stored)
{
    size_t i = hash & ix->mask;
    while (ix->positions[i])
        i = (i + 1) & ix->mask;
    ix->hashes[i] = hash;
    ix->positions[i] = stored;
}

void index_add(struct index *ix, uint64_t hash, uint32_t position)
{
    if (!ix->positions || (ix->count + 1) * 2 > ix->mask + 1) {
        struct index old = *ix;
        size_t size = old.positions ? (old.mask + 1) * 2 : 64;
        ix->hashes = calloc(size, sizeof(*ix->hashes));
        ix->positions = calloc(size, sizeof(*ix->positions));
        if (!ix->hashes || !ix->positions)
            abort();
        ix->mask = size - 1;
        for (size_t i = 0; old.positions && i <= old.mask; i++)
            if (old.positions[i])
                put(ix, old.hashes[i], old.positions[i]);
        free(old.hashes);
        free(old.positions);
    }
    put(ix, hash, position + 1);
    ix->count++;
}

void index_clear(struct index *ix)
{
    free(ix->hashes);
    free(ix->positions);
    *ix = (struct index){0};
}
