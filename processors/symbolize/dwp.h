// SPDX-License-Identifier: Apache-2.0
/*
 * DWARF package files (.dwp): the split units of a program built with
 * -gsplit-dwarf, packed into one file beside it by dwp or llvm-dwp, which
 * elfutils 0.188 does not read. A skeleton unit's split unit is found by
 * its id in the package's .debug_cu_index (version 5, or 2 for GNU's
 * DWARF 4 extension) and handed to elfutils as a Dwarf of its own, made of
 * the unit's slices of the package's sections (pointed to, not copied) and
 * of the skeleton file's .debug_addr from the skeleton's address base on.
 * elfutils cannot know that unit's base address (the skeleton's low_pc),
 * so its address range lists are read here.
 */
#ifndef PROFD_DWP_H
#define PROFD_DWP_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dwp;
struct dwp_unit;   /* a split unit read from a package, which owns it */

/* The package at path, or NULL when there is none or it is no package
 * (no readable unit index). */
struct dwp *dwp_open(const char *path);
/* The split unit of skeleton (a skeleton unit's DIE) in p: its DIE into
 * *split. NULL when p has no unit of the skeleton's id or cannot give it
 * whole. It lives until dwp_close. */
const struct dwp_unit *dwp_split_unit(struct dwp *p, Dwarf_Die *skeleton, Dwarf_Die *split);
/* dwarf_ranges for a DIE of u's unit (addresses as the binary has them):
 * the range after offset (0 for the first; *basep as the call before left
 * it) into [*low, *high); the offset to go on from, 0 after the last, -1
 * when the DIE's ranges cannot be read. */
ptrdiff_t dwp_ranges(const struct dwp_unit *u, Dwarf_Die *die, ptrdiff_t offset,
                     Dwarf_Addr *basep, Dwarf_Addr *low, Dwarf_Addr *high);
/* p's file as libelf maps it (ELF_C_READ_MMAP, never written). */
Elf *dwp_file(const struct dwp *p);
void dwp_close(struct dwp *p);

/* ---- the formats, on bytes (for tests and the fuzz driver) ---- */

/* A package's unit index (.debug_cu_index), checked to lie inside its bytes. */
struct dwp_index {
    const uint8_t *data;
    uint32_t version;   /* 2 (GNU) or 5 */
    uint32_t ncolumns, nunits, nslots;
};

/* Section kinds of an index's columns, as DWARF 5 numbers them (version 2's
 * numbers are mapped onto these). */
enum dwp_section {
    DWP_INFO = 1,
    DWP_ABBREV = 3,
    DWP_LINE = 4,
    DWP_LOCLISTS = 5,
    DWP_STR_OFFSETS = 6,
    DWP_MACRO = 7,
    DWP_RNGLISTS = 8,
    DWP_LOC = 9,        /* version 2's .debug_loc.dwo */
    DWP_SECTIONS = 10
};

/* Reads the index in data[0, len); false when it is not one or does not
 * fit. */
bool dwp_index_read(struct dwp_index *ix, const uint8_t *data, size_t len);
/* The row (from 1) of unit id in ix, 0 when it has none. */
uint32_t dwp_index_row(const struct dwp_index *ix, uint64_t id);
/* The offset and size of row's slice of the section of kind, false when
 * the row has none. */
bool dwp_index_slice(const struct dwp_index *ix, uint32_t row, enum dwp_section kind,
                     uint32_t *offset, uint32_t *size);

/* What a split unit's range lists are read from. */
struct dwp_range_lists {
    const uint8_t *lists;   /* DWARF 5: the unit's .debug_rnglists slice;
                             * 4: the skeleton file's .debug_ranges */
    size_t lists_len;
    const uint8_t *addrs;   /* the skeleton's .debug_addr from its base on */
    size_t addrs_len;
    Dwarf_Addr base;        /* the unit's base address: the skeleton's low_pc */
    uint8_t address_size;   /* 4 or 8 */
    uint8_t version;        /* 4 or 5 */
};

/* Where a walk of one range list is. */
struct dwp_range_walk {
    size_t at;           /* the next entry's offset in lists */
    Dwarf_Addr base;     /* as base address entries set it */
};

/* The next non-empty range of the list being walked into [*low, *high): 1,
 * 0 at its end, -1 when an entry is malformed or out of bounds. Start a
 * walk with at = the list's offset and base = l->base. */
int dwp_range_next(const struct dwp_range_lists *l, struct dwp_range_walk *w, Dwarf_Addr *low,
                   Dwarf_Addr *high);

#endif
