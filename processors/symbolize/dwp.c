// SPDX-License-Identifier: Apache-2.0
#include "dwp.h"

#include <dwarf.h>
#include <endian.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/grow.h"

/* ---- the unit index ---- */

#define INDEX_HEADER 16

static uint32_t read32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return le32toh(v);
}

static uint64_t read64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return le64toh(v);
}

bool dwp_index_read(struct dwp_index *ix, const uint8_t *data, size_t len)
{
    if (len < INDEX_HEADER)
        return false;
    *ix = (struct dwp_index){data, read32(data) & 0xffff, read32(data + 4), read32(data + 8),
                             read32(data + 12)};
    if ((ix->version != 2 && ix->version != 5) || ix->ncolumns == 0 || ix->ncolumns > 16 ||
        (ix->nslots & (ix->nslots - 1)) || ix->nunits > ix->nslots)
        return false;
    /* signatures and rows by slot, the columns' kinds, offsets and sizes by unit */
    uint64_t need = INDEX_HEADER + 12ull * ix->nslots + 4ull * ix->ncolumns +
                    8ull * ix->nunits * ix->ncolumns;
    return need <= len;
}

uint32_t dwp_index_row(const struct dwp_index *ix, uint64_t id)
{
    const uint8_t *ids = ix->data + INDEX_HEADER, *rows = ids + 8ull * ix->nslots;
    uint32_t mask = ix->nslots - 1, step = ((uint32_t)(id >> 32) & mask) | 1;
    for (uint32_t slot = (uint32_t)id & mask, tried = 0; tried < ix->nslots;
         slot = (slot + step) & mask, tried++) {
        uint32_t row = read32(rows + 4ull * slot);
        if (!row)
            return 0;   /* an empty slot ends the probe */
        if (read64(ids + 8ull * slot) == id)
            return row <= ix->nunits ? row : 0;
    }
    return 0;
}

/* A column's section kind as DWARF 5 numbers it, 0 for one not read here. */
static enum dwp_section column_kind(uint32_t version, uint32_t id)
{
    static const enum dwp_section v2[] = {0, DWP_INFO, 0 /* types */, DWP_ABBREV, DWP_LINE,
                                          DWP_LOC, DWP_STR_OFFSETS, 0 /* macinfo */, DWP_MACRO};
    if (version == 2)
        return id < sizeof(v2) / sizeof(*v2) ? v2[id] : 0;
    return id == 2 || id >= DWP_LOC ? 0 : (enum dwp_section)id;
}

bool dwp_index_slice(const struct dwp_index *ix, uint32_t row, enum dwp_section kind,
                     uint32_t *offset, uint32_t *size)
{
    if (row == 0 || row > ix->nunits)
        return false;
    const uint8_t *kinds = ix->data + INDEX_HEADER + 12ull * ix->nslots;
    const uint8_t *offsets = kinds + 4ull * ix->ncolumns;
    const uint8_t *sizes = offsets + 4ull * ix->nunits * ix->ncolumns;
    for (uint32_t c = 0; c < ix->ncolumns; c++)
        if (column_kind(ix->version, read32(kinds + 4ull * c)) == kind) {
            size_t cell = 4ull * ((uint64_t)(row - 1) * ix->ncolumns + c);
            *offset = read32(offsets + cell);
            *size = read32(sizes + cell);
            return true;
        }
    return false;
}

/* ---- range lists ---- */

/* An unsigned LEB128 at *at in [0, len), moving *at past it; false when it
 * runs past the end or past 64 bits. */
static bool read_uleb(const uint8_t *p, size_t len, size_t *at, uint64_t *v)
{
    *v = 0;
    for (unsigned shift = 0; *at < len && shift < 64; shift += 7) {
        uint8_t b = p[(*at)++];
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return true;
    }
    return false;
}

/* An address of size bytes at *at in [0, len), moving *at past it. */
static bool read_address(const uint8_t *p, size_t len, size_t *at, uint8_t size, Dwarf_Addr *v)
{
    if (*at > len || len - *at < size)
        return false;
    *v = size == 8 ? read64(p + *at) : read32(p + *at);
    *at += size;
    return true;
}

