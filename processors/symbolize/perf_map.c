// SPDX-License-Identifier: Apache-2.0
#include "perf_map.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../lib/grow.h"
#include "../../lib/search.h"

struct jit_symbol {
    uint64_t start, size;
    uint32_t name;      /* offset in names */
    uint32_t order;     /* line number: later lines win */
};

struct perf_map {
    struct jit_symbol *entries;   /* sorted by start */
    size_t n;
    char *names;
    size_t names_len;
    off_t size;
    struct timespec mtime;
};

static int by_start(const void *a, const void *b)
{
    const struct jit_symbol *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

struct perf_map *perf_map_load(const char *path)
{
    FILE *f = fopen(path, "r");
    struct stat st;
    if (!f)
        return NULL;
    struct perf_map *m = calloc(1, sizeof(*m));
    if (!m)
        abort();
    if (fstat(fileno(f), &st) == 0) {
        m->size = st.st_size;
        m->mtime = st.st_mtim;
    }
    size_t cap = 0, names_cap = 0;
    char *line = NULL;
    size_t line_cap = 0;
    while (getline(&line, &line_cap, f) > 0) {
        char *end;
        uint64_t start = strtoull(line, &end, 16);
        if (end == line || *end != ' ')
            continue;
        char *size_at = end + 1;
        uint64_t size = strtoull(size_at, &end, 16);
        if (end == size_at || *end != ' ' || !size)
            continue;
        char *name = end + 1;
        name[strcspn(name, "\r\n")] = 0;
        size_t len = strlen(name) + 1;
        m->names = grow_array(m->names, &names_cap, m->names_len + len, 1);
        memcpy(m->names + m->names_len, name, len);
        m->entries = grow_array(m->entries, &cap, m->n + 1, sizeof(*m->entries));
        m->entries[m->n] = (struct jit_symbol){start, size, (uint32_t)m->names_len, (uint32_t)m->n};
        m->n++;
        m->names_len += len;
    }
    free(line);
    fclose(f);
    if (!m->n) {
        perf_map_free(m);
        return NULL;
    }
    qsort(m->entries, m->n, sizeof(*m->entries), by_start);
    return m;
}

const char *perf_map_find(const struct perf_map *m, uint64_t addr)
{
    size_t lo = first_above(m->entries, m->n, sizeof(*m->entries),
                            offsetof(struct jit_symbol, start), addr);
    /* Entries starting at or below addr, nearest first: the latest-written
     * one that covers addr. Bounded look-back keeps this cheap. */
    const struct jit_symbol *best = NULL;
    for (size_t i = lo, looked = 0; i-- > 0 && looked < 64; looked++) {
        const struct jit_symbol *e = &m->entries[i];
        if (addr - e->start < e->size && (!best || e->order > best->order))
            best = e;
    }
    return best ? m->names + best->name : NULL;
}

void perf_map_stamp(const struct perf_map *m, off_t *size, struct timespec *mtime)
{
    *size = m->size;
    *mtime = m->mtime;
}

size_t perf_map_footprint(const struct perf_map *m)
{
    return sizeof(*m) + m->n * sizeof(*m->entries) + m->names_len;
}

void perf_map_free(struct perf_map *m)
{
    if (!m)
        return;
    free(m->entries);
    free(m->names);
    free(m);
}
