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
};

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

struct go_pclntab *go_pclntab_open(const uint8_t *data, size_t len, uint64_t text)
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

bool go_pclntab_lookup(const struct go_pclntab *t, uint64_t addr, const char **function,
                       const char **file, int64_t *line)
{
    if (!t->nfunc || addr < entry_pc(t, 0) || addr >= entry_pc(t, t->nfunc))
        return false;
    uint64_t lo = 0, hi = t->nfunc;   /* entry_pc(lo) <= addr < entry_pc(hi) */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (entry_pc(t, mid) <= addr)
            lo = mid;
        else
            hi = mid;
    }
    /* The record: entry, then name offset, args, deferreturn, pcsp, pcfile,
     * pcln, npcdata, cuOffset (4 bytes each after the entry). */
    unsigned entry_size = t->magic == GO_116 ? t->ptr_size : 4;
    const uint8_t *f = at(t, t->functab + func_offset(t, lo), entry_size + 8 * 4);
    if (!f)
        return false;
    const uint8_t *fields = f + entry_size;
    const char *name = string_at(t, t->funcnames + le(fields, 4));
    if (!name)
        return false;
    uint64_t entry = entry_pc(t, lo);
    int64_t file_index = pc_value(t, (uint32_t)le(fields + 16, 4), entry, addr);
    const uint8_t *cu = file_index < 0 ? NULL
                        : at(t, t->cutab + 4 * (le(fields + 28, 4) + (uint64_t)file_index), 4);
    const char *path = cu ? string_at(t, t->filetab + le(cu, 4)) : NULL;
    int64_t n = pc_value(t, (uint32_t)le(fields + 20, 4), entry, addr);
    *function = name;
    *file = path ? path : "";
    *line = n > 0 ? n : 0;
    return true;
}

void go_pclntab_free(struct go_pclntab *t)
{
    free(t);
}
