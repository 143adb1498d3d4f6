// SPDX-License-Identifier: Apache-2.0
#include "scope_index.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/binary_lookup.h"
#include "../../lib/grow.h"
#include "../../lib/hash.h"
#include "../../lib/key_map.h"
#include "../../lib/search.h"
#include "dwp.h"

/* What a function or inlined subroutine is: its name, and (inlined) where
 * its caller called it. */
struct scope_info {
    const char *name;
    const char *call_file, *call_dir;
    int64_t call_line;
    int decl_line;
};

/* An address range of an inlined subroutine. A function's inlined
 * ranges are stored depth first: each subroutine's ranges, then
 * everything inlined into it, which ends where `end` says. */
struct nested {
    Dwarf_Addr low, high;
    uint32_t info;
    uint32_t children;   /* the first entry after the subroutine's own ranges */
    uint32_t end;        /* the first entry after everything inlined into it */
};

/* An address range of a function; its inlined ranges are nested[first,
 * first + count). A function in several pieces has one entry per piece. */
struct func {
    Dwarf_Addr low, high;
    uint32_t info, first, count;
};

struct scope_index {
    Dwfl_Module *mod;
    struct func *funcs;           /* sorted by low, over every unit read */
    size_t nfuncs, funcs_cap;
    struct nested *nested;
    size_t nnested, nested_cap;
    struct scope_info *infos;
    size_t ninfos, infos_cap;
    Dwarf_Off *units;             /* units read (offsets), sorted */
    size_t nunits, units_cap;
    /* Every unit's address ranges, sorted by low, read once when elfutils
     * finds no unit for an address (.debug_aranges, which clang and rustc
     * do not write, is all it looks in). */
    struct unit_span {
        Dwarf_Addr low, high;   /* module addresses */
        Dwarf_Off die;          /* the unit's DIE */
    } *spans;
    size_t nspans, spans_cap;
    bool spans_read;
    size_t unit_bytes;            /* of .debug_info, in the units read */
    /* The DWARF package beside the binary or its debug file, looked for
     * at the first skeleton unit whose split unit elfutils did not find. */
    struct dwp *package;
    bool package_looked_for;
    char *package_problem;   /* a file looked at as the package that is none (malloc'd), or NULL */
    char *unit_missing;      /* the first split unit found nowhere, said so (malloc'd), or NULL */
    struct split_file *split_files;       /* the .dwo files and package read from */
    size_t nsplit_files, split_files_cap, split_bytes;
    struct key_map split_ids;             /* a split file's id -> its index */
    const struct binary_lookup *lookup;   /* its directories, searched for the package too */
    /* While reading a unit: */
    struct func *fresh;
    size_t nfresh, fresh_cap;
    Dwarf_Die *cu;
    Dwarf_Die *skeleton;                  /* the skeleton unit of a split cu, else NULL */
    const struct dwp_unit *packed;        /* cu's unit when it came from the package */
    const char *comp_dir;
    Dwarf_Addr bias;
};

struct scope_index *scope_index_new(Dwfl_Module *mod, const struct binary_lookup *lookup)
{
    struct scope_index *x = calloc(1, sizeof(*x));
    if (!x)
        abort();
    x->mod = mod;
    x->lookup = lookup;
    return x;
}

/* ---- reading a unit ---- */

static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    const char *s = NULL;
    if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
        dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
        s = dwarf_formstring(&attr);
    if (!s && dwarf_attr_integrate(die, DW_AT_name, &attr))
        s = dwarf_formstring(&attr);
    return s ? s : "";
}

