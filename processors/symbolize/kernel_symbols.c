// SPDX-License-Identifier: Apache-2.0
#include "kernel_symbols.h"

#include "../../lib/grow.h"
#include "../../lib/search.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ksym {
    uint64_t addr;
    uint32_t name;        /* offset in names */
};

struct kernel_symbols {
    struct ksym *syms;    /* sorted by address */
    size_t n;
    char *names;
    size_t names_len;
    uint64_t text;
};

static int by_address(const void *a, const void *b)
{
    const struct ksym *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Parses one "address type name[\t[module]]" line: false when it is not
 * one. name points into line, its length in *name_len. */
static bool parse_line(const char *line, uint64_t *addr, char *type, const char **name,
                       size_t *name_len)
{
    uint64_t a = 0;
    const char *p = line;
    for (;; p++) {
        int d = *p >= '0' && *p <= '9' ? *p - '0' : (*p | 0x20) >= 'a' && (*p | 0x20) <= 'f'
                                                      ? (*p | 0x20) - 'a' + 10 : -1;
        if (d < 0)
            break;
        a = a << 4 | (uint64_t)d;
    }
    if (p == line || p - line > 16 || p[0] != ' ' || !p[1] || p[2] != ' ')
        return false;
    *addr = a;
    *type = p[1];
    *name = p + 3;
    *name_len = strcspn(*name, " \t\r\n");
    return *name_len > 0;
}

/* Gives back the unused tail of a grown array. */
static void *fit(void *array, size_t bytes)
{
    void *fitted = bytes ? realloc(array, bytes) : NULL;
    return fitted ? fitted : array;
}

struct kernel_symbols *kernel_symbols_load(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open", path);
        return NULL;
    }
    struct kernel_symbols *k = calloc(1, sizeof(*k));
    if (!k)
        abort();
    size_t cap = 0, names_cap = 0;
    bool any_address = false;
    char line[1024];
    while (fgets(line, sizeof(line), f)) {
        uint64_t addr;
        char type;
        const char *name;
        size_t len;
        if (!parse_line(line, &addr, &type, &name, &len))
            continue;
        any_address |= addr != 0;
        if (type != 't' && type != 'T' && type != 'w' && type != 'W')
            continue;
        k->names = grow_array(k->names, &names_cap, k->names_len + len + 1, 1);
        memcpy(k->names + k->names_len, name, len);
        k->names[k->names_len + len] = '\0';
        k->syms = grow_array(k->syms, &cap, k->n + 1, sizeof(*k->syms));
        k->syms[k->n++] = (struct ksym){addr, (uint32_t)k->names_len};
        k->names_len += len + 1;
        if (len == 5 && !memcmp(name, "_text", 5))
            k->text = addr;
    }
    fclose(f);
    if (!any_address || !k->n) {
        snprintf(err, errlen, "%s: %s", path, any_address ? "no text symbols" : "addresses hidden "
                 "(kernel.kptr_restrict)");
        kernel_symbols_free(k);
        return NULL;
    }
    k->names = fit(k->names, k->names_len);
    k->syms = fit(k->syms, k->n * sizeof(*k->syms));
    bool sorted = true;   /* kallsyms files mostly are */
    for (size_t i = 1; i < k->n && sorted; i++)
        sorted = k->syms[i - 1].addr <= k->syms[i].addr;
    if (!sorted)
        qsort(k->syms, k->n, sizeof(*k->syms), by_address);
    return k;
}

const char *kernel_symbols_find(const struct kernel_symbols *k, uint64_t addr)
{
    size_t lo = first_above(k->syms, k->n, sizeof(*k->syms), offsetof(struct ksym, addr), addr);
    if (!lo || lo == k->n)   /* below the first, or past the last symbol */
        return NULL;
    return k->names + k->syms[lo - 1].name;
}

uint64_t kernel_symbols_text(const struct kernel_symbols *k)
{
    return k->text;
}

size_t kernel_symbols_footprint(const struct kernel_symbols *k)
{
    return k->n * sizeof(*k->syms) + k->names_len;
}

void kernel_symbols_free(struct kernel_symbols *k)
{
    if (!k)
        return;
    free(k->syms);
    free(k->names);
    free(k);
}

void kernel_build_id(const char *notes_path, char out[41])
{
    out[0] = 0;
    FILE *f = fopen(notes_path, "rb");
    if (!f)
        return;
    unsigned char buf[4096];
    size_t len = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    /* ELF notes: namesz, descsz, type, name (4-aligned), desc (4-aligned). */
    for (size_t at = 0; at + 12 <= len;) {
        uint32_t namesz, descsz, type;
        memcpy(&namesz, buf + at, 4);
        memcpy(&descsz, buf + at + 4, 4);
        memcpy(&type, buf + at + 8, 4);
        size_t name_at = at + 12, desc_at = name_at + ((namesz + 3u) & ~3u);
        if (desc_at > len || descsz > len - desc_at)
            return;
        if (type == 3 && namesz == 4 && !memcmp(buf + name_at, "GNU", 4) && descsz <= 20) {
            for (uint32_t i = 0; i < descsz; i++)
                snprintf(out + 2 * i, 3, "%02x", buf[desc_at + i]);
            return;
        }
        at = desc_at + ((descsz + 3u) & ~3u);
    }
}