/* The address at entry index of the skeleton's .debug_addr (from its base on). */
static bool indexed_address(const struct dwp_range_lists *l, uint64_t index, Dwarf_Addr *v)
{
    if (index > l->addrs_len / l->address_size)
        return false;
    size_t at = (size_t)index * l->address_size;
    return read_address(l->addrs, l->addrs_len, &at, l->address_size, v);
}

/* One entry of a DWARF 5 range list: 1 a range (possibly empty), 2 a base
 * address or nothing to add, 0 the list's end, -1 malformed. */
static int rnglists_entry(const struct dwp_range_lists *l, struct dwp_range_walk *w,
                          Dwarf_Addr *low, Dwarf_Addr *high)
{
    const uint8_t *p = l->lists;
    size_t len = l->lists_len;
    if (w->at >= len)
        return -1;
    uint64_t a, b;
    switch (p[w->at++]) {
    case DW_RLE_end_of_list:
        return 0;
    case DW_RLE_base_addressx:
        return read_uleb(p, len, &w->at, &a) && indexed_address(l, a, &w->base) ? 2 : -1;
    case DW_RLE_startx_endx:
        return read_uleb(p, len, &w->at, &a) && read_uleb(p, len, &w->at, &b) &&
                       indexed_address(l, a, low) && indexed_address(l, b, high)
                   ? 1
                   : -1;
    case DW_RLE_startx_length:
        if (!read_uleb(p, len, &w->at, &a) || !read_uleb(p, len, &w->at, &b) ||
            !indexed_address(l, a, low))
            return -1;
        *high = *low + b;
        return 1;
    case DW_RLE_offset_pair:
        if (!read_uleb(p, len, &w->at, &a) || !read_uleb(p, len, &w->at, &b))
            return -1;
        *low = w->base + a;
        *high = w->base + b;
        return 1;
    case DW_RLE_base_address:
        return read_address(p, len, &w->at, l->address_size, &w->base) ? 2 : -1;
    case DW_RLE_start_end:
        return read_address(p, len, &w->at, l->address_size, low) &&
                       read_address(p, len, &w->at, l->address_size, high)
                   ? 1
                   : -1;
    case DW_RLE_start_length:
        if (!read_address(p, len, &w->at, l->address_size, low) ||
            !read_uleb(p, len, &w->at, &b))
            return -1;
        *high = *low + b;
        return 1;
    default:
        return -1;
    }
}

/* One entry of a DWARF 4 .debug_ranges list, as rnglists_entry. */
static int ranges_entry(const struct dwp_range_lists *l, struct dwp_range_walk *w,
                        Dwarf_Addr *low, Dwarf_Addr *high)
{
    Dwarf_Addr a, b;
    Dwarf_Addr all_ones = l->address_size == 8 ? ~(Dwarf_Addr)0 : 0xffffffffu;
    if (!read_address(l->lists, l->lists_len, &w->at, l->address_size, &a) ||
        !read_address(l->lists, l->lists_len, &w->at, l->address_size, &b))
        return -1;
    if (a == 0 && b == 0)
        return 0;
    if (a == all_ones) {
        w->base = b;
        return 2;
    }
    *low = w->base + a;
    *high = w->base + b;
    return 1;
}

int dwp_range_next(const struct dwp_range_lists *l, struct dwp_range_walk *w, Dwarf_Addr *low,
                   Dwarf_Addr *high)
{
    if (l->address_size != 4 && l->address_size != 8)
        return -1;
    for (;;) {
        int r = l->version >= 5 ? rnglists_entry(l, w, low, high) : ranges_entry(l, w, low, high);
        if (r == 1 && *high > *low)
            return 1;
        if (r == 0 || r == -1)
            return r;
    }
}

/* ---- the package ---- */

struct dwp_unit {
    Elf *elf;     /* made of the package's slices; writes nothing */
    Dwarf *dw;
    struct dwp_range_lists ranges;
};