static uint32_t add_info(struct scope_index *x, Dwarf_Die *die, bool inlined)
{
    struct scope_info in = {die_name(die), "", "", 0, 0};
    dwarf_decl_line(die, &in.decl_line);
    Dwarf_Attribute attr;
    Dwarf_Word v;
    Dwarf_Files *files;
    size_t nfiles;
    /* a split unit without a file table of its own uses its skeleton's */
    if (inlined && dwarf_attr(die, DW_AT_call_file, &attr) && dwarf_formudata(&attr, &v) == 0 &&
        (dwarf_getsrcfiles(x->cu, &files, &nfiles) == 0 ||
         (x->skeleton && dwarf_getsrcfiles(x->skeleton, &files, &nfiles) == 0)) &&
        v < nfiles) {
        const char *f = dwarf_filesrc(files, v, NULL, NULL);
        if (f) {
            in.call_file = f;
            in.call_dir = f[0] == '/' ? "" : x->comp_dir;
        }
    }
    if (inlined && dwarf_attr(die, DW_AT_call_line, &attr) && dwarf_formudata(&attr, &v) == 0)
        in.call_line = (int64_t)v;
    x->infos = grow_array(x->infos, &x->infos_cap, x->ninfos + 1, sizeof(*x->infos));
    x->infos[x->ninfos] = in;
    return (uint32_t)x->ninfos++;
}

/* Calls fn(x, low, high, arg) for each address range of die (module addresses). */
static size_t each_range(struct scope_index *x, Dwarf_Die *die,
                         void (*fn)(struct scope_index *, Dwarf_Addr, Dwarf_Addr, void *),
                         void *arg)
{
    Dwarf_Addr base, low, high;
    size_t n = 0;
    for (ptrdiff_t off = 0; (off = x->packed ? dwp_ranges(x->packed, die, off, &base, &low, &high)
                                             : dwarf_ranges(die, off, &base, &low, &high)) > 0;)
        if (high > low) {
            fn(x, low + x->bias, high + x->bias, arg);
            n++;
        }
    return n;
}

static void add_nested(struct scope_index *x, Dwarf_Addr low, Dwarf_Addr high, void *arg)
{
    const uint32_t *info = arg;
    x->nested = grow_array(x->nested, &x->nested_cap, x->nnested + 1, sizeof(*x->nested));
    x->nested[x->nnested++] = (struct nested){low, high, *info, 0, 0};
}

/* Inlined subroutines below die, depth first. */
static void read_inlined(struct scope_index *x, Dwarf_Die *die)
{
    Dwarf_Die child;
    if (dwarf_child(die, &child) != 0)
        return;
    do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_inlined_subroutine) {
            uint32_t info = add_info(x, &child, true);
            size_t first = x->nnested;
            each_range(x, &child, add_nested, &info);
            size_t children = x->nnested;
            read_inlined(x, &child);
            for (size_t i = first; i < children; i++) {
                x->nested[i].children = (uint32_t)children;
                x->nested[i].end = (uint32_t)x->nnested;
            }
        } else if (tag == DW_TAG_lexical_block || tag == DW_TAG_try_block ||
                   tag == DW_TAG_catch_block) {
            read_inlined(x, &child);
        }
    } while (dwarf_siblingof(&child, &child) == 0);
}

static void add_func(struct scope_index *x, Dwarf_Addr low, Dwarf_Addr high, void *arg)
{
    const uint32_t *info = arg;
    x->fresh = grow_array(x->fresh, &x->fresh_cap, x->nfresh + 1, sizeof(*x->fresh));
    x->fresh[x->nfresh++] = (struct func){low, high, *info, 0, 0};
}

/* Functions with code below die (namespaces and classes included). */
static void read_functions(struct scope_index *x, Dwarf_Die *die)
{
    Dwarf_Die child;
    if (dwarf_child(die, &child) != 0)
        return;
    do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_subprogram) {
            uint32_t info = add_info(x, &child, false);
            size_t pieces_at = x->nfresh, first = x->nnested;
            if (!each_range(x, &child, add_func, &info))
                continue;
            read_inlined(x, &child);
            for (size_t i = pieces_at; i < x->nfresh; i++) {
                x->fresh[i].first = (uint32_t)first;
                x->fresh[i].count = (uint32_t)(x->nnested - first);
            }
        } else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
                   tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
                   tag == DW_TAG_module) {
            read_functions(x, &child);
        }
    } while (dwarf_siblingof(&child, &child) == 0);
}

