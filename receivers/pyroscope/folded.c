// SPDX-License-Identifier: Apache-2.0
#include "folded.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/grow.h"

/* The sample types a units value stands for. */
struct units_info {
    const char *units;
    const char *type[2], *unit[2];
    int ntypes;
};

static const struct units_info known_units[] = {
    {"samples", {"samples", "cpu"}, {"count", "nanoseconds"}, 2},
    {"objects", {"inuse_objects", ""}, {"count", ""}, 1},
    {"bytes", {"inuse_space", ""}, {"bytes", ""}, 1},
    {"goroutines", {"goroutine", ""}, {"count", ""}, 1},
    {"lock_nanoseconds", {"delay", ""}, {"nanoseconds", ""}, 1},
    {"lock_samples", {"contentions", ""}, {"count", ""}, 1},
};

static uint32_t frame_location(struct folded_builder *b, const char *name, size_t len)
{
    const struct profd_host *host = b->host;
    struct profd_profile *p = b->p;
    uint32_t s = host->profile_intern(p, name, len);
    size_t old = b->name_cap;
    b->name_loc = grow_array(b->name_loc, &b->name_cap, (size_t)s + 1, sizeof(*b->name_loc));
    if (b->name_cap > old)
        memset(b->name_loc + old, 0, (b->name_cap - old) * sizeof(*b->name_loc));
    if (b->name_loc[s])
        return b->name_loc[s];
    *host->profile_add_function(p) = (struct profd_function){.name = s, .system_name = s};
    struct profd_line *line = host->profile_alloc(p, sizeof(*line));
    *line = (struct profd_line){.function = p->nfunctions};
    *host->profile_add_location(p) = (struct profd_location){.lines = line, .nlines = 1};
    return b->name_loc[s] = p->nlocations;
}

void folded_begin(struct folded_builder *b, const struct profd_host *host,
                  const struct folded_meta *meta, size_t size_hint)
{
    const struct units_info *u = &known_units[0];   /* samples, unless units says another */
    for (size_t i = 0; i < sizeof(known_units) / sizeof(*known_units); i++)
        if (!strcmp(meta->units, known_units[i].units))
            u = &known_units[i];
    *b = (struct folded_builder){.host = host};
    struct profd_profile *p = b->p = host->profile_new(size_hint * 2 + 4096);
    p->nsample_types = (uint32_t)u->ntypes;
    p->sample_types = host->profile_alloc(p, 2 * sizeof(*p->sample_types));
    for (int i = 0; i < u->ntypes; i++)
        p->sample_types[i] = (struct profd_value_type){
            host->profile_intern(p, u->type[i], strlen(u->type[i])),
            host->profile_intern(p, u->unit[i], strlen(u->unit[i]))};
    b->period = meta->cpu_period;
    if (u->ntypes == 2) {
        p->period_type = p->sample_types[1];
        p->period = b->period;
    }
    p->time_nanos = meta->time_nanos;
    p->duration_nanos = meta->duration_nanos;
}

bool folded_add(struct folded_builder *b, const char *stack, size_t len, int64_t count)
{
    const struct profd_host *host = b->host;
    struct profd_profile *p = b->p;
    uint32_t nframes = 1;
    for (size_t i = 0; i < len; i++)
        nframes += stack[i] == ';';
    uint32_t *locs = host->profile_alloc(p, nframes * sizeof(*locs));
    uint32_t k = nframes;   /* folded is root first; pprof wants the leaf first */
    for (size_t start = 0, i = 0; i <= len; i++) {
        if (i < len && stack[i] != ';')
            continue;
        if (i == start)
            return false;   /* an empty frame */
        locs[--k] = frame_location(b, stack + start, i - start);
        start = i + 1;
    }
    int64_t *values = host->profile_alloc(p, 2 * sizeof(*values));
    values[0] = count;
    if (count < 0 || __builtin_mul_overflow(count, b->period, &values[1]))
        return false;   /* a count no profile holds */
    *host->profile_add_sample(p) = (struct profd_sample){.locations = locs, .values = values,
                                                         .nlocations = nframes};
    return true;
}

struct profd_profile *folded_end(struct folded_builder *b, bool keep)
{
    struct profd_profile *p = b->p;
    free(b->name_loc);
    if (!keep) {
        b->host->profile_free(p);
        return NULL;
    }
    return p;
}

/* Parses the count at the end of a line: digits after the last space. */
static bool line_count(const char *line, size_t len, size_t *stack_len, int64_t *count)
{
    const char *sp = NULL;
    for (size_t i = len; i > 0; i--)
        if (line[i - 1] == ' ') {
            sp = line + i - 1;
            break;
        }
    if (!sp || sp == line || sp + 1 == line + len)
        return false;
    int64_t v = 0;
    for (const char *c = sp + 1; c < line + len; c++) {
        if (*c < '0' || *c > '9' || v > (INT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (*c - '0');
    }
    *stack_len = (size_t)(sp - line);
    *count = v;
    return true;
}

struct profd_profile *folded_profile(const struct profd_host *host, const char *text, size_t len,
                                     const struct folded_meta *meta, char *why, size_t whylen)
{
    struct folded_builder b;
    folded_begin(&b, host, meta, len);
    size_t lineno = 0;
    for (size_t start = 0; start < len;) {
        const char *nl = memchr(text + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - text) : len, n = end - start, stack_len = n;
        int64_t count = 1;
        lineno++;
        if (n && text[start + n - 1] == '\r')
            stack_len = --n;
        if (n && ((!meta->individual_lines && !line_count(text + start, n, &stack_len, &count)) ||
                  !folded_add(&b, text + start, stack_len, count))) {
            snprintf(why, whylen, "line %zu: not \"frame;frame;leaf%s\": \"%.*s\"", lineno,
                     meta->individual_lines ? "" : " count", (int)(n < 60 ? n : 60),
                     text + start);
            return folded_end(&b, false);
        }
        start = end + 1;
    }
    return folded_end(&b, true);
}
