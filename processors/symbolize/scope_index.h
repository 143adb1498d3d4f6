// SPDX-License-Identifier: Apache-2.0
/*
 * Inline chains by address, fast: each compilation unit's functions and
 * inlined subroutines are read once (on the first address that falls in
 * the unit) into sorted ranges with their names and call sites resolved;
 * a lookup is then a binary search over functions and a scan of the one
 * function's inlined ranges, instead of a walk of the unit's DIE tree.
 * The unit of an address is found through .debug_aranges, else (clang and
 * rustc write none) from every unit's own ranges, read once.
 */
#ifndef PROFD_SCOPE_INDEX_H
#define PROFD_SCOPE_INDEX_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>

#include "elf_symbols.h"

struct scope_index;

struct binary_lookup;

/* The index of mod's DWARF; a split unit whose .dwo file elfutils does not
 * find is read from a DWARF package beside the binary or its debug file,
 * or in one of lookup's directories (lookup may be NULL; it must outlive
 * the index). */
struct scope_index *scope_index_new(Dwfl_Module *mod, const struct binary_lookup *lookup);
/* The frames at module address addr, innermost first (at most max), with
 * the innermost line from the line table and each caller's line from the
 * call site of the frame inside it. 0 when no DWARF function holds addr. */
size_t scope_index_frames(struct scope_index *x, Dwarf_Addr addr, struct elf_frame *out,
                          size_t max);
/* The line table's row at module address addr: its file (*dir the
 * compilation directory when the file is relative, else ""), line and
 * column. False when no unit's line table has addr (*file and *dir then
 * untouched, *line and *column undefined). */
bool scope_index_line(struct scope_index *x, Dwarf_Addr addr, const char **file,
                      const char **dir, int *line, int *column);
/* How many bytes of .debug_info the units the index has read so far take. */
size_t scope_index_unit_bytes(const struct scope_index *x);
/* An estimate of the memory the index holds, its split units' files
 * aside (scope_index_split_files). */
size_t scope_index_footprint(const struct scope_index *x);

/* A file split units were read from: a .dwo file or a DWARF package. */
struct split_file {
    uint64_t id;   /* its device and inode mixed: the same file opened by two lanes is one */
    size_t size;
};
/* The files x has read split units from, *n of them, each once. */
const struct split_file *scope_index_split_files(const struct scope_index *x, size_t *n);
/* The bytes of those files together. */
size_t scope_index_split_bytes(const struct scope_index *x);
/* The DWARF package split units are read from (dwp_file), NULL when none
 * is open. */
Elf *scope_index_package_file(const struct scope_index *x);
/* Why split units were not read, once one was looked for: a file found
 * where a DWARF package is looked for that is none (no unit index read
 * from it), else the first split unit found neither in its .dwo file nor
 * in a package; NULL when every one looked for was found. */
const char *scope_index_problem(const struct scope_index *x);
void scope_index_free(struct scope_index *x);

#endif