static int by_low(const void *a, const void *b)
{
    const struct func *x = a, *y = b;
    return x->low < y->low ? -1 : x->low > y->low;
}

/* The bytes cu's unit takes in .debug_info (header included), 0 when
 * elfutils cannot tell. */
static size_t unit_size(struct scope_index *x, Dwarf_Die *cu)
{
    Dwarf_Addr bias;
    Dwarf *dw = dwfl_module_getdwarf(x->mod, &bias);
    Dwarf_Off header = dwarf_dieoffset(cu) - dwarf_cuoffset(cu), next;
    if (!dw || dwarf_next_unit(dw, header, &next, NULL, NULL, NULL, NULL, NULL, NULL, NULL) != 0)
        return 0;
    return next > header ? next - header : 0;
}

/* Merges the unit's fresh functions into funcs, both sorted by low, in
 * place from the back (a function of funcs before a fresh one of the same
 * low). */
static void merge_fresh(struct scope_index *x)
{
    if (!x->nfresh)
        return;
    qsort(x->fresh, x->nfresh, sizeof(*x->fresh), by_low);
    x->funcs = grow_array(x->funcs, &x->funcs_cap, x->nfuncs + x->nfresh, sizeof(*x->funcs));
    size_t i = x->nfuncs, k = x->nfresh, n = x->nfuncs + x->nfresh;
    while (k > 0)
        x->funcs[--n] = i > 0 && x->funcs[i - 1].low > x->fresh[k - 1].low ? x->funcs[--i]
                                                                            : x->fresh[--k];
    x->nfuncs += x->nfresh;
}

/* Notes that split units are read from the file at path, once; false
 * when there is no file there. */
static bool note_split_file(struct scope_index *x, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return false;
    uint64_t id = hash_mix((uint64_t)st.st_dev, (uint64_t)st.st_ino);
    uint32_t at;
    if (key_map_get(&x->split_ids, id, &at))
        return true;
    key_map_put(&x->split_ids, id, (uint32_t)x->nsplit_files);
    x->split_files = grow_array(x->split_files, &x->split_files_cap, x->nsplit_files + 1,
                                sizeof(*x->split_files));
    x->split_files[x->nsplit_files++] = (struct split_file){id, (size_t)st.st_size};
    x->split_bytes += (size_t)st.st_size;
    return true;
}

/* Opens the package at path (taken) into x->package unless one is open;
 * notes the first file there that is no package. */
static void try_package(struct scope_index *x, char *path)
{
    bool opened = !x->package && (x->package = dwp_open(path)) != NULL;
    if (opened)
        note_split_file(x, path);
    else if (!x->package && !x->package_problem && access(path, F_OK) == 0)
        x->package_problem = must_asprintf("DWARF package %s: no unit index read from it",
                                           path);
    free(path);
}

/* The DWARF package of x's module, NULL when it has none: <binary>.dwp
 * beside the binary, else beside its separate debug file <debug file>.dwp
 * (as lldb looks) or <binary's name>.dwp (as gdb looks), else the latter
 * in each debug directory (as both look). */
static struct dwp *package(struct scope_index *x)
{
    if (x->package_looked_for)
        return x->package;
    x->package_looked_for = true;
    const char *binary = NULL, *debug = NULL;
    dwfl_module_info(x->mod, NULL, NULL, NULL, NULL, NULL, &binary, &debug);
    if (!binary)
        return NULL;
    const char *slash = strrchr(binary, '/'), *name = slash ? slash + 1 : binary;
    try_package(x, must_asprintf("%s.dwp", binary));
    if (debug) {
        const char *dir_end = strrchr(debug, '/');
        try_package(x, must_asprintf("%s.dwp", debug));
        try_package(x, must_asprintf("%.*s%s.dwp", dir_end ? (int)(dir_end - debug + 1) : 0,
                                     debug, name));
    }
    for (size_t i = 0; x->lookup && i < x->lookup->ndirs; i++)
        try_package(x, must_asprintf("%s/%s.dwp", x->lookup->dirs[i], name));
    return x->package;
}

