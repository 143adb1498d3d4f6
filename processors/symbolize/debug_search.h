// SPDX-License-Identifier: Apache-2.0
/*
 * How a binary's separate debug file is found, and the dwz file that file
 * (or the binary, when it has its DWARF) shares DWARF with: elfutils asks
 * for both through its find_debuginfo hook, the dwz file with the file
 * naming it as file_name and the dwz file's name (its .gnu_debugaltlink)
 * as debuglink_file. Either is looked for by its build-id in the lookup's
 * directories, a dwz file then at the path it is named by (relative to
 * the file naming it), then from the fetch function, and last by name
 * where elfutils and gdb look by default (beside the binary, in its .debug
 * directory, under each debug directory at the binary's path; then the
 * same for the path a symbolic link to the binary points to), a file
 * found by name checked by its build-id, or for a binary without one by
 * the CRC its debuglink gives.
 *
 * elfutils' own search of the debug path is not used: it ends by asking
 * the debuginfod servers itself, on the calling thread and for as long as
 * a download takes, and even with no server configured it loads its
 * debuginfod client for that (libdebuginfod and libcurl's dependencies,
 * 7 MB resident). Servers are the fetch function's.
 */
#ifndef PROFD_SYMBOLIZE_DEBUG_SEARCH_H
#define PROFD_SYMBOLIZE_DEBUG_SEARCH_H

#include <elfutils/libdwfl.h>

#include "elf_symbols.h"

/* One binary's search, the userdata of its module. */
struct debug_search {
    const char *binary;                  /* the binary's path */
    const struct elf_sources *sources;
    /* What the fetch function gave for its debug file and that file's dwz
     * file. */
    enum { DEBUG_NOT_FETCHED, DEBUG_FETCHED, DEBUG_PENDING } fetch;
    char waiting_for[41];   /* the build-id of the file still on its way (PENDING) */
    bool dwz_found;         /* a dwz file was handed over (elfutils made it the DWARF's alt) */
    char *refused_file;     /* one at its build-id place not an ELF of it (malloc'd), or NULL */
};

/* elfutils' find_debuginfo hook (Dwfl_Callbacks) for a module whose
 * userdata is a struct debug_search (NULL: elfutils' search alone). The
 * descriptor may be an inflated copy's (sources' inflated cache); the
 * file's name stays the found one either way. */
int debug_search_find(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                      const char *file_name, const char *debuglink_file,
                      GElf_Word debuglink_crc, char **debuginfo_file_name);

/* fd, or its inflated copy when it has compressed sections and sources
 * keep such copies. */
int debug_search_inflated(const struct elf_sources *sources, int fd);

#endif
