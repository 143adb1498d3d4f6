// SPDX-License-Identifier: Apache-2.0
#include "kernel_symbols.h"

#include "../../lib/grow.h"
#include "../../lib/search.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct ksym {
    uint64_t addr;
    uint32_t name;        /* offset in names */
};

/* A table read line by line (/proc/kallsyms cannot be mapped), or a sorted
 * kallsyms file mapped and searched where it lies (perf's build-id cache
 * copy): no copy of its 120,000 names. */
struct kernel_symbols {
    struct ksym *syms;    /* sorted by address */
    size_t n;
    char *names;
    size_t names_len;
    const char *map;      /* the mapped file, or NULL */
    size_t map_len;
    size_t last_text;     /* offset of its last text symbol's line */
    char found[512];      /* the name kernel_symbols_find gave last (mapped) */
    uint64_t text;
};

/* By address, then in file order (names are stored in it), so that of
 * aliases at one address the last one listed is found, as when the file
 * is searched in place. */
static int by_address(const void *a, const void *b)
{
    const struct ksym *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return x->name < y->name ? -1 : x->name > y->name;
}

/* Parses one "address type name[\t[module]]" line starting at line and
 * ending at a newline or at end: false when it is not one. name points
 * into line, its length in *name_len. */
static bool parse_line(const char *line, const char *end, uint64_t *addr, char *type,
                       const char **name, size_t *name_len)
{
    uint64_t a = 0;
    const char *p = line;
    for (; p < end; p++) {
        int d = *p >= '0' && *p <= '9' ? *p - '0' : (*p | 0x20) >= 'a' && (*p | 0x20) <= 'f'
                                                      ? (*p | 0x20) - 'a' + 10 : -1;
        if (d < 0)
            break;
        a = a << 4 | (uint64_t)d;
    }
    if (p == line || p - line > 16 || end - p < 4 || p[0] != ' ' || p[2] != ' ')
        return false;
    *addr = a;
    *type = p[1];
    *name = p + 3;
    size_t n = 0;
    for (char c; *name + n < end && (c = (*name)[n]) != ' ' && c != '\t' && c != '\r' && c != '\n';)
        n++;
    *name_len = n;
    return n > 0;
}

static bool is_text(char type)
{
    return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

/* Gives back the unused tail of a grown array. */
static void *fit(void *array, size_t bytes)
{
    void *fitted = bytes ? realloc(array, bytes) : NULL;
    return fitted ? fitted : array;
}

/* The start of the first line at or after offset pos of the mapped file. */
static size_t line_at_or_after(const struct kernel_symbols *k, size_t pos)
{
    if (!pos)
        return 0;
    const char *nl = memchr(k->map + pos - 1, '\n', k->map_len - (pos - 1));
    return nl ? (size_t)(nl - k->map) + 1 : k->map_len;
}

/* The start of the line before the one at pos (pos > 0). */
static size_t line_before(const struct kernel_symbols *k, size_t pos)
{
    size_t at = pos - 1;   /* the newline ending that line */
    while (at > 0 && k->map[at - 1] != '\n')
        at--;
    return at;
}

/* Parses the mapped file's line at pos. */
static bool mapped_line(const struct kernel_symbols *k, size_t pos, uint64_t *addr, char *type,
                        const char **name, size_t *len)
{
    return parse_line(k->map + pos, k->map + k->map_len, addr, type, name, len);
}

/* The kallsyms file at path mapped, when it is a regular file whose lines
 * are sorted by address and hold text symbols; else NULL. */
static struct kernel_symbols *load_mapped(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return NULL;
    void *map = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0
                    ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    close(fd);
    if (map == MAP_FAILED)
        return NULL;
    struct kernel_symbols *k = calloc(1, sizeof(*k));
    if (!k)
        abort();
    k->map = map;
    k->map_len = (size_t)st.st_size;
    bool sorted = true, any_address = false;
    uint64_t previous = 0;
    size_t released = 0, step = 1u << 20;
    for (size_t pos = 0; pos < k->map_len && sorted; pos = line_at_or_after(k, pos + 1)) {
        if (pos - released >= step) {   /* pages read stay in the page cache, not resident here */
            madvise((char *)map + released, step, MADV_DONTNEED);
            released += step;
        }
        uint64_t addr;
        char type;
        const char *name;
        size_t len;
        if (!mapped_line(k, pos, &addr, &type, &name, &len))
            continue;
        sorted = addr >= previous;
        previous = addr;
        any_address |= addr != 0;
        if (is_text(type)) {
            k->n++;
            k->last_text = pos;
        }
        if (len == 5 && !memcmp(name, "_text", 5))
            k->text = addr;
    }
    if (!sorted || !any_address || !k->n) {
        kernel_symbols_free(k);
        return NULL;
    }
    madvise(map, k->map_len, MADV_DONTNEED);   /* lookups touch a few pages again */
    return k;
}

/* The last text symbol at or below addr in the mapped file (not past its
 * last text symbol), or NULL. */
static const char *find_mapped(struct kernel_symbols *k, uint64_t addr)
{
    uint64_t a;
    char type;
    const char *name;
    size_t len;
    size_t lo = 0, hi = k->map_len;   /* lines in [lo, hi): the one at lo is <= addr */
    if (!mapped_line(k, 0, &a, &type, &name, &len) || a > addr)
        return NULL;
    for (;;) {
        size_t mid = line_at_or_after(k, lo + (hi - lo) / 2);
        if (mid >= hi)
            mid = line_at_or_after(k, lo + 1);
        if (mid >= hi)
            break;
        if (mapped_line(k, mid, &a, &type, &name, &len) && a <= addr)
            lo = mid;
        else
            hi = mid;
    }
    if (lo >= k->last_text)
        return NULL;   /* past the last text symbol, as the table does */
    for (size_t pos = lo, looked = 0; looked < 1024; looked++) {
        if (mapped_line(k, pos, &a, &type, &name, &len) && is_text(type)) {
            snprintf(k->found, sizeof(k->found), "%.*s", (int)len, name);
            return k->found;
        }
        if (!pos)
            break;
        pos = line_before(k, pos);
    }
    return NULL;
}

/* Reads the text symbols of a kallsyms-format file line by line. */
static struct kernel_symbols *load_table(const char *path, char *err, size_t errlen)
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
        if (!parse_line(line, line + strlen(line), &addr, &type, &name, &len))
            continue;
        any_address |= addr != 0;
        if (!is_text(type))
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

struct kernel_symbols *kernel_symbols_load(const char *path, char *err, size_t errlen)
{
    struct kernel_symbols *k = load_mapped(path);
    return k ? k : load_table(path, err, errlen);
}

const char *kernel_symbols_find(struct kernel_symbols *k, uint64_t addr)
{
    if (k->map)
        return find_mapped(k, addr);
    size_t lo = first_above(k->syms, k->n, sizeof(*k->syms), offsetof(struct ksym, addr), addr);
    if (!lo || lo == k->n)   /* below the first, or past the last symbol */
        return NULL;
    return k->names + k->syms[lo - 1].name;
}

uint64_t kernel_symbols_text(const struct kernel_symbols *k)
{
    return k->text;
}

void kernel_symbols_free(struct kernel_symbols *k)
{
    if (!k)
        return;
    free(k->syms);
    free(k->names);
    if (k->map)
        munmap((void *)(uintptr_t)k->map, k->map_len);
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
