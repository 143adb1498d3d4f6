// SPDX-License-Identifier: Apache-2.0
/*
 * Function names, files and lines from a Go binary's .gopclntab, which Go
 * keeps even in binaries stripped of symbols and DWARF (-ldflags=-s -w).
 * Layouts of Go 1.16 and later (header magics 0xfffffffa, 0xfffffff0,
 * 0xfffffff1); little-endian. Like Go's own debug/gosym, an address gets
 * the function that holds it and the file and line of its innermost
 * (possibly inlined) code: the inline tree is not read.
 */
#ifndef PROFD_SYMBOLIZE_GOPCLNTAB_H
#define PROFD_SYMBOLIZE_GOPCLNTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct go_pclntab;

/* Reads the table in data[len] (the section's bytes, which must outlive
 * it); text is the .text section's address, used when the table does not
 * hold its own. NULL when data is not a table of a known layout. */
struct go_pclntab *go_pclntab_open(const uint8_t *data, size_t len, uint64_t text);
/* The function, file and line holding ELF address addr. False when no
 * function holds it; *file is "" and *line 0 when the table has none. */
bool go_pclntab_lookup(const struct go_pclntab *t, uint64_t addr, const char **function,
                       const char **file, int64_t *line);
void go_pclntab_free(struct go_pclntab *t);

#endif
