// SPDX-License-Identifier: Apache-2.0
#include "merge.h"

#include <stdlib.h>
#include <string.h>

#include "../../core/saturating.h"
#include "../../lib/grow.h"
#include "../../lib/hash.h"

#define UNMAPPED UINT32_MAX

void merged_init(struct merged *m, const struct profd_host *host)
{
    *m = (struct merged){.host = host};
}

/* An array of n refs, each UNMAPPED, in *arr (grown). */
static uint32_t *unmapped(uint32_t *arr, size_t *cap, size_t n)
{
    arr = grow_array(arr, cap, n + 1, sizeof(*arr));
    memset(arr, 0xff, (n + 1) * sizeof(*arr));
    return arr;
}

/* out's index of p's string i. */
static uint32_t string_of(struct merged *m, const struct profd_profile *p, uint32_t i)
{
    if (i >= p->nstrings)
        return 0;
    if (m->strings[i] == UNMAPPED)
        m->strings[i] = m->host->profile_intern(m->out, p->strings[i].ptr, p->strings[i].len);
    return m->strings[i];
}

/* An entry of out like key (by content hash h and equal): its ref, after
 * adding it (add() writes it, returns its ref) when there is none yet. */
static uint32_t find_or_add(struct key_map *map, uint64_t h, const void *key,
                            bool (*equal)(const struct profd_profile *out, uint32_t ref,
                                          const void *key),
                            uint32_t (*add)(struct profd_profile *out,
                                            const struct profd_host *host, const void *key),
                            struct merged *m)
{
    uint32_t ref;
    if (key_map_get(map, h, &ref) && equal(m->out, ref, key))
        return ref;
    uint32_t added = add(m->out, m->host, key);
    if (!key_map_get(map, h, &ref))   /* a collision keeps the first in the map */
        key_map_put(map, h, added);
    return added;
}

/* What makes two mappings one, as pprof merges them: the size (rounded up
 * to 4 KiB), the offset, and the build id, else the file; not where the
 * mapping was loaded, so one binary loaded at different addresses
 * (address space randomization) is one mapping, its addresses rebased. */
struct mapping_key {
    uint64_t size, offset;
    uint32_t ident;   /* out's string index */
};

static struct mapping_key key_of_mapping(const struct profd_mapping *m)
{
    uint64_t size = m->memory_limit - m->memory_start;
    size = (size + 0xfff) & ~(uint64_t)0xfff;
    return (struct mapping_key){size, m->file_offset, m->build_id ? m->build_id : m->filename};
}

/* A mapping as it is looked up: its key and the mapping, out's strings. */
struct mapping_lookup {
    struct mapping_key key;
    struct profd_mapping m;
};

static bool mapping_equal(const struct profd_profile *out, uint32_t ref, const void *key)
{
    struct mapping_key a = key_of_mapping(&out->mappings[ref - 1]);
    const struct mapping_key *b = &((const struct mapping_lookup *)key)->key;
    return a.size == b->size && a.offset == b->offset && a.ident == b->ident;
}

static uint32_t mapping_add(struct profd_profile *out, const struct profd_host *host,
                            const void *key)
{
    *host->profile_add_mapping(out) = ((const struct mapping_lookup *)key)->m;
    return out->nmappings;
}

/* out's mapping for p's mapping ref, and in *shift what p's addresses in
 * it move by. */
static uint32_t mapping_of(struct merged *m, const struct profd_profile *p, uint32_t ref,
                           int64_t *shift)
{
    *shift = 0;
    if (!ref || ref > p->nmappings)
        return 0;
    if (m->mapping_refs[ref] == UNMAPPED) {
        const struct profd_mapping *src = &p->mappings[ref - 1];
        struct mapping_lookup k = {.m = *src};
        k.m.filename = string_of(m, p, src->filename);
        k.m.build_id = string_of(m, p, src->build_id);
        k.key = key_of_mapping(&k.m);
        uint64_t h = hash_mix(hash_mix(hash_mix(0, k.key.size), k.key.offset), k.key.ident);
        uint32_t out = find_or_add(&m->mappings, h, &k, mapping_equal, mapping_add, m);
        m->mapping_refs[ref] = out;
        m->mapping_shift[ref] =
            (int64_t)(m->out->mappings[out - 1].memory_start - src->memory_start);
    }
    *shift = m->mapping_shift[ref];
    return m->mapping_refs[ref];
}