/* The .dwo file skeleton unit cu names, as elfutils looks for it (a
 * relative name from the compilation directory), malloc'd; "(unnamed)"
 * when it names none. */
static char *dwo_path(Dwarf_Die *cu)
{
    Dwarf_Attribute at;
    const char *dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &at));
    const char *dwo = dwarf_formstring(dwarf_attr(cu, DW_AT_dwo_name, &at));
    if (!dwo)
        dwo = dwarf_formstring(dwarf_attr(cu, DW_AT_GNU_dwo_name, &at));
    return must_asprintf("%s%s%s", dwo && *dwo != '/' && dir ? dir : "",
                         dwo && *dwo != '/' && dir ? "/" : "", dwo ? dwo : "(unnamed)");
}

/* Notes the .dwo file elfutils read skeleton unit cu's split unit from:
 * the name from the compilation directory, else beside the binary, where
 * elfutils looks. */
static void note_dwo_file(struct scope_index *x, Dwarf_Die *cu)
{
    char *path = dwo_path(cu);
    const char *binary = NULL;
    dwfl_module_info(x->mod, NULL, NULL, NULL, NULL, NULL, &binary, NULL);
    const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    const char *dir_end = binary ? strrchr(binary, '/') : NULL;
    if (!note_split_file(x, path) && dir_end) {
        char *beside = must_asprintf("%.*s/%s", (int)(dir_end - binary), binary, name);
        note_split_file(x, beside);
        free(beside);
    }
    free(path);
}

/* Notes that the split unit of skeleton unit cu was found neither in its
 * .dwo file nor in a DWARF package. */
static void note_unit_missing(struct scope_index *x, Dwarf_Die *cu)
{
    char *path = dwo_path(cu);
    x->unit_missing = must_asprintf("split unit %s found neither as that file nor in a DWARF "
                                    "package", path);
    free(path);
}

/* The DIE whose children are cu's functions: a skeleton unit's split
 * unit (-gsplit-dwarf) set in *split, else cu itself. The split unit is
 * in its .dwo file, which elfutils finds from the skeleton's names, or
 * else in a DWARF package (x->packed set then). */
static Dwarf_Die *split_unit(struct scope_index *x, Dwarf_Die *cu, Dwarf_Die *split)
{
    uint8_t type;
    x->packed = NULL;
    x->skeleton = NULL;
    if (dwarf_cu_info(cu->cu, NULL, &type, NULL, split, NULL, NULL, NULL) != 0 ||
        type != DW_UT_skeleton)
        return cu;
    x->skeleton = cu;
    if (split->cu)   /* elfutils opened its .dwo file */
        note_dwo_file(x, cu);
    if (!split->cu && package(x))
        x->packed = dwp_split_unit(x->package, cu, split);
    if (!split->cu && !x->unit_missing)
        note_unit_missing(x, cu);
    return split->cu ? split : cu;
}

/* Reads the unit cu once and merges its functions into the sorted list. */
static void read_unit(struct scope_index *x, Dwarf_Die *cu, Dwarf_Addr bias)
{
    Dwarf_Off off = dwarf_dieoffset(cu);
    size_t at = first_above(x->units, x->nunits, sizeof(*x->units), 0, off);
    if (at && x->units[at - 1] == off)
        return;
    x->units = grow_array(x->units, &x->units_cap, x->nunits + 1, sizeof(*x->units));
    memmove(&x->units[at + 1], &x->units[at], (x->nunits - at) * sizeof(*x->units));
    x->units[at] = off;
    x->nunits++;
    x->unit_bytes += unit_size(x, cu);
    Dwarf_Attribute attr;
    const char *dir = dwarf_attr(cu, DW_AT_comp_dir, &attr) ? dwarf_formstring(&attr) : NULL;
    x->comp_dir = dir ? dir : "";   /* joined as addr2line does, even when relative */
    Dwarf_Die split = {0};
    Dwarf_Die *body = split_unit(x, cu, &split);
    x->cu = body;
    x->bias = bias;
    x->nfresh = 0;
    read_functions(x, body);
    merge_fresh(x);
    x->packed = NULL;   /* each_range reads the module's own units after this */
    x->skeleton = NULL;
}

