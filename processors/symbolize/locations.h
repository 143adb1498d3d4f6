// SPDX-License-Identifier: Apache-2.0
/*
 * Symbolizing the locations of one profile: every location with an address
 * and a mapping but no lines gets its functions, files, lines and inline
 * frames from the source its mapping has (a binary, the kernel's symbol
 * table, a JIT's perf map), or stays as it is with the reason counted.
 *
 * Locations are looked up in address order, so that neighbours in a
 * binary's tables come one after the other, and a location at the address
 * the one before it had is given that one's lines. A profile with many
 * locations is split, in address order, among several threads; a binary
 * whose locations run across the parts of several threads is looked up in
 * one of its lanes by each (elf_symbols.h). The result is the same
 * whatever the number of threads.
 */
#ifndef PROFD_SYMBOLIZE_LOCATIONS_H
#define PROFD_SYMBOLIZE_LOCATIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "demangle.h"
#include "profd/plugin.h"
#include "symbol_cache.h"

/* Why a location was or was not symbolized. */
enum symbolize_result {
    SYMBOLIZED, NO_BINARY, NO_SYMBOLS, OUTSIDE_SEGMENTS, KERNEL_UNKNOWN, SYMBOLIZE_RESULTS_
};

struct symbolize_settings {
    const struct profd_host *host;
    struct symbol_cache *cache;
    enum demangle_mode demangle;
    bool keep_addresses;
    size_t max_threads;           /* at least 1 */
};

/* How a profile was symbolized: on how many threads, and whether in the
 * huge-page arena (a large profile, where the allocator has one). */
struct symbolize_run {
    size_t threads;
    bool huge_pages;
};

/* Symbolizes the locations of p; pid is the record's process (for JIT maps
 * and its root), 0 when unknown. The cache must be held
 * (symbol_cache_begin). Adds to results[] by outcome. */
struct symbolize_run symbolize_locations(const struct symbolize_settings *s,
                                         struct profd_profile *p, int32_t pid,
                                         uint64_t results[SYMBOLIZE_RESULTS_]);

#endif
