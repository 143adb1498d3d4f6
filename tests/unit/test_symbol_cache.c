// SPDX-License-Identifier: Apache-2.0
/* What the symbolize module keeps between profiles (symbol_cache.c): JIT
 * maps counted with the open binaries within max_memory, the least
 * recently used dropped first, those a profile uses kept while it runs;
 * processes whose map is gone, and binaries neither open nor a recent
 * miss, forgotten. Compiled in from the module sources. */
#include "check.h"

#include <unistd.h>

#include "../../core/graph.h"

#include "../../lib/binary_lookup.c"
#include "../../lib/file_io.c"
#include "../../lib/grow.c"
#include "../../lib/key_map.c"
#include "../../lib/own_vdso.c"
#include "../../processors/symbolize/debug_search.c"
#include "../../processors/symbolize/debuginfod.c"
#include "../../processors/symbolize/demangle.c"
#include "../../processors/symbolize/dwp.c"
#include "../../processors/symbolize/elf_symbols.c"
#include "../../processors/symbolize/frame_cache.c"
#include "../../processors/symbolize/gopclntab.c"
#include "../../processors/symbolize/inflated_cache.c"
#include "../../processors/symbolize/kernel_symbols.c"
#include "../../processors/symbolize/perf_map.c"
#include "../../processors/symbolize/plt_symbols.c"
#include "../../processors/symbolize/scope_index.c"
#include "../../processors/symbolize/symbol_cache.c"

enum { MAP_LINES = 100 };

/* Writes dir/perf-<pid>.map with MAP_LINES functions. */
static void write_map(const char *dir, int pid)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/perf-%d.map", dir, pid);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    for (int i = 0; f && i < MAP_LINES; i++)
        fprintf(f, "%x 10 jit_function_%d_%d\n", 0x1000 + i * 0x10, pid, i);
    if (f)
        fclose(f);
}

/* One profile that looks up the maps of pids (0 ends the list); the
 * maps returned in got. */
static void profile_of(struct symbol_cache *c, const int *pids, const struct perf_map **got)
{
    symbol_cache_begin(c, NULL, NULL);
    for (size_t i = 0; pids[i]; i++)
        got[i] = symbol_cache_jit(c, pids[i]);
    symbol_cache_end(c);
}

TEST(jit_maps_are_kept_within_max_memory_least_recently_used_first)
{
    char dir[] = "/tmp/profd-test-jit-XXXXXX", path[256];
    CHECK(mkdtemp(dir) != NULL);
    for (int pid = 101; pid <= 103; pid++)
        write_map(dir, pid);
    snprintf(path, sizeof(path), "%s/perf-101.map", dir);
    struct perf_map *one = perf_map_load(path);
    CHECK(one != NULL);
    size_t map_bytes = one ? perf_map_footprint(one) : 0;
    perf_map_free(one);
    CHECK(map_bytes > MAP_LINES * 16);

    struct symbol_cache_settings s = {.max_memory = map_bytes * 5 / 2, .perf_map_dir = dir};
    char err[256];
    struct symbol_cache *c = symbol_cache_acquire("jit", &s, err, sizeof(err));
    CHECK(c != NULL);
    if (!c)
        return;
    const struct perf_map *got[3];

    /* All three in use at once: kept past max_memory while the profile
     * runs; two fit once it is done, the least recently used dropped. */
    profile_of(c, (const int[]){101, 102, 103, 0}, got);
    CHECK(got[0] && got[1] && got[2]);
    CHECK_STR(got[2] ? perf_map_find(got[2], 0x1010) : "", "jit_function_103_1");
    CHECK_INT(symbol_cache_open_bytes(c), 2 * map_bytes);
    CHECK_INT(c->njit_maps, 2);

    /* 101 read again: 102, now the least recently used, makes room. */
    const struct perf_map *kept_103 = got[2];
    profile_of(c, (const int[]){101, 0}, got);
    CHECK(got[0] != NULL);
    CHECK_INT(symbol_cache_open_bytes(c), 2 * map_bytes);
    profile_of(c, (const int[]){103, 0}, got);
    CHECK(got[0] == kept_103);   /* still kept, not read again */

    /* A process whose map is gone is forgotten, and its bytes with it. */
    snprintf(path, sizeof(path), "%s/perf-103.map", dir);
    unlink(path);
    profile_of(c, (const int[]){103, 0}, got);
    CHECK(got[0] == NULL);
    CHECK_INT(symbol_cache_open_bytes(c), map_bytes);
    CHECK_INT(c->njit_maps, 1);

    symbol_cache_release(c);
    for (int pid = 101; pid <= 102; pid++) {
        snprintf(path, sizeof(path), "%s/perf-%d.map", dir, pid);
        unlink(path);
    }
    rmdir(dir);
}

/* One profile that looks up the binaries filenames (NULL ends the list),
 * by path with no build-id; how many were found. */
static int binaries_of(struct symbol_cache *c, const char *const *filenames)
{
    symbol_cache_begin(c, &profd_host_services, NULL);
    int found = 0;
    for (size_t i = 0; filenames[i]; i++)
        found += symbol_cache_binary(c, filenames[i], "", &(struct process_mapping){0}) != NULL;
    symbol_cache_end(c);
    return found;
}

TEST(binaries_neither_open_nor_a_recent_miss_are_forgotten)
{
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    CHECK(len > 0);
    self[len > 0 ? len : 0] = 0;
    const char *missing = "/nonexistent/profd-test-binary";
    char err[256];

    /* Misses remembered for a minute; nothing stays open (no room). */
    struct symbol_cache_settings s = {.max_memory = 1, .use_local_path = true,
                                      .negative_ttl = 60000000000LL};
    struct symbol_cache *c = symbol_cache_acquire("remembers", &s, err, sizeof(err));
    CHECK(c != NULL);
    if (!c)
        return;
    CHECK_INT(binaries_of(c, (const char *const[]){self, missing, NULL}), 1);
    CHECK_INT(c->nbinaries, 1);   /* the miss; the binary was closed, and forgotten */
    CHECK_STR(c->nbinaries ? c->binaries[0].filename : "", missing);
    CHECK_INT(symbol_cache_open_bytes(c), 0);
    symbol_cache_release(c);

    /* Misses not remembered, room for the binary: it alone is kept. */
    s = (struct symbol_cache_settings){.max_memory = 1ULL << 40, .use_local_path = true};
    c = symbol_cache_acquire("forgets", &s, err, sizeof(err));
    CHECK(c != NULL);
    if (!c)
        return;
    CHECK_INT(binaries_of(c, (const char *const[]){self, missing, NULL}), 1);
    CHECK_INT(c->nbinaries, 1);
    CHECK_STR(c->nbinaries ? c->binaries[0].filename : "", self);
    CHECK(symbol_cache_open_bytes(c) > 0);
    symbol_cache_release(c);
}

RUN_TESTS()
