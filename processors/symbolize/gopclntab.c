// SPDX-License-Identifier: Apache-2.0
#include "gopclntab.h"

#include <stdlib.h>
#include <string.h>

enum { GO_116 = 0xfffffffa, GO_118 = 0xfffffff0, GO_120 = 0xfffffff1 };

struct go_pclntab {
    const uint8_t *data;
    size_t len;
    uint32_t magic;
    unsigned quantum, ptr_size;
    uint64_t nfunc, text;
    /* Offsets of the sub-tables from data. */
    uint64_t funcnames, cutab, filetab, pctab, functab;
    /* Where functions' data (inline trees) are: gofunc + offset; 0 when
     * not found. */
    uint64_t gofunc;
    const struct go_section *sections;
    size_t nsections;
};

enum { PCDATA_INLINE_INDEX = 2, FUNCDATA_INLINE_TREE = 3 };

static uint64_t le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

/* Bytes [off, off + n) of the table, or NULL when they run past its end. */
static const uint8_t *at(const struct go_pclntab *t, uint64_t off, uint64_t n)
{
    return off <= t->len && n <= t->len - off ? t->data + off : NULL;
}

/* A NUL-terminated string at off, or NULL. */
static const char *string_at(const struct go_pclntab *t, uint64_t off)
{
    const uint8_t *p = at(t, off, 1);
    return p && memchr(p, 0, t->len - off) ? (const char *)p : NULL;
}

/* Bytes [addr, addr + n) of the binary's sections, or NULL. */
static const uint8_t *at_address(const struct go_pclntab *t, uint64_t addr, uint64_t n)
{
    for (size_t i = 0; i < t->nsections; i++) {
        const struct go_section *s = &t->sections[i];
        if (addr >= s->addr && addr - s->addr <= s->len && n <= s->len - (addr - s->addr))
            return s->data + (addr - s->addr);
    }
    return NULL;
}

/* The runtime's first module data starts with the table's address and the
 * address of its function names; its gofunc field (Go 1.18: the 39th
 * word; 1.20 added two words before it) is the base of functions' data. */
static uint64_t find_gofunc(const struct go_pclntab *t, uint64_t addr)
{
    if (t->magic == GO_116 || t->ptr_size != 8)
        return 0;
    unsigned gofunc_word = t->magic == GO_118 ? 38 : 40;
    for (size_t i = 0; i < t->nsections; i++) {
        const struct go_section *s = &t->sections[i];
        for (size_t off = 0; off + 8 * (gofunc_word + 1) <= s->len; off += 8)
            if (le(s->data + off, 8) == addr && le(s->data + off + 8, 8) == addr + t->funcnames)
                return le(s->data + off + 8 * gofunc_word, 8);
    }
    return 0;
}

struct go_pclntab *go_pclntab_open(const uint8_t *data, size_t len, uint64_t addr, uint64_t text,
                                   const struct go_section *sections, size_t nsections)
{
    if (len < 8)
        return NULL;
    struct go_pclntab h = {.data = data, .len = len, .magic = (uint32_t)le(data, 4),
                           .quantum = data[6], .ptr_size = data[7]};
    if ((h.magic != GO_116 && h.magic != GO_118 && h.magic != GO_120) || data[4] || data[5] ||
        !h.quantum || (h.ptr_size != 4 && h.ptr_size != 8))
        return NULL;
    /* nfunc, nfiles, [textStart,] then the offsets of funcnametab, cutab,
     * filetab, pctab and the function table: one pointer-sized word each. */
    unsigned words = h.magic == GO_116 ? 7 : 8, w = h.ptr_size;
    const uint8_t *p = at(&h, 8, (uint64_t)words * w);
    if (!p)
        return NULL;
    h.nfunc = le(p, w);
    unsigned i = 2;
    h.text = h.magic == GO_116 ? 0 : le(p + w * i++, w);
    if (!h.text)
        h.text = text;
    h.funcnames = le(p + w * i++, w);
    h.cutab = le(p + w * i++, w);
    h.filetab = le(p + w * i++, w);
    h.pctab = le(p + w * i++, w);
    h.functab = le(p + w * i, w);
    /* nfunc + 1 entries (the last one is the end of the text). */
    uint64_t entry = h.magic == GO_116 ? 2 * w : 8;
    if (h.nfunc > len || !at(&h, h.functab, (h.nfunc + 1) * entry))
        return NULL;
    struct go_pclntab *t = malloc(sizeof(*t));
    if (!t)
        abort();
    *t = h;
    t->sections = sections;
    t->nsections = nsections;
    t->gofunc = find_gofunc(t, addr);
    return t;
}

/* The start address of function i of the function table (i <= nfunc). */
static uint64_t entry_pc(const struct go_pclntab *t, uint64_t i)
{
    if (t->magic == GO_116)
        return le(t->data + t->functab + i * 2 * t->ptr_size, t->ptr_size);
    return t->text + le(t->data + t->functab + i * 8, 4);
}

/* The offset of function i's record from the function table. */
static uint64_t func_offset(const struct go_pclntab *t, uint64_t i)
{
    if (t->magic == GO_116)
        return le(t->data + t->functab + i * 2 * t->ptr_size + t->ptr_size, t->ptr_size);
    return le(t->data + t->functab + i * 8 + 4, 4);
}

static bool uvarint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    *v = 0;
    for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return true;
    }
    return false;
}

/* The value a pc-value table (at off in pctab, for a function starting at
 * entry) has at addr, or -1. */
