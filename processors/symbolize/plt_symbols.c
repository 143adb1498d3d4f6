// SPDX-License-Identifier: Apache-2.0
#include "plt_symbols.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The sections a PLT is read from. */
struct plt_sections {
    Elf_Scn *relocations, *plt, *plt_sec;
    GElf_Shdr relocations_header, plt_header, plt_sec_header;
};

static void find_sections(Elf *elf, struct plt_sections *s)
{
    size_t names;
    if (elf_getshdrstrndx(elf, &names) != 0)
        return;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, names, sh.sh_name) : NULL;
        if (!name || sh.sh_type == SHT_NOBITS)
            continue;
        if ((!strcmp(name, ".rela.plt") && sh.sh_type == SHT_RELA) ||
            (!strcmp(name, ".rel.plt") && sh.sh_type == SHT_REL)) {
            s->relocations = scn;
            s->relocations_header = sh;
        } else if (!strcmp(name, ".plt")) {
            s->plt = scn;
            s->plt_header = sh;
        } else if (!strcmp(name, ".plt.sec")) {
            s->plt_sec = scn;
            s->plt_sec_header = sh;
        }
    }
}

/* The size of the PLT's header and of each entry for elf's machine; false
 * for a machine whose PLT is not read. */
static bool plt_layout(Elf *elf, GElf_Addr *header, GElf_Addr *entry)
{
    GElf_Ehdr eh;
    if (!gelf_getehdr(elf, &eh))
        return false;
    *entry = 16;
    *header = eh.e_machine == EM_AARCH64 ? 32 : 16;
    return eh.e_machine == EM_X86_64 || eh.e_machine == EM_386 || eh.e_machine == EM_AARCH64;
}

/* The symbol index of relocation i of s, or 0. */
static size_t relocation_symbol(const struct plt_sections *s, Elf_Data *data, int i)
{
    if (s->relocations_header.sh_type == SHT_RELA) {
        GElf_Rela r;
        return gelf_getrela(data, i, &r) ? GELF_R_SYM(r.r_info) : 0;
    }
    GElf_Rel r;
    return gelf_getrel(data, i, &r) ? GELF_R_SYM(r.r_info) : 0;
}

/* The symbol table the relocations link to: its data, and its strings'
 * section into *strings. NULL when there is none. */
static Elf_Data *symbol_table(Elf *elf, const GElf_Shdr *relocations, size_t *strings)
{
    Elf_Scn *table = elf_getscn(elf, relocations->sh_link);
    GElf_Shdr th;
    if (!table || !gelf_getshdr(table, &th))
        return NULL;
    *strings = th.sh_link;
    return elf_getdata(table, NULL);
}

/* The name of symbol index sym of syms, or NULL. */
static const char *symbol_name(Elf *elf, Elf_Data *syms, size_t strings, size_t sym)
{
    GElf_Sym s;
    if (!sym || !gelf_getsym(syms, (int)sym, &s))
        return NULL;
    const char *name = elf_strptr(elf, strings, s.st_name);
    return name && *name ? name : NULL;
}

/* The PLT stubs of s: where the first is and how many there are (one a
 * relocation of the relocations' data, as many as the stubs' section
 * holds). */
static size_t stub_count(const struct plt_sections *s, const Elf_Data *data, GElf_Addr header,
                         GElf_Addr entry, GElf_Addr *first)
{
    const GElf_Shdr *stubs = s->plt_sec ? &s->plt_sec_header : &s->plt_header;
    GElf_Addr skip = s->plt_sec ? 0 : header;
    *first = stubs->sh_addr + skip;
    size_t relocations = data->d_size / s->relocations_header.sh_entsize;
    size_t room = stubs->sh_size > skip ? (stubs->sh_size - skip) / entry : 0;
    return relocations < room ? relocations : room;
}

void plt_symbols_read(Elf *elf, struct plt_symbols *p)
{
    *p = (struct plt_symbols){0};
    struct plt_sections s = {0};
    GElf_Addr header, entry, first;
    if (!elf || !plt_layout(elf, &header, &entry))
        return;
    find_sections(elf, &s);
    Elf_Data *data = s.relocations ? elf_getdata(s.relocations, NULL) : NULL;
    Elf_Type type = s.relocations_header.sh_type == SHT_RELA ? ELF_T_RELA : ELF_T_REL;
    if (!data || !s.plt || s.relocations_header.sh_entsize != gelf_fsize(elf, type, 1, EV_CURRENT))
        return;   /* none, or not the relocations of this class */
    size_t strings;
    Elf_Data *syms = symbol_table(elf, &s.relocations_header, &strings);
    size_t count = syms ? stub_count(&s, data, header, entry, &first) : 0, bytes = 0;
    const char **names = calloc(count ? count : 1, sizeof(*names));
    if (!names)
        abort();
    for (size_t i = 0; i < count; i++) {   /* an IRELATIVE slot's stub stays unnamed */
        names[i] = symbol_name(elf, syms, strings, relocation_symbol(&s, data, (int)i));
        p->n += names[i] != NULL;
        bytes += names[i] ? strlen(names[i]) + sizeof("@plt") : 0;
    }
    p->entries = p->n ? calloc(p->n, sizeof(*p->entries)) : NULL;
    char *at = p->names = p->n ? malloc(bytes) : NULL;
    if (p->n && (!p->entries || !p->names))
        abort();
    for (size_t i = 0, k = 0; i < count; i++)
        if (names[i]) {
            p->entries[k++] = (struct plt_entry){first + i * entry, entry, at};
            at += sprintf(at, "%s@plt", names[i]) + 1;
        }
    free(names);
}

void plt_symbols_free(struct plt_symbols *p)
{
    free(p->entries);
    free(p->names);
    *p = (struct plt_symbols){0};
}
