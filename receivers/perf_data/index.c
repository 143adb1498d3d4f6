// SPDX-License-Identifier: Apache-2.0
#include "index.h"

#include <stdlib.h>

static void put(struct index *ix, uint32_t folded, uint32_t stored)
{
    size_t i = folded & ix->mask;
    while (ix->slots[i].position)
        i = (i + 1) & ix->mask;
    ix->slots[i] = (struct index_slot){folded, stored};
}

void index_add(struct index *ix, uint64_t hash, uint32_t position)
{
    if (!ix->slots || (ix->count + 1) * 2 > ix->mask + 1) {
        struct index old = *ix;
        size_t size = old.slots ? (old.mask + 1) * 2 : 64;
        if (!(ix->slots = calloc(size, sizeof(*ix->slots))))
            abort();
        ix->mask = size - 1;
        for (size_t i = 0; old.slots && i <= old.mask; i++)
            if (old.slots[i].position)
                put(ix, old.slots[i].hash, old.slots[i].position);
        free(old.slots);
    }
    put(ix, index_fold(hash), position + 1);
    ix->count++;
}

void index_clear(struct index *ix)
{
    free(ix->slots);
    *ix = (struct index){0};
}
