// SPDX-License-Identifier: Apache-2.0
#include "plt_symbols.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/grow.h"

/* The sections a PLT is read from: the jump slots' relocations and the
 * stubs that jump through them (.plt, or .plt.sec with IBT); the stubs
 * that jump through a GOT entry of .rela.dyn's (.plt.got: functions whose
 * address is taken too, such as free or __cxa_finalize). */
struct plt_sections {
    Elf_Scn *relocations, *plt, *plt_sec, *got_relocations, *plt_got;
    GElf_Shdr relocations_header, plt_header, plt_sec_header, got_relocations_header,
        plt_got_header;
};

/* The stubs found, before they are named "<name>@plt". */
struct stubs {
    struct stub {
        GElf_Addr addr, size;
        const char *name;
    } *items;
    size_t n, cap;
};

static void stubs_add(struct stubs *v, GElf_Addr addr, GElf_Addr size, const char *name)
{
    v->items = grow_array(v->items, &v->cap, v->n + 1, sizeof(*v->items));
    v->items[v->n++] = (struct stub){addr, size, name};
}

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
        } else if (!strcmp(name, ".rela.dyn") && sh.sh_type == SHT_RELA) {
            s->got_relocations = scn;
            s->got_relocations_header = sh;
        } else if (!strcmp(name, ".plt.got")) {
            s->plt_got = scn;
            s->plt_got_header = sh;
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

/* The symbol index of relocation i of data (relocations with addends when
 * rela), or 0; the address it relocates into *offset. */
static size_t relocation_symbol(bool rela, Elf_Data *data, int i, GElf_Addr *offset)
{
    if (rela) {
        GElf_Rela r;
        if (!gelf_getrela(data, i, &r))
            return 0;
        *offset = r.r_offset;
        return GELF_R_SYM(r.r_info);
    }
    GElf_Rel r;
    if (!gelf_getrel(data, i, &r))
        return 0;
    *offset = r.r_offset;
    return GELF_R_SYM(r.r_info);
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

/* Adds to stubs the jump-slot stubs of s, one a relocation, named after
 * the relocation's symbol: an IRELATIVE slot's stub stays out, unnamed. */
static void add_slot_stubs(Elf *elf, const struct plt_sections *s, GElf_Addr header,
                           GElf_Addr entry, struct stubs *stubs)
{
    Elf_Data *data = s->relocations ? elf_getdata(s->relocations, NULL) : NULL;
    bool rela = s->relocations_header.sh_type == SHT_RELA;
    Elf_Type type = rela ? ELF_T_RELA : ELF_T_REL;
    size_t strings;
    Elf_Data *syms;
    if (!data || !s->plt ||
        s->relocations_header.sh_entsize != gelf_fsize(elf, type, 1, EV_CURRENT) ||
        !(syms = symbol_table(elf, &s->relocations_header, &strings)))
        return;   /* none, or not the relocations of this class */
    GElf_Addr first, offset;
    size_t count = stub_count(s, data, header, entry, &first);
    for (size_t i = 0; i < count; i++) {
        size_t sym = relocation_symbol(rela, data, (int)i, &offset);
        const char *name = symbol_name(elf, syms, strings, sym);
        if (name)
            stubs_add(stubs, first + i * entry, entry, name);
    }
}

/* The GOT entry an x86-64 .plt.got stub of size bytes at addr jumps
 * through (`jmp *disp32(%rip)`, after an endbr64 and a bnd prefix with
 * IBT), or 0. */
static GElf_Addr got_entry_of(const uint8_t *code, size_t size, GElf_Addr addr)
{
    for (size_t j = 0; j + 6 <= size; j++)
        if (code[j] == 0xff && code[j + 1] == 0x25) {
            int32_t disp;
            memcpy(&disp, code + j + 2, 4);
            return addr + j + 6 + (GElf_Addr)(int64_t)disp;
        }
    return 0;
}

/* A .plt.got stub's place in the stubs, by the GOT entry it jumps through. */
struct through {
    GElf_Addr got_entry;
    size_t stub;
};

static int by_got_entry(const void *a, const void *b)
{
    GElf_Addr x = ((const struct through *)a)->got_entry, y = ((const struct through *)b)->got_entry;
    return x < y ? -1 : x > y;
}

/* Adds to stubs the x86-64 .plt.got stubs of s, named after the symbol
 * .rela.dyn relocates the GOT entry each jumps through with; a stub
 * through an entry no symbol's relocation names stays out, unnamed. */
static void add_got_stubs(Elf *elf, const struct plt_sections *s, struct stubs *stubs)
{
    const GElf_Shdr *sh = &s->plt_got_header;
    GElf_Ehdr eh;
    Elf_Data *code = s->plt_got && sh->sh_type == SHT_PROGBITS ? elf_getdata(s->plt_got, NULL)
                                                                 : NULL;
    Elf_Data *data = s->got_relocations ? elf_getdata(s->got_relocations, NULL) : NULL;
    GElf_Addr entry = sh->sh_entsize ? sh->sh_entsize : 8;
    size_t strings, n = 0;
    Elf_Data *syms;
    if (!code || !data || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
        code->d_size != sh->sh_size || entry < 6 ||
        s->got_relocations_header.sh_entsize != gelf_fsize(elf, ELF_T_RELA, 1, EV_CURRENT) ||
        !(syms = symbol_table(elf, &s->got_relocations_header, &strings)))
        return;
    struct through *through = calloc(sh->sh_size / entry + 1, sizeof(*through));
    const char **names = calloc(sh->sh_size / entry + 1, sizeof(*names));
    if (!through || !names)
        abort();
    for (GElf_Addr at = 0; at + entry <= sh->sh_size; at += entry, n++)
        through[n] = (struct through){
            got_entry_of((const uint8_t *)code->d_buf + at, entry, sh->sh_addr + at), n};
    qsort(through, n, sizeof(*through), by_got_entry);
    size_t relocations = data->d_size / s->got_relocations_header.sh_entsize;
    for (size_t r = 0; r < relocations; r++) {
        struct through key = {0, 0};
        const char *name = symbol_name(elf, syms, strings,
                                       relocation_symbol(true, data, (int)r, &key.got_entry));
        struct through *hit = name && key.got_entry
                                  ? bsearch(&key, through, n, sizeof(*through), by_got_entry)
                                  : NULL;
        for (; hit && hit > through && hit[-1].got_entry == key.got_entry; hit--)
            ;   /* the first of the stubs through that entry */
        for (; hit && hit < through + n && hit->got_entry == key.got_entry; hit++)
            names[hit->stub] = names[hit->stub] ? names[hit->stub] : name;
    }
    for (size_t k = 0; k < n; k++)
        if (names[k])
            stubs_add(stubs, sh->sh_addr + k * entry, entry, names[k]);
    free(through);
    free(names);
}

void plt_symbols_read(Elf *elf, struct plt_symbols *p)
{
    *p = (struct plt_symbols){0};
    struct plt_sections s = {0};
    struct stubs stubs = {0};
    GElf_Addr header, entry;
    GElf_Ehdr eh;
    if (!elf || !gelf_getehdr(elf, &eh))
        return;
    find_sections(elf, &s);
    const GElf_Shdr *code[] = {s.plt ? &s.plt_header : NULL, s.plt_sec ? &s.plt_sec_header : NULL,
                               s.plt_got ? &s.plt_got_header : NULL};
    for (size_t i = 0; i < sizeof(code) / sizeof(*code) && eh.e_type != ET_REL; i++)   /* loaded */
        if (code[i] && (code[i]->sh_flags & SHF_ALLOC))
            p->sections[p->nsections++] =
                (struct plt_section){code[i]->sh_addr, code[i]->sh_addr + code[i]->sh_size};
    if (!plt_layout(elf, &header, &entry))
        return;
    add_slot_stubs(elf, &s, header, entry, &stubs);
    add_got_stubs(elf, &s, &stubs);
    size_t bytes = 0;
    for (size_t i = 0; i < stubs.n; i++)
        bytes += strlen(stubs.items[i].name) + sizeof("@plt");
    p->n = stubs.n;
    p->entries = p->n ? calloc(p->n, sizeof(*p->entries)) : NULL;
    char *at = p->names = p->n ? malloc(bytes) : NULL;
    if (p->n && (!p->entries || !p->names))
        abort();
    for (size_t i = 0; i < p->n; i++) {
        p->entries[i] = (struct plt_entry){stubs.items[i].addr, stubs.items[i].size, at};
        at += sprintf(at, "%s@plt", stubs.items[i].name) + 1;
    }
    free(stubs.items);
}

bool plt_symbols_holds(const struct plt_symbols *p, GElf_Addr addr)
{
    for (size_t i = 0; i < p->nsections; i++)
        if (addr >= p->sections[i].low && addr < p->sections[i].high)
            return true;
    return false;
}

void plt_symbols_free(struct plt_symbols *p)
{
    free(p->entries);
    free(p->names);
    *p = (struct plt_symbols){0};
}
