// SPDX-License-Identifier: Apache-2.0
#include "elf_symbols.h"

#include "../../lib/grow.h"
#include "../../lib/key_map.h"
#include "../../lib/search.h"
#include "debug_search.h"
#include "frame_cache.h"
#include "gopclntab.h"
#include "inflated_cache.h"
#include "plt_symbols.h"
#include "scope_index.h"

#include <dwarf.h>
#include <errno.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct func_sym;

/* A loadable segment: file range [offset, offset + size) at vaddr. */
struct segment {
    uint64_t offset, size, vaddr;
    bool executable;
};

#define MAX_SEGMENTS 16
#define MAX_GO_SECTIONS 3
#define MAX_GO_FRAMES 64

/* Units walked between two drops of the DWARF files' pages, and bytes of
 * units indexed: each drop flushes the TLB of every CPU the process runs
 * on and has the pages still needed fault back in, too dear for every
 * small unit (a million libc addresses index 1,500 units: 0.35 s of
 * lookups on one thread with a drop per unit, 0.29 s with one per 64 KiB),
 * while the pages read stay a window: elfutils follows references out
 * of a unit (to dwz's partial units, abbreviations, line programs,
 * strings), so what a unit's index leaves resident is several times its
 * size. Dropping the whole files, not .debug_info alone, every 256 KiB of
 * units: a drop per 16 KiB had 2,600 more page faults and 0.25 s more CPU
 * for those million addresses where a fault costs 12 us and more (a
 * virtual machine that shadows the guest's page tables), for 0.6 MB less
 * at the peak of a perf.data conversion whose 541 addresses read 7 MB of
 * glibc's (2 MB less than with no drop until the profile's end). */
#define UNITS_PER_DROP 64
#define UNIT_BYTES_PER_DROP (256u << 10)

struct elf_binary {
    char *path;
    Dwfl *dwfl;
    Dwfl_Module *mod;
    Dwfl_Callbacks callbacks;
    char *debug_path;
    struct elf_sources sources;   /* debug_path points to the copy above */
    GElf_Addr bias;          /* added to an ELF address to get the module's */
    size_t footprint;
    struct scope_index *scopes;
    struct frame_cache *results;   /* frames found at addresses before; made on first use */
    bool profiled;                 /* a profile was done with it: results are kept */
    bool results_off;              /* elf_binary_use_results(b, false) */
    struct func_sym *syms;   /* read on the first lookup without DWARF */
    size_t nsyms;
    struct plt_symbols plt;  /* the names of some of syms; read on the first lookup */
    bool plt_read;
    bool symbols_read;
    struct go_pclntab *gopclntab;   /* read on the first lookup without DWARF */
    bool gopclntab_read;
    struct go_section go_sections[MAX_GO_SECTIONS];   /* its data, for inline trees */
    size_t ngo_sections;
    struct segment segments[MAX_SEGMENTS];
    size_t nsegments;
    bool units_walked;
    size_t unit_bytes_at_drop;   /* scope_index_unit_bytes when its pages were last dropped */
    bool looked_up_since_drop;   /* DWARF read for a lookup (not a kept result) since then */
    struct elf_binary *lanes[ELF_BINARY_MAX_LANES];   /* [0] unused: the binary itself */
    size_t nlanes;             /* lanes opened, the binary itself included (0: none asked) */
    /* Its debug file's search: lanes fetch only when the fetch function
     * gave a file, so that they read what the binary reads. */
    struct debug_search search;
    char *debug_problem;   /* why a debug file found gave no DWARF (malloc'd), NULL: none */
};

/* Notes the loadable segments' file ranges and addresses. */
static void read_segments(struct elf_binary *b, Elf *elf)
{
    size_t n;
    if (elf_getphdrnum(elf, &n) != 0)
        return;
    for (size_t i = 0; i < n && b->nsegments < MAX_SEGMENTS; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
            b->segments[b->nsegments++] =
                (struct segment){ph.p_offset, ph.p_filesz, ph.p_vaddr, (ph.p_flags & PF_X) != 0};
    }
}