static bool function_equal(const struct profd_profile *out, uint32_t ref, const void *key)
{
    const struct profd_function *a = &out->functions[ref - 1], *b = key;
    return a->name == b->name && a->system_name == b->system_name &&
           a->filename == b->filename && a->start_line == b->start_line;
}

static uint32_t function_add(struct profd_profile *out, const struct profd_host *host,
                             const void *key)
{
    *host->profile_add_function(out) = *(const struct profd_function *)key;
    return out->nfunctions;
}

static uint32_t function_of(struct merged *m, const struct profd_profile *p, uint32_t ref)
{
    if (!ref || ref > p->nfunctions)
        return 0;
    if (m->function_refs[ref] != UNMAPPED)
        return m->function_refs[ref];
    const struct profd_function *src = &p->functions[ref - 1];
    struct profd_function key = {string_of(m, p, src->name), string_of(m, p, src->system_name),
                                 string_of(m, p, src->filename), src->start_line};
    uint64_t h = hash_mix(hash_mix(hash_mix(hash_mix(0, key.name), key.system_name),
                                   key.filename),
                          (uint64_t)key.start_line);
    return m->function_refs[ref] =
               find_or_add(&m->functions, h, &key, function_equal, function_add, m);
}

static bool location_equal(const struct profd_profile *out, uint32_t ref, const void *key)
{
    const struct profd_location *a = &out->locations[ref - 1], *b = key;
    if (a->address != b->address || a->mapping != b->mapping || a->nlines != b->nlines ||
        a->is_folded != b->is_folded)
        return false;
    for (uint32_t i = 0; i < a->nlines; i++)
        if (a->lines[i].function != b->lines[i].function || a->lines[i].line != b->lines[i].line ||
            a->lines[i].column != b->lines[i].column)
            return false;
    return true;
}

static uint32_t location_add(struct profd_profile *out, const struct profd_host *host,
                             const void *key)
{
    const struct profd_location *src = key;
    struct profd_location *l = host->profile_add_location(out);
    *l = *src;
    l->lines = src->nlines ? host->profile_alloc(out, src->nlines * sizeof(*l->lines)) : NULL;
    if (src->nlines)
        memcpy(l->lines, src->lines, src->nlines * sizeof(*l->lines));
    return out->nlocations;
}

static uint32_t location_of(struct merged *m, const struct profd_profile *p, uint32_t ref)
{
    if (!ref || ref > p->nlocations)
        return 0;
    if (m->location_refs[ref] != UNMAPPED)
        return m->location_refs[ref];
    const struct profd_location *src = &p->locations[ref - 1];
    struct profd_line lines[64], *many = NULL, *ln = lines;
    if (src->nlines > 64)
        ln = many = must_malloc(src->nlines * sizeof(*many));
    int64_t shift;
    uint32_t mapping = mapping_of(m, p, src->mapping, &shift);
    struct profd_location key = {.address = src->address + (uint64_t)shift,
                                 .mapping = mapping, .nlines = src->nlines, .lines = ln,
                                 .is_folded = src->is_folded};
    uint64_t h = hash_mix(hash_mix(hash_mix(0, key.address), key.mapping),
                          (uint64_t)key.is_folded << 32 | key.nlines);
    for (uint32_t i = 0; i < src->nlines; i++) {
        ln[i] = (struct profd_line){function_of(m, p, src->lines[i].function),
                                    src->lines[i].line, src->lines[i].column};
        h = hash_mix(hash_mix(hash_mix(h, ln[i].function), (uint64_t)ln[i].line),
                     (uint64_t)ln[i].column);
    }
    uint32_t out = find_or_add(&m->locations, h, &key, location_equal, location_add, m);
    free(many);
    return m->location_refs[ref] = out;
}

/* A sample as it is looked up: its stack and labels in out's refs. */
struct sample_key {
    const uint32_t *locations;
    uint32_t nlocations, nlabels;
    const struct profd_sample_label *labels;
};

static bool sample_equal(const struct profd_profile *out, uint32_t ref, const void *key)
{
    const struct profd_sample *a = &out->samples[ref - 1];
    const struct sample_key *b = key;
    return a->nlocations == b->nlocations && a->nlabels == b->nlabels &&
           !memcmp(a->locations, b->locations, b->nlocations * sizeof(*b->locations)) &&
           (!b->nlabels || !memcmp(a->labels, b->labels, b->nlabels * sizeof(*b->labels)));
}

