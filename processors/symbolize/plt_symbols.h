// SPDX-License-Identifier: Apache-2.0
/*
 * Names for a binary's PLT entries, the stubs through which calls into
 * shared libraries jump, which no symbol table names: "<function>@plt",
 * as perf and objdump name them. One entry a jump-slot relocation, in the
 * relocations' order, in .plt.sec when the binary has one (x86-64 with
 * IBT), else in .plt after its header: x86-64, i386 and arm64. And on
 * x86-64 the entries of .plt.got, which jump through a GOT entry that
 * .rela.dyn names (functions whose address the binary takes too, such as
 * free in many programs): each after the symbol of that relocation.
 */
#ifndef PROFD_PLT_SYMBOLS_H
#define PROFD_PLT_SYMBOLS_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>

struct plt_entry {
    GElf_Addr addr, size;   /* ELF addresses */
    const char *name;       /* "<function>@plt", in the table's names */
};

struct plt_symbols {
    struct plt_entry *entries;
    size_t n;
    char *names;
    /* Where .plt, .plt.sec and .plt.got lie (ELF addresses), entries named
     * or not: code no DWARF describes. None for a relocatable file, whose
     * sections have no addresses of their own. */
    struct plt_section {
        GElf_Addr low, high;
    } sections[3];
    size_t nsections;
};

/* Reads elf's PLT entries and sections into p (no entries when it has
 * none or its machine is another); free them with plt_symbols_free.
 * Reads section headers and relocations only, checked against the file's
 * bounds. */
void plt_symbols_read(Elf *elf, struct plt_symbols *p);
void plt_symbols_free(struct plt_symbols *p);

/* Whether ELF address addr lies in one of p's PLT sections. */
bool plt_symbols_holds(const struct plt_symbols *p, GElf_Addr addr);

#endif
