// SPDX-License-Identifier: Apache-2.0
/*
 * Function names, files and lines from a Go binary's .gopclntab, which Go
 * keeps even in binaries stripped of symbols and DWARF (-ldflags=-s -w).
 * Layouts of Go 1.16 and later (header magics 0xfffffffa, 0xfffffff0,
 * 0xfffffff1); little-endian. Inlined calls come from each function's
 * inline tree (Go 1.18 and later), found through the runtime's module data
 * in the binary's data; without it an address gets, as Go's debug/gosym
 * gives it, the function that holds it and the position of its innermost
 * code.
 */
#ifndef PROFD_SYMBOLIZE_GOPCLNTAB_H
#define PROFD_SYMBOLIZE_GOPCLNTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct go_pclntab;

/* A loaded section of the binary: its address and bytes. */
struct go_section {
    uint64_t addr;
    const uint8_t *data;
    size_t len;
};

/* One frame at an address, innermost first; strings live in the table. */
struct go_frame {
    const char *function, *file;
    int64_t line;
};

/* Reads the table in data[len], the .gopclntab section at address addr
 * (its bytes, and those of sections, must outlive it); text is the .text
 * section's address, used when the table does not hold its own; sections
 * (the binary's data, may be empty) are searched for the module data that
 * locates inline trees. NULL when data is not a table of a known layout. */
struct go_pclntab *go_pclntab_open(const uint8_t *data, size_t len, uint64_t addr, uint64_t text,
                                   const struct go_section *sections, size_t nsections);
/* The frames at ELF address addr, innermost first, at most max: inlined
 * calls, then the function that holds addr. 0 when no function holds it;
 * a frame's file is "" and line 0 when the table has none. */
size_t go_pclntab_frames(const struct go_pclntab *t, uint64_t addr, struct go_frame *out,
                         size_t max);
void go_pclntab_free(struct go_pclntab *t);

#endif