/* ---- units by address ---- */

static void add_span(struct scope_index *x, Dwarf_Addr low, Dwarf_Addr high, void *arg)
{
    const Dwarf_Off *die = arg;
    x->spans = grow_array(x->spans, &x->spans_cap, x->nspans + 1, sizeof(*x->spans));
    x->spans[x->nspans++] = (struct unit_span){low, high, *die};
}

static int span_order(const void *a, const void *b)
{
    const struct unit_span *x = a, *y = b;
    return x->low < y->low ? -1 : x->low > y->low;
}

/* Reads the address ranges of dw's units (of module bias) into x->spans. */
static void read_spans(struct scope_index *x, Dwarf *dw, Dwarf_Addr bias)
{
    x->spans_read = true;
    x->bias = bias;   /* each_range's */
    Dwarf_Off off = 0, next;
    size_t header;
    while (dwarf_next_unit(dw, off, &next, &header, NULL, NULL, NULL, NULL, NULL, NULL) == 0) {
        Dwarf_Die unit;
        Dwarf_Off die = off + header;
        if (dwarf_offdie(dw, die, &unit))
            each_range(x, &unit, add_span, &die);
        off = next;
    }
    if (x->nspans)   /* none: spans is NULL, which qsort must not be given */
        qsort(x->spans, x->nspans, sizeof(*x->spans), span_order);
}

/* The unit holding module address addr into *cu, and the module's bias,
 * from the units' own ranges. False when no unit holds it. */
static bool unit_by_spans(struct scope_index *x, Dwarf_Addr addr, Dwarf_Die *cu,
                          Dwarf_Addr *bias)
{
    Dwarf *dw = dwfl_module_getdwarf(x->mod, bias);
    if (!dw)
        return false;
    if (!x->spans_read)
        read_spans(x, dw, *bias);
    size_t above = first_above(x->spans, x->nspans, sizeof(*x->spans),
                               offsetof(struct unit_span, low), addr);
    for (size_t i = above, looked = 0; i-- > 0 && looked < 8; looked++)   /* overlaps are rare */
        if (addr < x->spans[i].high)
            return dwarf_offdie(dw, x->spans[i].die, cu) != NULL;
    return false;
}

/* The same through .debug_aranges first. */
static bool unit_at(struct scope_index *x, Dwarf_Addr addr, Dwarf_Die *cu, Dwarf_Addr *bias)
{
    Dwarf_Die *found = dwfl_module_addrdie(x->mod, addr, bias);
    if (found)
        *cu = *found;
    return found || unit_by_spans(x, addr, cu, bias);
}

bool scope_index_line(struct scope_index *x, Dwarf_Addr addr, const char **file,
                      const char **dir, int *line, int *column)
{
    Dwfl_Line *l = dwfl_module_getsrc(x->mod, addr);
    const char *found = l ? dwfl_lineinfo(l, NULL, line, column, NULL, NULL) : NULL;
    const char *cd = found ? dwfl_line_comp_dir(l) : NULL;
    Dwarf_Die cu;
    Dwarf_Addr bias;
    /* Through .debug_aranges again, though dwfl_module_getsrc looked there:
     * a unit it names that has no line here is the answer, and the units'
     * own ranges, read whole for the module at their first use (6-10 MB for
     * glibc's debug file), are left for modules whose units it does not name. */
    if (!found && unit_at(x, addr, &cu, &bias)) {
        Dwarf_Line *dl = dwarf_getsrc_die(&cu, addr - bias);
        Dwarf_Attribute attr;
        if (dl && (found = dwarf_linesrc(dl, NULL, NULL))) {
            dwarf_lineno(dl, line);
            dwarf_linecol(dl, column);
            cd = dwarf_attr(&cu, DW_AT_comp_dir, &attr) ? dwarf_formstring(&attr) : NULL;
        }
    }
    if (!found)
        return false;
    *file = found;
    *dir = found[0] != '/' && cd ? cd : "";
    return true;
}

