// SPDX-License-Identifier: Apache-2.0
/* A bump allocator: many allocations, one free. Not thread-safe. */
#ifndef PROFD_ARENA_H
#define PROFD_ARENA_H

#include <stddef.h>

struct profd_arena;

/* Creates an empty arena; first_chunk is a size hint for the first block. */
struct profd_arena *profd_arena_create(size_t first_chunk);
/* Frees the arena and everything allocated from it. Accepts NULL. */
void profd_arena_destroy(struct profd_arena *a);
/* Frees everything allocated from a, keeping its newest (largest) block
 * for what comes next. */
void profd_arena_reset(struct profd_arena *a);
/* Returns n bytes aligned to 16, uninitialized. Aborts on exhaustion. */
void *profd_arena_alloc(struct profd_arena *a, size_t n);
/* Like profd_arena_alloc, zero-filled. */
void *profd_arena_zalloc(struct profd_arena *a, size_t n);
/* Returns a copy of old (old_n bytes) in a new block of new_n bytes. */
void *profd_arena_realloc(struct profd_arena *a, void *old, size_t old_n, size_t new_n);
/* Moves everything allocated from other into a (which goes on allocating
 * where it was) and frees other: what other handed out now lives as long
 * as a. */
void profd_arena_adopt(struct profd_arena *a, struct profd_arena *other);
/* Total bytes the arena holds from the system. */
size_t profd_arena_footprint(const struct profd_arena *a);
/* Bytes handed out from the arena (aligned sizes), at most its footprint:
 * what its allocations take, where the footprint also counts the unused
 * rest of each block. */
size_t profd_arena_used(const struct profd_arena *a);

#endif