/* The package's sections that split units are made of. */
static const struct {
    enum dwp_section kind;   /* 0: not sliced, the whole section */
    const char *name;
} sections[] = {
    {DWP_INFO, ".debug_info.dwo"},       {DWP_ABBREV, ".debug_abbrev.dwo"},
    {DWP_LINE, ".debug_line.dwo"},       {DWP_STR_OFFSETS, ".debug_str_offsets.dwo"},
    {DWP_RNGLISTS, ".debug_rnglists.dwo"}, {0, ".debug_str.dwo"},
};
#define NSECTIONS (sizeof(sections) / sizeof(*sections))

struct dwp {
    int fd;
    Elf *elf;
    struct dwp_index index;
    Elf_Data *data[NSECTIONS];   /* the package's, by sections[] */
    struct dwp_unit **units;
    size_t nunits, units_cap;
    /* The skeleton units' file (one a module) and the sections split units
     * take from it, looked up once. */
    Elf *skeleton_file;
    Elf_Data *skeleton_addr, *skeleton_ranges;
};

/* The data of elf's section name (inflated when compressed), NULL when it
 * has none. */
static Elf_Data *section_named(Elf *elf, const char *name)
{
    size_t names;
    if (elf_getshdrstrndx(elf, &names) != 0)
        return NULL;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        const char *s = gelf_getshdr(scn, &sh) ? elf_strptr(elf, names, sh.sh_name) : NULL;
        if (!s || strcmp(s, name) || sh.sh_type == SHT_NOBITS)
            continue;
        if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
            return NULL;
        return elf_getdata(scn, NULL);
    }
    return NULL;
}

Elf *dwp_file(const struct dwp *p)
{
    return p->elf;
}

struct dwp *dwp_open(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct dwp *p = calloc(1, sizeof(*p));
    if (!p)
        abort();
    p->fd = fd;
    p->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    const char *ident = p->elf ? elf_getident(p->elf, NULL) : NULL;
    Elf_Data *index = ident && ident[EI_DATA] == ELFDATA2LSB && BYTE_ORDER == LITTLE_ENDIAN
                          ? section_named(p->elf, ".debug_cu_index")
                          : NULL;
    if (!index || !dwp_index_read(&p->index, index->d_buf, index->d_size)) {
        dwp_close(p);
        return NULL;
    }
    for (size_t i = 0; i < NSECTIONS; i++)
        p->data[i] = section_named(p->elf, sections[i].name);
    return p;
}

/* Adds a section of type holding [buf, buf + size) to elf, its name at
 * name_at in the section names; NULL when libelf cannot. */
static Elf_Scn *add_section(Elf *elf, size_t name_at, Elf64_Word type, const void *buf,
                            size_t size)
{
    Elf_Scn *scn = elf_newscn(elf);
    GElf_Shdr sh;
    Elf_Data *d = scn && gelf_getshdr(scn, &sh) ? elf_newdata(scn) : NULL;
    if (!d)
        return NULL;
    sh.sh_name = (Elf64_Word)name_at;
    sh.sh_type = type;
    sh.sh_size = size;
    d->d_buf = (void *)buf;
    d->d_size = size;
    d->d_type = ELF_T_BYTE;
    return gelf_update_shdr(scn, &sh) ? scn : NULL;
}

/* The names of a split unit's sections, each after a NUL. */
static const char section_names[] =
    "\0.shstrtab\0.debug_addr.dwo\0.debug_ranges.dwo\0.debug_info.dwo\0.debug_abbrev.dwo\0"
    ".debug_line.dwo\0.debug_str_offsets.dwo\0.debug_rnglists.dwo\0.debug_str.dwo";

static size_t section_name_at(const char *name)
{
    for (size_t at = 1; at < sizeof(section_names); at += strlen(section_names + at) + 1)
        if (!strcmp(section_names + at, name))
            return at;
    abort();   /* every name used is in the table */
}

/* [*data, *data + *len): d from offset on; false when d is NULL or
 * shorter. */