/* ---- lookups ---- */

/* The function piece holding addr, or NULL. */
static const struct func *find_func(const struct scope_index *x, Dwarf_Addr addr)
{
    size_t lo = first_above(x->funcs, x->nfuncs, sizeof(*x->funcs), offsetof(struct func, low),
                            addr);
    for (size_t i = lo, looked = 0; i-- > 0 && looked < 8; looked++)   /* overlaps are rare */
        if (addr < x->funcs[i].high)
            return &x->funcs[i];
    return NULL;
}

size_t scope_index_frames(struct scope_index *x, Dwarf_Addr addr, struct elf_frame *out,
                          size_t max)
{
    const struct func *f = find_func(x, addr);
    if (!f) {
        Dwarf_Addr bias;
        Dwarf_Die cu;
        if (!unit_at(x, addr, &cu, &bias))
            return 0;
        read_unit(x, &cu, bias);
        if (!(f = find_func(x, addr)))
            return 0;
    }
    /* The inlined ranges holding addr, outermost first: a range that does
     * not hold addr is passed over with everything inlined into it. */
    const struct nested *chain[64];
    size_t depth = 0;
    for (uint32_t i = f->first, end = f->first + f->count; i < end && depth < 64;) {
        const struct nested *n = &x->nested[i];
        if (addr >= n->low && addr < n->high) {
            chain[depth++] = n;
            i = n->children;
            end = n->end;
        } else {
            i = i + 1 < n->children ? i + 1 : n->end;
        }
    }
    int line = 0, column = 0;
    const char *file = "", *dir = "";
    if (!scope_index_line(x, addr, &file, &dir, &line, &column))
        line = column = 0;
    size_t n = 0;
    int64_t cur_line = line, cur_column = column;
    for (size_t d = depth + 1; d-- > 0 && n < max;) {
        const struct scope_info *in = &x->infos[d ? chain[d - 1]->info : f->info];
        out[n++] = (struct elf_frame){in->name, file, dir, cur_line, cur_column, in->decl_line};
        file = in->call_file;   /* where the caller called this one */
        dir = in->call_dir;
        cur_line = in->call_line;
        cur_column = 0;
    }
    return n;
}

size_t scope_index_unit_bytes(const struct scope_index *x)
{
    return x->unit_bytes;
}

size_t scope_index_footprint(const struct scope_index *x)
{
    return x->funcs_cap * sizeof(*x->funcs) + x->nnested * sizeof(*x->nested) +
           x->ninfos * sizeof(*x->infos) + x->spans_cap * sizeof(*x->spans) +
           x->split_files_cap * sizeof(*x->split_files) +
           x->split_ids.cap * (sizeof(*x->split_ids.keys) + sizeof(*x->split_ids.vals));
}

size_t scope_index_split_bytes(const struct scope_index *x)
{
    return x->split_bytes;
}

const struct split_file *scope_index_split_files(const struct scope_index *x, size_t *n)
{
    *n = x->nsplit_files;
    return x->split_files;
}

void scope_index_free(struct scope_index *x)
{
    if (!x)
        return;
    free(x->funcs);
    free(x->nested);
    free(x->infos);
    free(x->units);
    free(x->spans);
    free(x->fresh);
    dwp_close(x->package);
    free(x->package_problem);
    free(x->unit_missing);
    free(x->split_files);
    key_map_free(&x->split_ids);
    free(x);
}

Elf *scope_index_package_file(const struct scope_index *x)
{
    return x->package ? dwp_file(x->package) : NULL;
}

const char *scope_index_problem(const struct scope_index *x)
{
    return x->package_problem && !x->package ? x->package_problem : x->unit_missing;
}