struct elf_binary *elf_binary_open(const char *path, const struct elf_sources *sources, char *err,
                                   size_t errlen)
{
    struct elf_binary *b = calloc(1, sizeof(*b));
    if (!b || !(b->debug_path = strdup(sources->debug_path ? sources->debug_path : "")) ||
        !(b->path = strdup(path)))
        abort();
    b->sources = *sources;
    b->sources.debug_path = b->debug_path;
    b->search = (struct debug_search){.binary = b->path, .sources = &b->sources};
    b->callbacks = (Dwfl_Callbacks){.find_debuginfo = debug_search_find,
                                    .section_address = dwfl_offline_section_address,
                                    .debuginfo_path = &b->debug_path};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        elf_binary_close(b);
        return NULL;
    }
    fd = debug_search_inflated(&b->sources, fd);
    if ((b->dwfl = dwfl_begin(&b->callbacks))) {
        dwfl_report_begin(b->dwfl);
        b->mod = dwfl_report_elf(b->dwfl, "binary", path, fd, 0, false);   /* takes fd */
        dwfl_report_end(b->dwfl, NULL, NULL);
    }
    if (!b->mod)
        close(fd);
    void **userdata;
    if (b->mod && dwfl_module_info(b->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL))
        *userdata = &b->search;   /* for debug_search_find */
    Elf *elf = b->mod ? dwfl_module_getelf(b->mod, &b->bias) : NULL;
    if (!elf) {
        snprintf(err, errlen, "%s: %s", path, dwfl_errmsg(-1));
        elf_binary_close(b);
        return NULL;
    }
    read_segments(b, elf);
    struct stat st;
    b->footprint = stat(path, &st) == 0 ? (size_t)st.st_size : 0;
    b->scopes = scope_index_new(b->mod, b->sources.lookup);
    return b;
}

int elf_binary_vaddr(const struct elf_binary *b, uint64_t off, uint64_t *vaddr)
{
    for (size_t i = 0; i < b->nsegments; i++) {
        const struct segment *g = &b->segments[i];
        if (off >= g->offset && off - g->offset < g->size) {
            *vaddr = g->vaddr + (off - g->offset);
            return 1;
        }
    }
    return 0;
}

int elf_binary_text(const struct elf_binary *b, uint64_t *vaddr)
{
    for (size_t i = 0; i < b->nsegments; i++)
        if (b->segments[i].executable) {
            *vaddr = b->segments[i].vaddr;
            return 1;
        }
    return 0;
}

/* A function symbol, for lookups by address. */
struct func_sym {
    GElf_Addr value, size;
    GElf_Addr limit;   /* the end of its section: where an unsized one ends at the latest */
    const char *name;
    int rank;   /* preferred among aliases: GLOBAL 2, WEAK 1, LOCAL 0, a code label -1 */
};

static int sym_order(const void *a, const void *b)
{
    const struct func_sym *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return y->rank - x->rank;   /* the preferred alias first */
}

/* The header of the section a symbol is defined in, into sh; false for
 * none (undefined, absolute or common). */
static bool symbol_section(Elf *elf, GElf_Word shndx, GElf_Shdr *sh)
{
    Elf_Scn *scn = elf && shndx != SHN_UNDEF && shndx < SHN_LORESERVE ? elf_getscn(elf, shndx)
                                                                       : NULL;
    return scn && gelf_getshdr(scn, sh);
}

/* Reads the binary's PLT entries and where its PLT lies, once. */
static void read_plt(struct elf_binary *b)
{
    GElf_Addr bias;
    b->plt_read = true;
    plt_symbols_read(dwfl_module_getelf(b->mod, &bias), &b->plt);
}

/* Reads the module's function symbols, code labels (symbols of no type in
 * executable sections, as assembly entry points such as the dynamic
 * loader's _start are, ARM's mapping symbols $x, $a, $t, $d aside) and
 * PLT entries once, sorted by address. */
