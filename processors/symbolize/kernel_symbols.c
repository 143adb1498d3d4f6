// SPDX-License-Identifier: Apache-2.0
#include "kernel_symbols.h"

#include "../../lib/grow.h"
#include "../../lib/search.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct ksym {
    uint64_t addr;
    uint32_t name;        /* offset in names */
};

/* Every BLOCK_LINES-th line of a file searched in place: a search reads
 * the block of lines between two of them (a few KiB) with one pread. */
struct block_start {
    uint64_t addr;
    uint64_t pos;
};
#define BLOCK_LINES 64
#define MAX_BLOCK (64u << 10)   /* longer blocks: not a kallsyms file */

/* A table read line by line (/proc/kallsyms cannot be searched in place),
 * or a sorted kallsyms file searched where it lies (perf's build-id cache
 * copy): no copy of its 120,000 names, and no page of it kept resident. */
struct kernel_symbols {
    struct ksym *syms;    /* sorted by address */
    size_t n;
    char *names;
    size_t names_len;
    int fd;               /* the file searched in place, or -1 */
    uint64_t file_len;
    struct block_start *blocks;   /* of the file, by address */
    size_t nblocks;
    uint64_t last_text;   /* offset of its last text symbol's line */
    char *block;          /* the block read last, MAX_BLOCK + 1 bytes */
    size_t block_index;   /* which one (SIZE_MAX: none yet) */
    ssize_t block_len;
    char found[512];      /* the name kernel_symbols_find gave last (in place) */
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

/* What a scan of a file in address order has seen so far. */
struct scan {
    bool sorted, any_address;
    uint64_t previous, lines;
};

/* Notes the line at pos (of len bytes, no newline) of the file being
 * scanned. */
static void scan_line(struct kernel_symbols *k, struct scan *sc, size_t *blocks_cap,
                      const char *line, size_t len, uint64_t pos)
{
    uint64_t addr;
    char type;
    const char *name;
    size_t name_len;
    if (!parse_line(line, line + len, &addr, &type, &name, &name_len))
        return;
    sc->sorted &= addr >= sc->previous;
    sc->previous = addr;
    sc->any_address |= addr != 0;
    if (sc->lines++ % BLOCK_LINES == 0) {
        k->blocks = grow_array(k->blocks, blocks_cap, k->nblocks + 1, sizeof(*k->blocks));
        k->blocks[k->nblocks++] = (struct block_start){addr, pos};
    }
    if (is_text(type)) {
        k->n++;
        k->last_text = pos;
    }
    if (name_len == 5 && !memcmp(name, "_text", 5))
        k->text = addr;
}

/* Reads the file on k->fd through once, in chunks, for its block starts:
 * false when it is not sorted by address, has a block longer than
 * MAX_BLOCK or cannot be read. */
static bool scan_file(struct kernel_symbols *k)
{
    enum { SCAN_CHUNK = 1 << 16 };
    char *buf = must_malloc(SCAN_CHUNK + MAX_BLOCK);
    struct scan sc = {.sorted = true};
    size_t have = 0, blocks_cap = 0;
    uint64_t base = 0;    /* file offset of buf[0] */
    bool ok = true;
    for (bool end = false; !end && ok && sc.sorted;) {
        ssize_t n = read(k->fd, buf + have, SCAN_CHUNK);
        ok = n >= 0;
        end = n <= 0;
        have += n > 0 ? (size_t)n : 0;
        size_t at = 0;
        while (at < have) {   /* whole lines, and at the end what is left */
            char *nl = memchr(buf + at, '\n', have - at);
            if (!nl && !end)
                break;
            size_t len = nl ? (size_t)(nl - (buf + at)) : have - at;
            scan_line(k, &sc, &blocks_cap, buf + at, len, base + at);
            at += len + (nl != NULL);
        }
        memmove(buf, buf + at, have - at);
        have -= at;
        base += at;
        ok &= have < MAX_BLOCK;   /* a line longer than that */
    }
    k->file_len = base + have;
    for (size_t i = 0; ok && i < k->nblocks; i++)
        ok = (i + 1 < k->nblocks ? k->blocks[i + 1].pos : k->file_len) - k->blocks[i].pos <= MAX_BLOCK;
    free(buf);
    return ok && sc.sorted && sc.any_address && k->n;
}

/* The kallsyms file at path searched in place, when it is a regular file
 * whose lines are sorted by address and hold text symbols; else NULL. */
static struct kernel_symbols *load_in_place(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
        close(fd);
        return NULL;
    }
    struct kernel_symbols *k = calloc(1, sizeof(*k));
    if (!k)
        abort();
    k->fd = fd;
    if (!scan_file(k)) {
        kernel_symbols_free(k);
        return NULL;
    }
    posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
    k->block = must_malloc(MAX_BLOCK + 1);
    k->block_index = SIZE_MAX;
    return k;
}

/* Reads block b of the file into k->block, unless it is there already
 * (lookups come in address order): its length, or -1. */
static ssize_t read_block(struct kernel_symbols *k, size_t b)
{
    if (b == k->block_index)
        return k->block_len;
    uint64_t from = k->blocks[b].pos;
    uint64_t to = b + 1 < k->nblocks ? k->blocks[b + 1].pos : k->file_len;
    ssize_t n = pread(k->fd, k->block, (size_t)(to - from), (off_t)from);
    if (n >= 0)
        k->block[n] = 0;
    k->block_index = n >= 0 ? b : SIZE_MAX;
    k->block_len = n;
    return n;
}

/* The last text symbol at or below addr in the file searched in place
 * (not past its last text symbol), or NULL. Aliases at one address: the
 * last one listed. */
static const char *find_in_place(struct kernel_symbols *k, uint64_t addr)
{
    size_t after = first_above(k->blocks, k->nblocks, sizeof(*k->blocks),
                               offsetof(struct block_start, addr), addr);
    bool below_last = false;   /* the last line at or below addr was looked at */
    /* Back from the block holding addr, at most 16 blocks (1024 lines). */
    for (size_t b = after; b-- > 0 && after - b <= 16;) {
        ssize_t n = read_block(k, b);
        if (n < 0)
            return NULL;
        const char *best = NULL;
        size_t best_len = 0;
        for (size_t at = 0; at < (size_t)n;) {
            const char *nl = memchr(k->block + at, '\n', (size_t)n - at);
            size_t len = nl ? (size_t)(nl - (k->block + at)) : (size_t)n - at;
            uint64_t a;
            char type;
            const char *name;
            size_t name_len;
            if (parse_line(k->block + at, k->block + at + len, &a, &type, &name, &name_len)) {
                if (a > addr)
                    break;
                if (!below_last && k->blocks[b].pos + at >= k->last_text)
                    return NULL;   /* past the last text symbol, as the table does */
                if (is_text(type)) {
                    best = name;
                    best_len = name_len;
                }
            }
            at += len + 1;
        }
        below_last = true;
        if (best) {
            snprintf(k->found, sizeof(k->found), "%.*s", (int)best_len, best);
            return k->found;
        }
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
    k->fd = -1;
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
    struct kernel_symbols *k = load_in_place(path);
    return k ? k : load_table(path, err, errlen);
}

const char *kernel_symbols_find(struct kernel_symbols *k, uint64_t addr)
{
    if (k->fd >= 0)
        return find_in_place(k, addr);
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
    free(k->blocks);
    free(k->block);
    if (k->fd >= 0)
        close(k->fd);
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
