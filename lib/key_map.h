// SPDX-License-Identifier: Apache-2.0
/* A map from 64-bit keys to 32-bit values (open addressing, grown as it
 * fills), for tables keyed by ids such as a recording's pool keys. */
#ifndef PROFD_LIB_KEY_MAP_H
#define PROFD_LIB_KEY_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Zero-initialized is empty. */
struct key_map {
    uint64_t *keys;
    uint32_t *vals;   /* value + 1; 0 marks an empty slot */
    size_t cap, n;
};

/* Sets key to val (replacing what it had); aborts when memory runs out. */
void key_map_put(struct key_map *m, uint64_t key, uint32_t val);
/* Whether key is there; its value into *val when it is. */
bool key_map_get(const struct key_map *m, uint64_t key, uint32_t *val);
/* Removes key (what follows it in its run moved back, so no slot is
 * marked gone); false when it was not there. */
bool key_map_remove(struct key_map *m, uint64_t key);
/* Frees the map's memory and leaves it empty. */
void key_map_free(struct key_map *m);

#endif