static void read_symbols(struct elf_binary *b)
{
    b->symbols_read = true;
    int n = dwfl_module_getsymtab(b->mod);
    if (!b->plt_read)
        read_plt(b);
    b->syms = calloc((size_t)(n > 0 ? n : 0) + b->plt.n + 1, sizeof(*b->syms));
    if (!b->syms)
        abort();
    for (size_t i = 0; i < b->plt.n; i++) {
        const struct plt_entry *e = &b->plt.entries[i];
        b->syms[b->nsyms++] =
            (struct func_sym){e->addr + b->bias, e->size, e->addr + b->bias + e->size, e->name, 0};
    }
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr value;
        GElf_Word shndx;
        GElf_Shdr sh;
        Elf *elf;
        const char *name = dwfl_module_getsym_info(b->mod, i, &sym, &value, &shndx, &elf, NULL);
        int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
        if (!name || !*name || shndx == SHN_UNDEF)   /* an import: not this module's code */
            continue;
        bool in_section = symbol_section(elf, shndx, &sh);
        GElf_Addr limit = in_section ? value - sym.st_value + sh.sh_addr + sh.sh_size : UINT64_MAX;
        if (type == STT_FUNC || type == STT_GNU_IFUNC)
            b->syms[b->nsyms++] = (struct func_sym){value, sym.st_size, limit, name,
                                                    bind == STB_GLOBAL ? 2 : bind == STB_WEAK};
        else if (type == STT_NOTYPE && name[0] != '$' && in_section &&
                 (sh.sh_flags & SHF_EXECINSTR))
            b->syms[b->nsyms++] = (struct func_sym){value, sym.st_size, limit, name, -1};
    }
    qsort(b->syms, b->nsyms, sizeof(*b->syms), sym_order);
}

/* Functions start at multiples of this (x86-64's and arm64's default);
 * the padding up to the next start belongs to the function before it. */
#define FUNCTION_ALIGNMENT 16

/* The function symbol holding addr: a sized one, to its end and the
 * padding after it; else an unsized one (a label, or a function written in
 * assembly without a size), up to the next symbol or its section's end.
 * NULL when addr lies past a sized symbol's end and padding (code with no
 * symbol of its own, as a stripped binary's static functions: named after
 * no neighbour). */
static const char *function_symbol(struct elf_binary *b, Dwarf_Addr addr)
{
    if (!b->symbols_read)
        read_symbols(b);
    size_t lo = first_above(b->syms, b->nsyms, sizeof(*b->syms), offsetof(struct func_sym, value),
                            addr);
    if (!lo)
        return NULL;
    GElf_Addr at = b->syms[lo - 1].value;
    size_t first = lo - 1;
    while (first && b->syms[first - 1].value == at)
        first--;
    /* Of the aliases at that address, the preferred one; a sized symbol of
     * an earlier address that still holds addr wins over an unsized one. */
    GElf_Addr size = b->syms[first].size;
    for (size_t i = first; i > 0 && i + 8 > first; i--)
        if (b->syms[i - 1].size && addr - b->syms[i - 1].value < b->syms[i - 1].size &&
            !(size && addr - at < size))
            return b->syms[i - 1].name;
    GElf_Addr padded = (size + (at % FUNCTION_ALIGNMENT) + FUNCTION_ALIGNMENT - 1) /
                       FUNCTION_ALIGNMENT * FUNCTION_ALIGNMENT - at % FUNCTION_ALIGNMENT;
    bool held = size ? addr - at < padded : addr < b->syms[first].limit;
    return held ? b->syms[first].name : NULL;
}

/* Reads the binary's Go pc-line table, when it is a Go binary, with the
 * sections that hold the runtime's module data and functions' data. */
static void read_gopclntab(struct elf_binary *b)
{
    /* The runtime's module data is in .noptrdata; inline trees in .rodata. */
    static const char *const data_sections[MAX_GO_SECTIONS] = {".noptrdata", ".data", ".rodata"};
    struct go_section found[MAX_GO_SECTIONS] = {{0}};
    b->gopclntab_read = true;
    GElf_Addr bias;
    Elf *elf = dwfl_module_getelf(b->mod, &bias);
    size_t names;
    if (!elf || elf_getshdrstrndx(elf, &names) != 0)
        return;
    uint64_t text = 0, table_addr = 0;
    Elf_Data *table = NULL;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, names, sh.sh_name) : NULL;
        if (!name || sh.sh_type == SHT_NOBITS)
            continue;
        if (!strcmp(name, ".text"))
            text = sh.sh_addr;
        /* a position-independent build has it among its relocated data */
        if (!strcmp(name, ".gopclntab") || !strcmp(name, ".data.rel.ro.gopclntab")) {
            table = elf_getdata(scn, NULL);
            table_addr = sh.sh_addr;
        }
        Elf_Data *d;
        for (size_t i = 0; i < MAX_GO_SECTIONS; i++)
            if (!strcmp(name, data_sections[i]) && (d = elf_getdata(scn, NULL)) && d->d_buf)
                found[i] = (struct go_section){sh.sh_addr, d->d_buf, d->d_size};
    }
    for (size_t i = 0; i < MAX_GO_SECTIONS; i++)   /* in the order above: module data first */
        if (found[i].data)
            b->go_sections[b->ngo_sections++] = found[i];
    if (table && table->d_buf)
        b->gopclntab = go_pclntab_open(table->d_buf, table->d_size, table_addr, text,
                                       b->go_sections, b->ngo_sections);
}

