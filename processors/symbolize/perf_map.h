// SPDX-License-Identifier: Apache-2.0
/*
 * JIT symbol maps in perf's format, /tmp/perf-<pid>.map: one "START SIZE
 * name" line per function (hex start and size), written by JITs (V8, the
 * JVM with perf-map-agent, LuaJIT, ...) for code in anonymous mappings.
 */
#ifndef PROFD_PERF_MAP_H
#define PROFD_PERF_MAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct perf_map;

/* Reads path; NULL when it cannot be read or holds no entry. */
struct perf_map *perf_map_load(const char *path);
/* The function whose [start, start + size) holds addr, or NULL. Of
 * overlapping entries (code moved and rewritten) the last one written wins. */
const char *perf_map_find(const struct perf_map *m, uint64_t addr);
/* The file's size and modification time when read: a changed file is
 * read again. */
void perf_map_stamp(const struct perf_map *m, off_t *size, struct timespec *mtime);
/* The memory m holds: itself, its entries and their names. */
size_t perf_map_footprint(const struct perf_map *m);
void perf_map_free(struct perf_map *m);

#endif
