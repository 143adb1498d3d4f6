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

/* Maps frame names to their location refs (one function each). */
struct frames {
    uint32_t *name_loc;       /* by string index: location ref + 0, 0 = none yet */
    size_t cap;
};

static uint32_t frame_location(const struct profd_host *host, struct profd_profile *p,
                               struct frames *f, const char *name, size_t len)
{
    uint32_t s = host->profile_intern(p, name, len);
    size_t old = f->cap;
    f->name_loc = grow_array(f->name_loc, &f->cap, (size_t)s + 1, sizeof(*f->name_loc));
    if (f->cap > old)
        memset(f->name_loc + old, 0, (f->cap - old) * sizeof(*f->name_loc));
    if (f->name_loc[s])
        return f->name_loc[s];
    if (p->nfunctions == p->functions_cap) {
        uint32_t ncap = p->functions_cap ? p->functions_cap * 2 : 64;
        struct profd_function *fn = host->profile_alloc(p, ncap * sizeof(*fn));
        if (p->nfunctions)
            memcpy(fn, p->functions, p->nfunctions * sizeof(*fn));
        p->functions = fn;
        p->functions_cap = ncap;
        struct profd_location *loc = host->profile_alloc(p, ncap * sizeof(*loc));
        if (p->nlocations)
            memcpy(loc, p->locations, p->nlocations * sizeof(*loc));
        p->locations = loc;
        p->locations_cap = ncap;
    }
    p->functions[p->nfunctions++] = (struct profd_function){.name = s, .system_name = s};
    struct profd_line *line = host->profile_alloc(p, sizeof(*line));
    *line = (struct profd_line){.function = p->nfunctions};
    p->locations[p->nlocations++] = (struct profd_location){.lines = line, .nlines = 1};
    return f->name_loc[s] = p->nlocations;
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

static bool add_line(const struct profd_host *host, struct profd_profile *p, struct frames *f,
                     const char *line, size_t len, bool counted, int64_t period,
                     size_t *samples_cap)
{
    size_t stack_len = len;
    int64_t count = 1;
    if (counted && !line_count(line, len, &stack_len, &count))
        return false;
    uint32_t nframes = 1;
    for (size_t i = 0; i < stack_len; i++)
        nframes += line[i] == ';';
    uint32_t *locs = host->profile_alloc(p, nframes * sizeof(*locs));
    uint32_t k = nframes;   /* folded is root first; pprof wants the leaf first */
    for (size_t start = 0, i = 0; i <= stack_len; i++) {
        if (i < stack_len && line[i] != ';')
            continue;
        if (i == start)
            return false;   /* an empty frame */
        locs[--k] = frame_location(host, p, f, line + start, i - start);
        start = i + 1;
    }
    if (p->nsamples == *samples_cap) {
        size_t ncap = *samples_cap ? *samples_cap * 2 : 256;
        struct profd_sample *s = host->profile_alloc(p, ncap * sizeof(*s));
        if (p->nsamples)
            memcpy(s, p->samples, p->nsamples * sizeof(*s));
        p->samples = s;
        *samples_cap = ncap;
    }
    int64_t *values = host->profile_alloc(p, 2 * sizeof(*values));
    values[0] = count;
    if (__builtin_mul_overflow(count, period, &values[1]))
        return false;   /* a count no profile holds */
    p->samples[p->nsamples++] = (struct profd_sample){.locations = locs, .values = values,
                                                      .nlocations = nframes};
    return true;
}

struct profd_profile *folded_profile(const struct profd_host *host, const char *text, size_t len,
                                     const struct folded_meta *meta, char *why, size_t whylen)
{
    const struct units_info *u = &known_units[0];   /* samples, unless units says another */
    for (size_t i = 0; i < sizeof(known_units) / sizeof(*known_units); i++)
        if (!strcmp(meta->units, known_units[i].units))
            u = &known_units[i];
    struct profd_profile *p = host->profile_new(len * 2 + 4096);
    p->nsample_types = (uint32_t)u->ntypes;
    p->sample_types = host->profile_alloc(p, 2 * sizeof(*p->sample_types));
    for (int i = 0; i < u->ntypes; i++)
        p->sample_types[i] = (struct profd_value_type){
            host->profile_intern(p, u->type[i], strlen(u->type[i])),
            host->profile_intern(p, u->unit[i], strlen(u->unit[i]))};
    int64_t period = meta->sample_rate > 0 ? 1000000000 / meta->sample_rate : 10000000;
    if (u->ntypes == 2) {
        p->period_type = p->sample_types[1];
        p->period = period;
    }
    p->time_nanos = meta->time_nanos;
    p->duration_nanos = meta->duration_nanos;
    struct frames f = {0};
    size_t samples_cap = 0, lineno = 0;
    for (size_t start = 0; start < len;) {
        const char *nl = memchr(text + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - text) : len, n = end - start;
        lineno++;
        if (n && text[start + n - 1] == '\r')
            n--;
        if (n && !add_line(host, p, &f, text + start, n, !meta->individual_lines, period,
                           &samples_cap)) {
            snprintf(why, whylen, "line %zu: not \"frame;frame;leaf%s\": \"%.*s\"", lineno,
                     meta->individual_lines ? "" : " count", (int)(n < 60 ? n : 60),
                     text + start);
            free(f.name_loc);
            host->profile_free(p);
            return NULL;
        }
        start = end + 1;
    }
    p->samples_cap = samples_cap;
    free(f.name_loc);
    return p;
}
