// SPDX-License-Identifier: Apache-2.0
/*
 * Finding, on this host, the binary a profile or a recording names by path
 * and GNU build-id. Compiled into the modules that need it (perf_data's
 * unwinder, the symbolize processor).
 *
 * Candidates, in order: the recorded path (only when its build-id matches,
 * or when none was recorded), the path with each remap applied (same
 * check), then in each directory: .build-id/xx/rest, .build-id/xx/rest.debug
 * (debug directories), .build-id/xx/rest/elf (perf's build-id cache), and
 * the file name alone. A file of another build never stands in for it.
 * The "[vdso]" is this process's own when its build-id is the recorded one
 * (or none was recorded) and recorded paths are tried, else perf's cached
 * copy ([vdso]/<build-id>/vdso) or a file by build-id in a directory.
 */
#ifndef PROFD_BINARY_LOOKUP_H
#define PROFD_BINARY_LOOKUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct binary_lookup {
    char **dirs;                 /* a leading ~/ expanded to $HOME */
    size_t ndirs;
    char **remap_from, **remap_to;
    size_t nremaps;
    bool recorded_path;          /* try the recorded path itself */
};

/* Fills l from dirs[ndirs] and remap pairs (all copied). */
void binary_lookup_init(struct binary_lookup *l, const char *const *dirs, size_t ndirs,
                        const char *const *remap_from, const char *const *remap_to,
                        size_t nremaps, bool recorded_path);
/* The path of a local copy of the file recorded (its " (deleted)"
 * dropped) with build_id (lowercase hex, "" when unknown), malloc'd, or
 * NULL. */
char *binary_lookup_find(const struct binary_lookup *l, const char *recorded, const char *build_id);
/* Lowercase hex of n build-id bytes (at most 20 read); trailing zero
 * 4-byte groups of a 20-byte slot are dropped, as perf.data stores short
 * ids. */
void binary_lookup_hex(const unsigned char *id, size_t n, char out[41]);
/* The path of the separate debug file of the binary with build-id id (raw
 * bytes) in the directories (.build-id/xx/rest.debug), malloc'd, or NULL.
 * *refused is set to the first file passed over there for not being an
 * ELF file of that build-id (malloc'd; NULL: none). */
char *binary_lookup_debug_file(const struct binary_lookup *l, const unsigned char *id, size_t len,
                               char **refused);
/* What perf names a process's anonymous memory, where JITs put code: the
 * file a JIT lists its functions in for perf, /tmp/perf-<pid>.map. Into
 * name[size]. */
void binary_lookup_jit_map_name(int32_t pid, char *name, size_t size);
/* True when filename is such a name, its pid into *pid. */
bool binary_lookup_is_jit_map(const char *filename, int32_t *pid);
/* The length of filename without the " (deleted)" that /proc/<pid>/maps
 * adds to the path of a file deleted or replaced since it was mapped. */
size_t binary_lookup_path_length(const char *filename);
/* True when path is an ELF file and, if want is not empty, its GNU
 * build-id is want (trailing zero 4-byte groups of a 20-byte id ignored). */
bool binary_lookup_is_elf(const char *path, const char *want);
void binary_lookup_free(struct binary_lookup *l);

#endif
