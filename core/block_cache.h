// SPDX-License-Identifier: Apache-2.0
/*
 * Large blocks of memory (arena chunks of a profile's model) kept a while
 * after they are freed, for the next profile to use: a block malloc'd
 * afresh is mapped by the kernel page by page, each page faulted in and
 * zeroed, and unmapped again when freed, which for a large profile costs
 * as much as decoding it. Blocks are kept up to BLOCK_CACHE_MAX bytes in
 * all, and given back to the system once none was asked for in
 * BLOCK_CACHE_IDLE_NS (profd_block_trim, which the daemon calls every
 * second), so an idle daemon holds none. Thread-safe.
 */
#ifndef PROFD_BLOCK_CACHE_H
#define PROFD_BLOCK_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* Blocks smaller than this are malloc'd and freed as usual. */
#define BLOCK_CACHE_MIN (256u << 10)
#define BLOCK_CACHE_MAX (64u << 20)
#define BLOCK_CACHE_IDLE_NS 1000000000
/* Blocks of this size and more are mapped whole huge pages at a time
 * (where transparent huge pages are to be had on request, as Debian's
 * kernels have them): a large profile's model is faulted in and reached
 * through the TLB 2 MiB at a time. Arrays of elements up to 1 MiB. */
#define BLOCK_CACHE_HUGE_MIN (3u << 20)

/* Under AddressSanitizer nothing is kept: a block used after it was given
 * back must be reported, not quietly handed to the next profile. */
#if defined(__SANITIZE_ADDRESS__)
#define BLOCK_CACHE_KEEPS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BLOCK_CACHE_KEEPS 0
#endif
#endif
#ifndef BLOCK_CACHE_KEEPS
#define BLOCK_CACHE_KEEPS 1
#endif

/* A block of at least size bytes, its size into *got: a kept one of at
 * most twice size when there is one, else a new one. Aborts when memory
 * runs out. */
void *profd_block_get(size_t size, size_t *got);

/* Gives back block p of size bytes (what profd_block_get said): kept when
 * it is large enough and there is room, else freed. */
void profd_block_put(void *p, size_t size);

/* profd_grow for an array whose memory comes from blocks: grows *items (of
 * elem bytes each, *cap of them; NULL and 0 at first) so that index
 * need - 1 fits, copying it into a larger block. */
void profd_block_grow(void *items_ptr, size_t *cap, size_t need, size_t elem);

/* Gives back the block of an array profd_block_grow made (accepts NULL). */
void profd_block_release(void *items, size_t cap, size_t elem);

/* Frees the kept blocks when none was asked for in the last max_idle_ns
 * (all of them with 0). */
void profd_block_trim(int64_t max_idle_ns);

#endif