/* Lets the system take back the resident pages of the file image libelf
 * mapped for elf, when it has one (unmodified private pages come back from
 * the file as it is). Unless any_kind, only for a file libelf and libdwfl
 * leave unchanged: not one of another byte order, whose data libelf may
 * convert in place, nor a relocatable one, whose sections libdwfl
 * relocates in place. */
static void drop_image_pages(Elf *elf, bool any_kind)
{
    size_t size;
    char *image = elf ? elf_rawfile(elf, &size) : NULL;
    const uint16_t one = 1;
    int native = *(const uint8_t *)&one ? ELFDATA2LSB : ELFDATA2MSB;
    GElf_Ehdr eh;
    if (!image || (!any_kind && (size <= EI_DATA || image[EI_DATA] != native ||
                                 !gelf_getehdr(elf, &eh) || eh.e_type == ET_REL)))
        return;
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)image & ~(uintptr_t)(page - 1);
    madvise((void *)start, size + ((uintptr_t)image - start), MADV_DONTNEED);
}

/* drop_image_pages for a binary, debug or dwz file. */
static void drop_file_pages(Elf *elf)
{
    drop_image_pages(elf, false);
}

/* drop_image_pages for b's DWARF package, when one is open: relocatable,
 * but nothing relocates it (libdw alone reads its sections, where they
 * lie), and of this host's byte order, the only one dwp_open takes. */
static void drop_package_pages(const struct elf_binary *b)
{
    drop_image_pages(scope_index_package_file(b->scopes), true);
}

/* The same for the files of b's DWARF dw: its own (unless it is `main`,
 * the binary's, dropped by the caller) and the dwz file it shares, when
 * the search found one (asked otherwise, elfutils would look for it
 * itself). */
static void drop_dwarf_pages(const struct elf_binary *b, Dwarf *dw, Elf *main)
{
    Elf *elf = dw ? dwarf_getelf(dw) : NULL;
    if (elf && elf != main)
        drop_file_pages(elf);
    Dwarf *alt = dw && b->search.dwz_found ? dwarf_getalt(dw) : NULL;
    if (alt)
        drop_file_pages(dwarf_getelf(alt));
}

/* Lets the system take back the pages of b's DWARF files read so far. */
static void drop_dwarf_pages_now(struct elf_binary *b)
{
    Dwarf_Addr bias;
    drop_dwarf_pages(b, dwfl_module_getdwarf(b->mod, &bias), NULL);
    drop_package_pages(b);
    b->unit_bytes_at_drop = scope_index_unit_bytes(b->scopes);
    b->looked_up_since_drop = false;
}

/* The same once units of UNIT_BYTES_PER_DROP bytes more are indexed: an
 * indexed unit's entries, abbreviations and line program are not read
 * again, and what is (names, as the profile's functions are added) comes
 * back from the page cache. */
static void drop_read_pages(struct elf_binary *b)
{
    if (scope_index_unit_bytes(b->scopes) >= b->unit_bytes_at_drop + UNIT_BYTES_PER_DROP)
        drop_dwarf_pages_now(b);
}

void elf_binary_profile_done(struct elf_binary *b)
{
    elf_binary_drop_pages(b);
    b->profiled = true;
    for (size_t k = 1; k < b->nlanes; k++)
        b->lanes[k]->profiled = true;
}

void elf_binary_lane_done(struct elf_binary *lane)
{
    if (lane->looked_up_since_drop)
        drop_dwarf_pages_now(lane);
}

/* elf_binary_drop_pages for lane alone, its own lanes aside. */
static void drop_lane_pages(struct elf_binary *lane)
{
    GElf_Addr bias;
    const char *debug_file = NULL;
    Elf *main = dwfl_module_getelf(lane->mod, &bias);
    drop_file_pages(main);
    dwfl_module_info(lane->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debug_file);
    if (debug_file)   /* its DWARF is loaded already */
        drop_dwarf_pages(lane, dwfl_module_getdwarf(lane->mod, &bias), main);
    drop_package_pages(lane);
}

void elf_binary_drop_pages(struct elf_binary *b)
{
    drop_lane_pages(b);
    for (size_t k = 1; k < b->nlanes; k++)
        drop_lane_pages(b->lanes[k]);
}

