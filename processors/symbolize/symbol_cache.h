// SPDX-License-Identifier: Apache-2.0
/*
 * What the symbolize processor keeps between profiles: the binaries it
 * opened (least recently used closed first, within max_memory; a binary
 * not found is not looked for again before negative_ttl), kernel symbol
 * tables by build-id, JITs' perf maps by pid, the debuginfod client and the
 * directory of inflated copies of compressed debug files.
 *
 * The symbolize instances of one id (one per pipeline that lists it) share
 * one cache, so a binary is opened once whatever the number of pipelines.
 * A profile is symbolized under the cache's lock, between
 * symbol_cache_begin and symbol_cache_end; what it looks up stays open
 * until then, even past max_memory, and the cache is brought back within
 * max_memory when it ends.
 */
#ifndef PROFD_SYMBOLIZE_SYMBOL_CACHE_H
#define PROFD_SYMBOLIZE_SYMBOL_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf_symbols.h"
#include "inflated_cache.h"
#include "kernel_symbols.h"
#include "perf_map.h"
#include "profd/plugin.h"

/* Where binaries and symbols come from and how many are kept (copied by
 * symbol_cache_acquire). */
struct symbol_cache_settings {
    const char *const *debug_directories;
    size_t ndebug_directories;
    const char *const *remap_from, *const *remap_to;
    size_t nremaps;
    bool use_local_path, proc_root;
    uint64_t max_memory;
    int64_t negative_ttl;
    const char *kallsyms, *kernel_notes, *system_map, *perf_map_dir;
    const char *vmlinux;   /* a kernel image with symbols (and DWARF); NULL: none */
    const char *const *debuginfod_urls;
    size_t ndebuginfod_urls;
    int64_t debuginfod_timeout_s;
    int64_t debuginfod_wait;      /* ns a profile waits for files being fetched, in all */
    size_t debuginfod_fetches;    /* files fetched at once */
    const char *debuginfod_cache;
    const char *inflated_cache;   /* "~/" is $HOME; NULL or "": off */
    uint64_t inflated_cache_size;
};

struct symbol_cache;

/* The cache of the instances called id: made from settings on the first
 * call, shared (and settings ignored: one id, one config) on later ones.
 * NULL with err filled when the debuginfod client cannot be made. */
struct symbol_cache *symbol_cache_acquire(const char *id, const struct symbol_cache_settings *s,
                                          char *err, size_t errlen);
/* Drops one instance's hold; the last one frees the cache. */
void symbol_cache_release(struct symbol_cache *c);

/* Takes the lock for one profile, whose messages go to self's log. */
void symbol_cache_begin(struct symbol_cache *c, const struct profd_host *h,
                        struct profd_component *self);
void symbol_cache_end(struct symbol_cache *c);

/* Where a process mapped a binary: its pid (0: unknown) and the memory
 * the mapping spans. */
struct process_mapping {
    int32_t pid;
    uint64_t start, limit;
};

/* The binary filename with build_id ("" when unknown; never another build)
 * that the process mapped as m says, or NULL. */
struct elf_binary *symbol_cache_binary(struct symbol_cache *c, const char *filename,
                                       const char *build_id, const struct process_mapping *m);
/* The configured kernel image (vmlinux) when it is the kernel with that
 * build-id ("" when unknown: any), or NULL. */
struct elf_binary *symbol_cache_vmlinux(struct symbol_cache *c, const char *build_id);
/* The symbol table of the kernel with that build-id, or NULL. */
struct kernel_symbols *symbol_cache_kernel(struct symbol_cache *c, const char *build_id);
/* The JIT perf map of pid (perf_map_dir/perf-<pid>.map, read again when it
 * changed since the last profile), or NULL. Kept, and counted, with the
 * open binaries within max_memory. */
const struct perf_map *symbol_cache_jit(struct symbol_cache *c, int32_t pid);
/* The memory the open binaries and JIT maps hold, as counted against
 * max_memory: the binaries' files, lanes, indexes and results, the maps'
 * entries and names (as of the end of the last profile). */
uint64_t symbol_cache_open_bytes(struct symbol_cache *c);
/* How inflated copies of debug files were found or made (all 0 when
 * off), and why the last one that failed did ("" when none did). */
struct inflated_cache_stats symbol_cache_inflated(struct symbol_cache *c, char *last_error,
                                                  size_t len);

#endif