static uint32_t sample_add(struct profd_profile *out, const struct profd_host *host,
                           const void *key)
{
    const struct sample_key *k = key;
    struct profd_sample *s = host->profile_add_sample(out);
    s->nlocations = k->nlocations;
    s->locations = host->profile_alloc(out, (k->nlocations + 1) * sizeof(*s->locations));
    memcpy(s->locations, k->locations, k->nlocations * sizeof(*s->locations));
    s->nlabels = k->nlabels;
    s->labels = k->nlabels ? host->profile_alloc(out, k->nlabels * sizeof(*s->labels)) : NULL;
    if (k->nlabels)
        memcpy(s->labels, k->labels, k->nlabels * sizeof(*s->labels));
    s->values = host->profile_alloc(out, (out->nsample_types + 1) * sizeof(*s->values));
    memset(s->values, 0, (out->nsample_types + 1) * sizeof(*s->values));
    return (uint32_t)out->nsamples;
}

/* Adds src's values (the kept types) to the sample of out like it. */
static void add_sample(struct merged *m, const struct profd_profile *p,
                       const struct profd_sample *src, const struct merge_cut *cut)
{
    bool zero = true;
    for (uint32_t t = 0; t < cut->ntypes && zero; t++)
        zero = !src->values[cut->types[t]];
    if (zero)
        return;   /* as pprof's merge leaves them out */
    uint32_t n = src->nlocations;
    if (cut->max_depth && n > cut->max_depth)
        n = cut->max_depth;   /* leaf first: the frames nearest the leaf stay */
    m->stack = grow_array(m->stack, &m->stack_cap, n + 1, sizeof(*m->stack));
    uint64_t h = hash_mix(0, n);
    for (uint32_t i = 0; i < n; i++)
        h = hash_mix(h, m->stack[i] = location_of(m, p, src->locations[i]));
    struct profd_sample_label labels[16], *many = NULL, *lb = labels;
    if (src->nlabels > 16)
        lb = many = must_malloc(src->nlabels * sizeof(*many));
    for (uint32_t i = 0; i < src->nlabels; i++) {
        memset(&lb[i], 0, sizeof(lb[i]));   /* padding too: compared by memcmp */
        lb[i].key = string_of(m, p, src->labels[i].key);
        lb[i].str = string_of(m, p, src->labels[i].str);
        lb[i].num = src->labels[i].num;
        lb[i].num_unit = string_of(m, p, src->labels[i].num_unit);
        h = hash_mix(hash_mix(hash_mix(h, (uint64_t)lb[i].key << 32 | lb[i].str),
                              (uint64_t)lb[i].num),
                     lb[i].num_unit);
    }
    struct sample_key key = {m->stack, n, src->nlabels, lb};
    uint32_t ref = find_or_add(&m->samples, h, &key, sample_equal, sample_add, m);
    int64_t *values = m->out->samples[ref - 1].values;
    for (uint32_t t = 0; t < cut->ntypes; t++)
        values[t] = add_saturating(values[t], src->values[cut->types[t]]);
    free(many);
}

/* The profile-wide fields of p, merged into out's. */
static void add_header(struct merged *m, const struct profd_profile *p, const struct merge_cut *cut)
{
    struct profd_profile *out = m->out;
    if (!m->nadded) {
        out->nsample_types = cut->ntypes;
        out->sample_types = m->host->profile_alloc(out, (cut->ntypes + 1) *
                                                            sizeof(*out->sample_types));
        for (uint32_t t = 0; t < cut->ntypes; t++)
            out->sample_types[t] = (struct profd_value_type){
                string_of(m, p, p->sample_types[cut->types[t]].type),
                string_of(m, p, p->sample_types[cut->types[t]].unit)};
        out->period_type = (struct profd_value_type){string_of(m, p, p->period_type.type),
                                                     string_of(m, p, p->period_type.unit)};
        out->drop_frames = string_of(m, p, p->drop_frames);
        out->keep_frames = string_of(m, p, p->keep_frames);
        out->doc_url = string_of(m, p, p->doc_url);
    }
    if (p->time_nanos && (!out->time_nanos || p->time_nanos < out->time_nanos))
        out->time_nanos = p->time_nanos;
    if (__builtin_add_overflow(out->duration_nanos, p->duration_nanos, &out->duration_nanos))
        out->duration_nanos = INT64_MAX;
    if (p->period > out->period)
        out->period = p->period;
    if (p->default_sample_type)
        out->default_sample_type = string_of(m, p, p->default_sample_type);
    for (uint32_t c = 0; c < p->ncomments; c++) {
        uint32_t s = string_of(m, p, (uint32_t)p->comments[c]);
        bool seen = false;
        for (uint32_t k = 0; k < out->ncomments && !seen; k++)
            seen = out->comments[k] == s;
        if (seen)
            continue;
        int64_t *grown = m->host->profile_alloc(out, (out->ncomments + 1) * sizeof(*grown));
        if (out->ncomments)
            memcpy(grown, out->comments, out->ncomments * sizeof(*grown));
        grown[out->ncomments++] = s;
        out->comments = grown;
    }
}

