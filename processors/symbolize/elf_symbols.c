// SPDX-License-Identifier: Apache-2.0
#include "elf_symbols.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct elf_binary {
    Dwfl *dwfl;
    Dwfl_Module *mod;
    Dwfl_Callbacks callbacks;
    char *debug_path;
    GElf_Addr bias;          /* added to an ELF address to get the module's */
    size_t footprint;
};

struct elf_binary *elf_binary_open(const char *path, const char *debug_path, char *err,
                                   size_t errlen)
{
    struct elf_binary *b = calloc(1, sizeof(*b));
    if (!b || !(b->debug_path = strdup(debug_path ? debug_path : "")))
        abort();
    b->callbacks = (Dwfl_Callbacks){.find_debuginfo = dwfl_standard_find_debuginfo,
                                    .section_address = dwfl_offline_section_address,
                                    .debuginfo_path = &b->debug_path};
    b->dwfl = dwfl_begin(&b->callbacks);
    if (b->dwfl) {
        dwfl_report_begin(b->dwfl);
        b->mod = dwfl_report_elf(b->dwfl, "binary", path, -1, 0, false);
        dwfl_report_end(b->dwfl, NULL, NULL);
    }
    Elf *elf = b->mod ? dwfl_module_getelf(b->mod, &b->bias) : NULL;
    if (!elf) {
        snprintf(err, errlen, "%s: %s", path, dwfl_errmsg(-1));
        elf_binary_close(b);
        return NULL;
    }
    struct stat st;
    b->footprint = stat(path, &st) == 0 ? (size_t)st.st_size : 0;
    return b;
}

int elf_binary_vaddr(const struct elf_binary *b, uint64_t off, uint64_t *vaddr)
{
    GElf_Addr bias;
    Elf *elf = dwfl_module_getelf(b->mod, &bias);
    size_t n;
    if (!elf || elf_getphdrnum(elf, &n) != 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
            continue;
        if (off >= ph.p_offset && off - ph.p_offset < ph.p_filesz) {
            *vaddr = ph.p_vaddr + (off - ph.p_offset);
            return 1;
        }
    }
    return 0;
}

/* A DIE's name: its linkage (mangled) name when it has one, else its
 * name, following abstract origins and specifications. */
static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    const char *s = NULL;
    if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
        dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
        s = dwarf_formstring(&attr);
    if (!s && dwarf_attr_integrate(die, DW_AT_name, &attr))
        s = dwarf_formstring(&attr);
    return s;
}

/* Where an inlined subroutine was called from: file and line in its caller. */
static void call_site(Dwarf_Die *cu, Dwarf_Die *inlined, const char **file, int64_t *line)
{
    Dwarf_Attribute attr;
    Dwarf_Word v;
    Dwarf_Files *files;
    size_t nfiles;
    *file = "";
    *line = 0;
    if (dwarf_attr(inlined, DW_AT_call_file, &attr) && dwarf_formudata(&attr, &v) == 0 &&
        dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && v < nfiles) {
        const char *f = dwarf_filesrc(files, v, NULL, NULL);
        *file = f ? f : "";
    }
    if (dwarf_attr(inlined, DW_AT_call_line, &attr) && dwarf_formudata(&attr, &v) == 0)
        *line = (int64_t)v;
}

/* Frames from DWARF: the function scopes around addr, innermost first. */
static size_t dwarf_frames(struct elf_binary *b, Dwarf_Addr addr, struct elf_frame *out,
                           size_t max)
{
    Dwarf_Addr dwbias;
    Dwarf_Die *cu = dwfl_module_addrdie(b->mod, addr, &dwbias);
    if (!cu)
        return 0;
    const char *file = "";
    int line = 0, column = 0;
    Dwfl_Line *l = dwfl_module_getsrc(b->mod, addr);
    const char *f = l ? dwfl_lineinfo(l, NULL, &line, &column, NULL, NULL) : NULL;
    if (f)
        file = f;
    Dwarf_Attribute attr;
    const char *comp_dir = dwarf_attr(cu, DW_AT_comp_dir, &attr) ? dwarf_formstring(&attr) : NULL;
    if (!comp_dir || comp_dir[0] != '/')
        comp_dir = "";   /* a relative one (glibc's "./elf") says nothing more */
    /* The innermost scope at addr, then its concrete parents (getscopes
     * alone would go on through an inlined function's abstract origin). */
    Dwarf_Die *at = NULL, *scopes = NULL;
    int nscopes = 0;
    if (dwarf_getscopes(cu, addr - dwbias, &at) > 0)
        nscopes = dwarf_getscopes_die(&at[0], &scopes);
    free(at);
    size_t n = 0;
    int64_t cur_line = line, cur_column = column;
    for (int i = 0; i < nscopes && n < max; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
            continue;
        const char *name = die_name(&scopes[i]);
        int decl = 0;
        dwarf_decl_line(&scopes[i], &decl);
        out[n++] = (struct elf_frame){name ? name : "", file, file[0] == '/' ? "" : comp_dir,
                                      cur_line, cur_column, decl};
        if (tag == DW_TAG_subprogram)
            break;
        call_site(cu, &scopes[i], &file, &cur_line);
        cur_column = 0;
    }
    free(scopes);
    return n;
}

/* The function symbol with the highest address at or below addr, or NULL. */
static const char *preceding_function(struct elf_binary *b, Dwarf_Addr addr)
{
    int n = dwfl_module_getsymtab(b->mod);
    const char *best = NULL;
    GElf_Addr best_at = 0;
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr value;
        const char *name = dwfl_module_getsym_info(b->mod, i, &sym, &value, NULL, NULL, NULL);
        if (name && GELF_ST_TYPE(sym.st_info) == STT_FUNC && value <= addr &&
            (!best || value > best_at)) {
            best = name;
            best_at = value;
        }
    }
    return best;
}

size_t elf_binary_frames(struct elf_binary *b, uint64_t vaddr, struct elf_frame *out, size_t max)
{
    if (!max)
        return 0;
    Dwarf_Addr addr = vaddr + b->bias;
    size_t n = dwarf_frames(b, addr, out, max);
    if (n)
        return n;
    /* No DWARF function here: the symbol, else the nearest function symbol
     * before addr (padding after a function's end), and the line table. */
    GElf_Off off;
    GElf_Sym sym;
    const char *name = dwfl_module_addrinfo(b->mod, addr, &off, &sym, NULL, NULL, NULL);
    if (!name)
        name = preceding_function(b, addr);
    if (!name)
        return 0;
    out[0] = (struct elf_frame){name, "", "", 0, 0, 0};
    int line = 0;
    Dwfl_Line *l = dwfl_module_getsrc(b->mod, addr);
    const char *file = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
    const char *dir = l ? dwfl_line_comp_dir(l) : NULL;
    if (file) {
        out[0].file = file;
        out[0].dir = file[0] != '/' && dir && dir[0] == '/' ? dir : "";
        out[0].line = line;
    }
    return 1;
}

size_t elf_binary_footprint(const struct elf_binary *b)
{
    return b->footprint;
}

void elf_binary_close(struct elf_binary *b)
{
    if (!b)
        return;
    if (b->dwfl)
        dwfl_end(b->dwfl);
    free(b->debug_path);
    free(b);
}
