// SPDX-License-Identifier: Apache-2.0
/*
 * The frames found at addresses of one binary (one lane of it), kept so
 * that an address met again, in a later profile, is answered without a
 * lookup. A table of two-way sets by address, doubled as it fills up to
 * the bytes it may hold; at that size a new address takes the least
 * recently used entry of its set. Inline chains longer than
 * FRAME_CACHE_FRAMES are not kept. The frames' strings are the binary's:
 * a cache lives and dies with its binary.
 */
#ifndef PROFD_SYMBOLIZE_FRAME_CACHE_H
#define PROFD_SYMBOLIZE_FRAME_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf_symbols.h"

#define FRAME_CACHE_FRAMES 4

struct frame_cache;

/* A cache that grows to `bytes` bytes at most; NULL when that is less
 * than its smallest table. */
struct frame_cache *frame_cache_new(size_t bytes);
/* True when the frames at vaddr are kept and fit in max: copied to out,
 * their count (0: none there) in *n. */
bool frame_cache_get(struct frame_cache *c, uint64_t vaddr, struct elf_frame *out, size_t max,
                     size_t *n);
/* Readies the memory vaddr's entry would be in, for a get soon after. */
void frame_cache_prefetch(const struct frame_cache *c, uint64_t vaddr);
/* Keeps the n frames at vaddr (nothing when n > FRAME_CACHE_FRAMES). */
void frame_cache_put(struct frame_cache *c, uint64_t vaddr, const struct elf_frame *frames,
                     size_t n);
/* How many addresses a cache of at most `bytes` bytes holds at its size
 * (0: it would not be made). */
size_t frame_cache_room_of(size_t bytes);
/* The bytes the cache holds. */
size_t frame_cache_footprint(const struct frame_cache *c);
void frame_cache_free(struct frame_cache *c);

#endif