static bool section_from(const Elf_Data *d, uint64_t offset, const uint8_t **data, size_t *len)
{
    if (!d || !d->d_buf || offset > d->d_size)
        return false;
    *data = (const uint8_t *)d->d_buf + offset;
    *len = d->d_size - offset;
    return true;
}

/* Looks up the sections split units take from the skeleton units' file
 * (that of dw) when it is not the one looked in before. */
static void read_skeleton_file(struct dwp *p, Dwarf *dw)
{
    Elf *elf = dwarf_getelf(dw);
    if (elf == p->skeleton_file)
        return;
    p->skeleton_file = elf;
    p->skeleton_addr = section_named(elf, ".debug_addr");
    p->skeleton_ranges = section_named(elf, ".debug_ranges");
}

static uint64_t attr_value(Dwarf_Die *die, int name)
{
    Dwarf_Attribute attr;
    Dwarf_Word v = 0;
    if (dwarf_attr(die, name, &attr))
        dwarf_formudata(&attr, &v);
    return v;
}

/* The unit's Elf and Dwarf, made of row's slices and u->ranges.addrs;
 * false when a slice lies outside its section or elfutils will not read
 * them. */
static bool make_unit(struct dwp *p, uint32_t row, struct dwp_unit *u)
{
    u->elf = elf_begin(p->fd, ELF_C_WRITE, NULL);   /* never updated: nothing is written */
    GElf_Ehdr eh;
    if (!u->elf || !gelf_newehdr(u->elf, gelf_getclass(p->elf)) || !gelf_getehdr(u->elf, &eh) ||
        !add_section(u->elf, section_name_at(".debug_addr.dwo"), SHT_PROGBITS, u->ranges.addrs,
                     u->ranges.addrs_len))
        return false;
    /* DWARF 4: the skeleton's, which elfutils checks the DIEs' offsets against */
    if (u->ranges.lists && !add_section(u->elf, section_name_at(".debug_ranges.dwo"),
                                        SHT_PROGBITS, u->ranges.lists, u->ranges.lists_len))
        return false;
    for (size_t i = 0; i < NSECTIONS; i++) {
        Elf_Data *d = p->data[i];
        uint32_t off = 0, slice;
        size_t size = d ? d->d_size : 0;
        if (!d || !d->d_buf ||
            (sections[i].kind && !dwp_index_slice(&p->index, row, sections[i].kind, &off, &slice)))
            continue;   /* not in the package, or not in the unit */
        if (sections[i].kind && (off > d->d_size || d->d_size - off < (size = slice)))
            return false;
        const uint8_t *at = (const uint8_t *)d->d_buf + off;
        if (!add_section(u->elf, section_name_at(sections[i].name), SHT_PROGBITS, at, size))
            return false;
        if (sections[i].kind == DWP_RNGLISTS) {
            u->ranges.lists = at;
            u->ranges.lists_len = size;
        }
    }
    Elf_Scn *names = add_section(u->elf, section_name_at(".shstrtab"), SHT_STRTAB, section_names,
                                 sizeof(section_names));
    if (!names)
        return false;
    memcpy(eh.e_ident, elf_getident(p->elf, NULL), EI_NIDENT);
    eh.e_type = ET_REL;
    eh.e_version = EV_CURRENT;
    eh.e_shstrndx = (Elf64_Half)elf_ndxscn(names);
    return gelf_update_ehdr(u->elf, &eh) && (u->dw = dwarf_begin_elf(u->elf, DWARF_C_READ, NULL));
}

static void unit_free(struct dwp_unit *u)
{
    dwarf_end(u->dw);
    elf_end(u->elf);
    free(u);
}