/* elfutils reads the header of every unit before the one a lookup needs
 * (and its first entry), each on its own page of a large .debug_info: on
 * the first lookup, that is most of the section at once. Walked here
 * instead, a step of units at a time with the pages read dropped after
 * each, so that what is resident stays a window of the file. */
static void walk_units(struct elf_binary *b)
{
    b->units_walked = true;
    Dwarf_Addr bias;
    Dwarf *dw = dwfl_module_getdwarf(b->mod, &bias);
    const char *why = dw ? NULL : dwfl_errmsg(-1);
    Dwarf_Off off = 0, next;
    size_t header, units = 0;
    for (; dw && dwarf_next_unit(dw, off, &next, &header, NULL, NULL, NULL, NULL, NULL, NULL) == 0;
         off = next) {
        Dwarf_Die unit;   /* read, and those before it, before their pages go */
        if (++units % UNITS_PER_DROP == 0 && dwarf_offdie(dw, off + header, &unit))
            elf_binary_drop_pages(b);
    }
    elf_binary_drop_pages(b);
    const char *debug_file = NULL;
    dwfl_module_info(b->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debug_file);
    if (units == 0 && debug_file)
        b->debug_problem = must_asprintf("debug file %s: no DWARF read from it (%s)", debug_file,
                                         why ? why : "no units");
    else if (!dw && b->search.refused_file && b->search.fetch != DEBUG_PENDING)
        b->debug_problem = must_asprintf("debug file %s: not an ELF file of this build-id",
                                         b->search.refused_file);
}

/* Has elfutils look for b's debug file and read its DWARF and symbol
 * table now, which lookups would otherwise do on first need. */
static void load_debug_parts(struct elf_binary *b)
{
    b->looked_up_since_drop = true;
    if (!b->units_walked)
        walk_units(b);
    dwfl_module_getsymtab(b->mod);   /* looks for the debug file again when DWARF had none */
}

size_t elf_binary_open_lanes(struct elf_binary *b, size_t n)
{
    if (n > ELF_BINARY_MAX_LANES)
        n = ELF_BINARY_MAX_LANES;
    if (!b->nlanes)
        b->nlanes = 1;
    load_debug_parts(b);
    if (b->search.fetch == DEBUG_PENDING)
        n = 1;   /* opened again once the fetch ends: no lane reads it meanwhile */
    struct elf_sources sources = b->sources;
    if (b->search.fetch != DEBUG_FETCHED)
        sources.fetch = NULL;
    char err[512];
    while (b->nlanes < n) {
        struct elf_binary *lane = elf_binary_open(b->path, &sources, err, sizeof(err));
        if (!lane)
            break;
        load_debug_parts(lane);
        b->lanes[b->nlanes++] = lane;
    }
    return b->nlanes < n ? b->nlanes : n;
}

const char *elf_binary_debug_pending(const struct elf_binary *b)
{
    return b->search.fetch == DEBUG_PENDING ? b->search.waiting_for : NULL;
}

const char *elf_binary_debug_problem(const struct elf_binary *b)
{
    const char *problem = b->debug_problem ? b->debug_problem : scope_index_problem(b->scopes);
    for (size_t k = 1; !problem && k < b->nlanes; k++)
        problem = scope_index_problem(b->lanes[k]->scopes);
    return problem;
}

struct elf_binary *elf_binary_lane(struct elf_binary *b, size_t k)
{
    return k ? b->lanes[k] : b;
}