static int64_t pc_value(const struct go_pclntab *t, uint32_t off, uint64_t entry, uint64_t addr)
{
    const uint8_t *p = off ? at(t, t->pctab + off, 1) : NULL;
    if (!p)
        return -1;
    const uint8_t *end = t->data + t->len;
    uint32_t value = UINT32_MAX;   /* Go's int32 -1, wrapping as Go's arithmetic does */
    uint64_t pc = entry;
    for (bool first = true;; first = false) {
        uint64_t delta, step;
        if (!uvarint(&p, end, &delta) || (delta == 0 && !first) || !uvarint(&p, end, &step))
            return -1;
        value += (uint32_t)(delta & 1 ? ~(delta >> 1) : delta >> 1);   /* zig-zag */
        pc += step * t->quantum;
        if (addr < pc)
            return (int32_t)value;
    }
}

/* The function record holding addr (its entry in *entry), or NULL. The
 * record: entry, then name offset, args, deferreturn, pcsp, pcfile, pcln,
 * npcdata, cuOffset (4 bytes each after the entry), [startLine (1.20)],
 * funcID, flag, a pad byte, nfuncdata, then npcdata and nfuncdata 4-byte
 * offsets. */
static const uint8_t *func_at(const struct go_pclntab *t, uint64_t addr, uint64_t *entry)
{
    if (!t->nfunc || addr < entry_pc(t, 0) || addr >= entry_pc(t, t->nfunc))
        return NULL;
    uint64_t lo = 0, hi = t->nfunc;   /* entry_pc(lo) <= addr < entry_pc(hi) */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (entry_pc(t, mid) <= addr)
            lo = mid;
        else
            hi = mid;
    }
    *entry = entry_pc(t, lo);
    unsigned entry_size = t->magic == GO_116 ? t->ptr_size : 4;
    const uint8_t *f = at(t, t->functab + func_offset(t, lo), entry_size + 8 * 4);
    return f ? f + entry_size : NULL;   /* past the entry */
}

/* The file and line function f (starting at entry) has at addr. */
static void position(const struct go_pclntab *t, const uint8_t *f, uint64_t entry, uint64_t addr,
                     struct go_frame *out)
{
    int64_t file_index = pc_value(t, (uint32_t)le(f + 16, 4), entry, addr);
    const uint8_t *cu = file_index < 0 ? NULL
                        : at(t, t->cutab + 4 * (le(f + 28, 4) + (uint64_t)file_index), 4);
    const char *path = cu ? string_at(t, t->filetab + le(cu, 4)) : NULL;
    int64_t line = pc_value(t, (uint32_t)le(f + 20, 4), entry, addr);
    out->file = path ? path : "";
    out->line = line > 0 ? line : 0;
}

/* The address of function f's inline tree (its entries' size in
 * *entry_size) and the pc-value table of inline tree indexes; 0 when f has
 * none or it cannot be found. */
static uint64_t inline_tree(const struct go_pclntab *t, const uint8_t *f, uint32_t *index_table,
                            unsigned *entry_size)
{
    if (!t->gofunc)
        return 0;
    uint64_t head = (uint64_t)(f - t->data) + (t->magic == GO_118 ? 36 : 40);   /* 1.20: startLine */
    const uint8_t *counts = at(t, head - 4, 4);
    if (!counts)
        return 0;
    uint32_t npcdata = (uint32_t)le(f + 24, 4), nfuncdata = counts[3];
    const uint8_t *tables = at(t, head, 4 * ((uint64_t)npcdata + nfuncdata));
    if (!tables || npcdata <= PCDATA_INLINE_INDEX || nfuncdata <= FUNCDATA_INLINE_TREE)
        return 0;
    *index_table = (uint32_t)le(tables + 4 * PCDATA_INLINE_INDEX, 4);
    uint32_t tree = (uint32_t)le(tables + 4 * ((uint64_t)npcdata + FUNCDATA_INLINE_TREE), 4);
    *entry_size = t->magic == GO_118 ? 20 : 16;
    return tree == UINT32_MAX ? 0 : t->gofunc + tree;
}

size_t go_pclntab_frames(const struct go_pclntab *t, uint64_t addr, struct go_frame *out,
                         size_t max)
{
    uint64_t entry;
    const uint8_t *f = max ? func_at(t, addr, &entry) : NULL;
    const char *name = f ? string_at(t, t->funcnames + le(f, 4)) : NULL;
    if (!name)
        return 0;
    size_t n = 0;
    position(t, f, entry, addr, &out[0]);
    uint32_t index_table = 0;
    unsigned size = 0;
    uint64_t tree = inline_tree(t, f, &index_table, &size);
    /* An inlined call: its function's name offset and the offset from the
     * entry of an instruction at its call site (1.18: parent, funcID, file,
     * line, name, parentPc; 1.20: funcID, name, parentPc, startLine). */
    unsigned name_at = t->magic == GO_118 ? 12 : 4, parent_pc_at = name_at + 4;
    uint64_t pc = addr;
    int64_t ix;
    while (tree && n + 1 < max && (ix = pc_value(t, index_table, entry, pc)) >= 0) {
        const uint8_t *call = at_address(t, tree + (uint64_t)ix * size, size);
        const char *callee = call ? string_at(t, t->funcnames + le(call + name_at, 4)) : NULL;
        if (!callee)
            break;
        out[n++].function = callee;
        pc = entry + le(call + parent_pc_at, 4);   /* the call site, in the caller */
        position(t, f, entry, pc, &out[n]);
    }
    out[n++].function = name;
    return n;
}

void go_pclntab_free(struct go_pclntab *t)
{
    free(t);
}