const struct dwp_unit *dwp_split_unit(struct dwp *p, Dwarf_Die *skeleton, Dwarf_Die *split)
{
    uint64_t id;
    uint8_t address_size;
    Dwarf_Half version;
    uint32_t row;
    Dwarf *dw = dwarf_cu_getdwarf(skeleton->cu);
    if (!dw || dwarf_cu_info(skeleton->cu, &version, NULL, NULL, NULL, &id, &address_size,
                             NULL) != 0 ||
        !(row = dwp_index_row(&p->index, id)))
        return NULL;
    struct dwp_unit *u = calloc(1, sizeof(*u));
    if (!u)
        abort();
    Dwarf_Addr base = 0;
    if (dwarf_lowpc(skeleton, &base) != 0)
        base = 0;   /* a unit with DW_AT_ranges alone: offsets are from 0 */
    u->ranges = (struct dwp_range_lists){.base = base, .address_size = address_size,
                                         .version = version >= 5 ? 5 : 4};
    uint64_t addr_base =
        attr_value(skeleton, version >= 5 ? DW_AT_addr_base : DW_AT_GNU_addr_base);
    /* GNU's DWARF 4: range lists stay in the skeleton's file, from its base
     * (a file with none may have units that need none) */
    read_skeleton_file(p, dw);
    if (version < 5)
        section_from(p->skeleton_ranges, attr_value(skeleton, DW_AT_GNU_ranges_base),
                     &u->ranges.lists, &u->ranges.lists_len);
    bool made = section_from(p->skeleton_addr, addr_base, &u->ranges.addrs,
                             &u->ranges.addrs_len) &&
                make_unit(p, row, u);
    /* the unit of the skeleton's id, which a package made wrongly might not hold */
    Dwarf_CU *cu = NULL;
    Dwarf_Die die;
    uint8_t type;
    uint64_t split_id;
    made = made && dwarf_get_units(u->dw, NULL, &cu, NULL, &type, &die, NULL) == 0 &&
           type == DW_UT_split_compile &&
           dwarf_cu_info(cu, NULL, NULL, NULL, NULL, &split_id, NULL, NULL) == 0 && split_id == id;
    if (!made) {
        unit_free(u);
        return NULL;
    }
    *split = die;
    p->units = grow_array(p->units, &p->units_cap, p->nunits + 1, sizeof(*p->units));
    p->units[p->nunits++] = u;
    return u;
}

/* The offset in u's lists of the range list of die's DW_AT_ranges attr. */
static bool list_offset(const struct dwp_unit *u, Dwarf_Attribute *attr, size_t *offset)
{
    Dwarf_Word v;
    if (dwarf_formudata(attr, &v) != 0)
        return false;
    const struct dwp_range_lists *l = &u->ranges;
    if (dwarf_whatform(attr) != DW_FORM_rnglistx) {   /* an offset into the lists */
        *offset = (size_t)v;
        return true;
    }
    /* v indexes the offsets after the unit's header (64-bit DWARF: 20 bytes
     * and 8-byte offsets, else 12 and 4) */
    if (l->lists_len < 12)
        return false;
    bool wide = read32(l->lists) == 0xffffffffu;
    size_t header = wide ? 20 : 12, size = wide ? 8 : 4;
    uint64_t count = l->lists_len >= header ? read32(l->lists + header - 4) : 0;
    if (v >= count || header + (v + 1) * size > l->lists_len)
        return false;
    const uint8_t *at = l->lists + header + v * size;
    *offset = header + (size_t)(wide ? read64(at) : read32(at));
    return true;
}

ptrdiff_t dwp_ranges(const struct dwp_unit *u, Dwarf_Die *die, ptrdiff_t offset,
                     Dwarf_Addr *basep, Dwarf_Addr *low, Dwarf_Addr *high)
{
    Dwarf_Attribute attr;
    if (!dwarf_attr(die, DW_AT_ranges, &attr))   /* low and high pc, which elfutils reads */
        return dwarf_ranges(die, offset, basep, low, high);
    struct dwp_range_walk w = {(size_t)offset, *basep};
    if (offset == 0) {
        w.base = u->ranges.base;
        if (!list_offset(u, &attr, &w.at))
            return -1;
    }
    int r = dwp_range_next(&u->ranges, &w, low, high);
    *basep = w.base;
    return r == 1 ? (ptrdiff_t)w.at : r;
}

void dwp_close(struct dwp *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nunits; i++)
        unit_free(p->units[i]);
    free(p->units);
    elf_end(p->elf);
    close(p->fd);
    free(p);
}
