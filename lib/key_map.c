// SPDX-License-Identifier: Apache-2.0
#include "key_map.h"

#include <stdlib.h>

#include "hash.h"

static size_t slot_of(const struct key_map *m, uint64_t key)
{
    size_t i = (size_t)hash_mix(0, key) & (m->cap - 1);
    while (m->vals[i] && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    return i;
}

void key_map_put(struct key_map *m, uint64_t key, uint32_t val)
{
    if (2 * (m->n + 1) > m->cap) {   /* at most half full */
        size_t cap = m->cap ? 2 * m->cap : 64;
        struct key_map bigger = {calloc(cap, sizeof(uint64_t)), calloc(cap, sizeof(uint32_t)),
                                 cap, m->n};
        if (!bigger.keys || !bigger.vals)
            abort();
        for (size_t i = 0; i < m->cap; i++)
            if (m->vals[i]) {
                size_t j = slot_of(&bigger, m->keys[i]);
                bigger.keys[j] = m->keys[i];
                bigger.vals[j] = m->vals[i];
            }
        free(m->keys);
        free(m->vals);
        *m = bigger;
    }
    size_t i = slot_of(m, key);
    m->n += !m->vals[i];
    m->keys[i] = key;
    m->vals[i] = val + 1;
}

bool key_map_get(const struct key_map *m, uint64_t key, uint32_t *val)
{
    if (!m->cap)
        return false;
    size_t i = slot_of(m, key);
    if (!m->vals[i])
        return false;
    *val = m->vals[i] - 1;
    return true;
}

bool key_map_remove(struct key_map *m, uint64_t key)
{
    if (!m->cap)
        return false;
    size_t i = slot_of(m, key), mask = m->cap - 1;
    if (!m->vals[i])
        return false;
    /* Each later entry of the run whose home slot is not between the hole
     * and it (cyclically) fills the hole, leaving its own. */
    for (size_t j = (i + 1) & mask; m->vals[j]; j = (j + 1) & mask) {
        size_t home = (size_t)hash_mix(0, m->keys[j]) & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            i = j;
        }
    }
    m->vals[i] = 0;
    m->n--;
    return true;
}

void key_map_free(struct key_map *m)
{
    free(m->keys);
    free(m->vals);
    *m = (struct key_map){0};
}