/* elf_binary_frames without the results of earlier lookups. */
static size_t look_up_frames(struct elf_binary *b, uint64_t vaddr, struct elf_frame *out,
                             size_t max)
{
    b->looked_up_since_drop = true;
    if (!b->units_walked)
        walk_units(b);
    if (!b->plt_read)
        read_plt(b);
    Dwarf_Addr addr = vaddr + b->bias;
    /* A PLT stub has a name and nothing else: looking for its DWARF unit
     * would read every unit's ranges, as for a module without
     * .debug_aranges. */
    if (plt_symbols_holds(&b->plt, vaddr)) {
        const char *name = function_symbol(b, addr);
        if (name)
            out[0] = (struct elf_frame){name, "", "", 0, 0, 0};
        return name != NULL;
    }
    size_t n = scope_index_frames(b->scopes, addr, out, max);
    drop_read_pages(b);
    if (n && n < max && !*out[n - 1].name)   /* the function's name is in a dwz file not here */
        out[n - 1].name = function_symbol(b, addr) ?: "";
    if (n)
        return n;
    /* No DWARF function here: Go's pc-line table, then the function symbol
     * and the line table. */
    if (!b->gopclntab_read)
        read_gopclntab(b);
    struct go_frame go[MAX_GO_FRAMES];
    size_t ngo = b->gopclntab ? go_pclntab_frames(b->gopclntab, vaddr, go,
                                                  max < MAX_GO_FRAMES ? max : MAX_GO_FRAMES) : 0;
    for (size_t i = 0; i < ngo; i++)
        out[i] = (struct elf_frame){go[i].function, go[i].file, "", go[i].line, 0, 0};
    if (ngo)
        return ngo;
    const char *name = function_symbol(b, addr);
    if (!name)
        return 0;
    out[0] = (struct elf_frame){name, "", "", 0, 0, 0};
    int line, column;
    if (scope_index_line(b->scopes, addr, &out[0].file, &out[0].dir, &line, &column))
        out[0].line = line;
    return 1;
}

/* Whether b keeps results now: from its second profile on, unless this
 * profile has turned them off. */
static bool keeps_results(const struct elf_binary *b)
{
    return b->profiled && !b->results_off;
}

size_t elf_binary_frames(struct elf_binary *b, uint64_t vaddr, struct elf_frame *out, size_t max)
{
    size_t n;
    if (!max)
        return 0;
    if (keeps_results(b) && !b->results && b->sources.results_bytes)
        b->results = frame_cache_new(b->sources.results_bytes);
    struct frame_cache *results = keeps_results(b) ? b->results : NULL;
    if (results && frame_cache_get(results, vaddr, out, max, &n))
        return n;
    n = look_up_frames(b, vaddr, out, max);
    if (results)
        frame_cache_put(results, vaddr, out, n);
    return n;
}

void elf_binary_prefetch_result(const struct elf_binary *b, uint64_t vaddr)
{
    if (b->results && keeps_results(b))
        frame_cache_prefetch(b->results, vaddr);
}

void elf_binary_use_results(struct elf_binary *b, bool use)
{
    b->results_off = !use;
    for (size_t k = 1; k < b->nlanes; k++)
        b->lanes[k]->results_off = !use;
}

size_t elf_binary_results_room(const struct elf_binary *b)
{
    return frame_cache_room_of(b->sources.results_bytes);
}

/* What b's lookups added: its index, symbol table and results. */
static size_t index_footprint(const struct elf_binary *b)
{
    return scope_index_footprint(b->scopes) + b->nsyms * sizeof(*b->syms) +
           frame_cache_footprint(b->results);
}

/* The bytes of the files b's split units were read from, each file once
 * however many of its lanes opened it. */
static size_t split_bytes(const struct elf_binary *b)
{
    if (b->nlanes <= 1)
        return scope_index_split_bytes(b->scopes);
    struct key_map seen = {0};
    size_t bytes = 0;
    for (size_t k = 0; k < b->nlanes; k++) {
        size_t n;
        const struct split_file *files =
            scope_index_split_files(k ? b->lanes[k]->scopes : b->scopes, &n);
        for (size_t i = 0; i < n; i++) {
            uint32_t unused;
            if (!key_map_get(&seen, files[i].id, &unused)) {
                key_map_put(&seen, files[i].id, 0);
                bytes += files[i].size;
            }
        }
    }
    key_map_free(&seen);
    return bytes;
}

size_t elf_binary_footprint(const struct elf_binary *b)
{
    size_t bytes = b->footprint + index_footprint(b);
    for (size_t k = 1; k < b->nlanes; k++)   /* the files are the binary's own, shared */
        bytes += index_footprint(b->lanes[k]);
    return bytes + split_bytes(b);
}

void elf_binary_close(struct elf_binary *b)
{
    if (!b)
        return;
    for (size_t k = 1; k < b->nlanes; k++)
        elf_binary_close(b->lanes[k]);
    scope_index_free(b->scopes);
    frame_cache_free(b->results);
    free(b->syms);
    plt_symbols_free(&b->plt);
    go_pclntab_free(b->gopclntab);
    if (b->dwfl)
        dwfl_end(b->dwfl);
    free(b->search.refused_file);
    free(b->debug_problem);
    free(b->debug_path);
    free(b->path);
    free(b);
}