void merged_add(struct merged *m, const struct profd_profile *p, const struct merge_cut *cut)
{
    if (!m->out)
        m->out = m->host->profile_new(4096);
    m->strings = unmapped(m->strings, &m->strings_cap, p->nstrings);
    m->mapping_refs = unmapped(m->mapping_refs, &m->mapping_cap, p->nmappings);
    m->mapping_shift = grow_array(m->mapping_shift, &m->shift_cap, p->nmappings + 1,
                                  sizeof(*m->mapping_shift));
    m->function_refs = unmapped(m->function_refs, &m->function_cap, p->nfunctions);
    m->location_refs = unmapped(m->location_refs, &m->location_cap, p->nlocations);
    add_header(m, p, cut);
    int64_t shift;
    if (!m->out->nmappings && p->nmappings)   /* the first is the main binary's: first */
        mapping_of(m, p, 1, &shift);
    for (size_t i = 0; i < p->nsamples; i++)
        add_sample(m, p, &p->samples[i], cut);
    m->nadded++;
}

/* Frees m's tables, keeping its output. */
static void free_tables(struct merged *m)
{
    key_map_free(&m->mappings);
    key_map_free(&m->functions);
    key_map_free(&m->locations);
    key_map_free(&m->samples);
    free(m->strings);
    free(m->mapping_refs);
    free(m->mapping_shift);
    free(m->function_refs);
    free(m->location_refs);
    free(m->stack);
}

/* Whether out's sample type t is named in names. */
static bool type_named(const struct profd_profile *out, uint32_t t,
                       const struct profd_str_list *names)
{
    const struct profd_str *name = &out->strings[out->sample_types[t].type];
    for (size_t i = 0; names && i < names->n; i++)
        if (strlen(names->items[i]) == name->len && !memcmp(names->items[i], name->ptr, name->len))
            return true;
    return false;
}

/* v / n rounded to the nearest, halves away from zero. */
static int64_t rounded_quotient(int64_t v, int64_t n)
{
    return v >= 0 ? v / n + (v % n >= n - n / 2) : v / n - (-(v % n) >= n - n / 2);
}

/* Makes out's snapshot columns the average of the n profiles merged. */
static void average_snapshots(struct profd_profile *out, size_t n,
                              const struct profd_str_list *snapshots)
{
    for (uint32_t t = 0; n > 1 && t < out->nsample_types; t++)
        if (type_named(out, t, snapshots))
            for (size_t i = 0; i < out->nsamples; i++)
                out->samples[i].values[t] =
                    rounded_quotient(out->samples[i].values[t], (int64_t)n);
}

struct profd_profile *merged_take(struct merged *m, const struct profd_str_list *snapshots)
{
    struct profd_profile *out = m->out;
    if (out)
        average_snapshots(out, m->nadded, snapshots);
    size_t kept = 0;   /* samples whose sums came to zero go, as in pprof's merge */
    for (size_t i = 0; out && i < out->nsamples; i++) {
        bool zero = true;
        for (uint32_t t = 0; t < out->nsample_types && zero; t++)
            zero = !out->samples[i].values[t];
        if (!zero)
            out->samples[kept++] = out->samples[i];
    }
    if (out)
        out->nsamples = kept;
    free_tables(m);
    merged_init(m, m->host);
    return out;
}

void merged_free(struct merged *m)
{
    if (m->out)
        m->host->profile_free(m->out);
    free_tables(m);
    merged_init(m, m->host);
}
