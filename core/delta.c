// SPDX-License-Identifier: Apache-2.0
/*
 * Client-side delta of cumulative profiles. A sample is identified by a 64-bit
 * hash of what it means, not of its ids: for every frame the mapping's build
 * id or file name, the address, and every line's function name, system name,
 * file and line; then the sample's labels in order. The state kept between
 * scrapes is only (hash, cumulative values) per sample: small, and free of
 * the previous profile.
 */
#include "delta.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/hash.h"
#include "alloc.h"
#include "saturating.h"

struct entry {
    uint64_t hash;
    bool used;         /* matched by a sample of the current profile */
    int64_t *values;   /* ncolumns values */
};

struct profd_delta_state {
    uint32_t ncolumns;
    struct entry *slots;   /* open addressing; hash 0 = empty */
    size_t mask, count;
    int64_t *values;       /* backing store of every entry's values */
};

#define HASH_SEED 0x243f6a8885a308d3ull

static uint64_t location_hash(const struct profd_profile *p, const uint64_t *str, uint32_t ref)
{
    const struct profd_location *loc = &p->locations[ref - 1];
    uint64_t h = hash_mix(HASH_SEED, loc->address);
    if (loc->mapping) {
        const struct profd_mapping *m = &p->mappings[loc->mapping - 1];
        h = hash_mix(h, str[m->build_id ? m->build_id : m->filename]);
    }
    for (uint32_t i = 0; i < loc->nlines; i++) {
        const struct profd_line *ln = &loc->lines[i];
        if (ln->function) {
            const struct profd_function *f = &p->functions[ln->function - 1];
            h = hash_mix(h, str[f->name]);
            h = hash_mix(h, str[f->system_name]);
            h = hash_mix(h, str[f->filename]);
        }
        h = hash_mix(h, (uint64_t)ln->line);
    }
    return h;
}

/* The identity of every sample of p; string and location hashes are
 * computed once each. */
static uint64_t *sample_hashes(const struct profd_profile *p)
{
    uint64_t *str = profd_xcalloc(p->nstrings ? p->nstrings : 1, sizeof(*str));
    for (uint32_t i = 0; i < p->nstrings; i++)
        str[i] = hash_bytes(p->strings[i].ptr, p->strings[i].len);
    uint64_t *loc = profd_xcalloc(p->nlocations ? p->nlocations : 1, sizeof(*loc));
    for (uint32_t i = 0; i < p->nlocations; i++)
        loc[i] = location_hash(p, str, i + 1);
    uint64_t *out = profd_xcalloc(p->nsamples ? p->nsamples : 1, sizeof(*out));
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct profd_sample *s = &p->samples[i];
        uint64_t h = HASH_SEED;
        for (uint32_t k = 0; k < s->nlocations; k++)
            h = hash_mix(h, loc[s->locations[k] - 1]);
        h = hash_mix(h, 0x9e3779b97f4a7c15ull);   /* stack / labels boundary */
        for (uint32_t k = 0; k < s->nlabels; k++) {
            const struct profd_sample_label *l = &s->labels[k];
            h = hash_mix(h, str[l->key]);
            h = hash_mix(h, str[l->str]);
            h = hash_mix(h, (uint64_t)l->num);
            h = hash_mix(h, str[l->num_unit]);
        }
        out[i] = h ? h : 1;   /* 0 marks an empty slot */
    }
    free(loc);
    free(str);
    return out;
}

static struct entry *find(const struct profd_delta_state *st, uint64_t hash)
{
    for (size_t i = hash & st->mask;; i = (i + 1) & st->mask) {
        struct entry *e = &st->slots[i];
        if (!e->hash || e->hash == hash)
            return e;
    }
}

/* A state holding p's values of the cumulative columns, summed per identity. */
static struct profd_delta_state *state_from(const struct profd_profile *p, const uint64_t *hashes,
                                            const bool *cumulative)
{
    struct profd_delta_state *st = profd_xcalloc(1, sizeof(*st));
    st->ncolumns = p->nsample_types;
    size_t size = 16;
    while (size < p->nsamples * 2)
        size *= 2;
    st->mask = size - 1;
    st->slots = profd_xcalloc(size, sizeof(*st->slots));
    st->values = profd_xcalloc(p->nsamples * st->ncolumns + 1, sizeof(*st->values));
    for (size_t i = 0; i < p->nsamples; i++) {
        struct entry *e = find(st, hashes[i]);
        if (!e->hash) {
            e->hash = hashes[i];
            e->values = st->values + st->count++ * st->ncolumns;
        }
        for (uint32_t c = 0; c < st->ncolumns; c++)
            if (cumulative[c])
                e->values[c] = add_saturating(e->values[c], p->samples[i].values[c]);
    }
    return st;
}

void profd_delta_state_free(struct profd_delta_state *st)
{
    if (!st)
        return;
    free(st->slots);
    free(st->values);
    free(st);
}

size_t profd_delta_state_size(const struct profd_delta_state *st)
{
    return st ? sizeof(*st) + (st->mask + 1) * sizeof(*st->slots) +
                    st->count * st->ncolumns * sizeof(int64_t)
              : 0;
}

/* True when any cumulative value of prev is above now's: the process restarted. */
static bool went_down(const struct profd_delta_state *now, const struct profd_delta_state *prev,
                      const bool *cumulative)
{
    for (size_t i = 0; i <= prev->mask; i++) {
        const struct entry *e = &prev->slots[i];
        if (!e->hash)
            continue;
        const struct entry *n = find(now, e->hash);
        for (uint32_t c = 0; c < prev->ncolumns; c++)
            if (cumulative[c] && (n->hash ? n->values[c] : 0) < e->values[c])
                return true;
    }
    return false;
}

enum profd_delta_result profd_profile_delta(struct profd_delta_state **state,
                                            struct profd_profile *p, const bool *cumulative)
{
    uint64_t *hashes = sample_hashes(p);
    struct profd_delta_state *prev = *state;
    struct profd_delta_state *now = state_from(p, hashes, cumulative);
    enum profd_delta_result result;
    if (!prev || prev->ncolumns != p->nsample_types)
        result = PROFD_DELTA_PRIMED;
    else if (went_down(now, prev, cumulative))
        result = PROFD_DELTA_RESET;
    else
        result = PROFD_DELTA_OK;
    *state = now;
    if (result == PROFD_DELTA_OK) {
        size_t kept = 0;
        for (size_t i = 0; i < p->nsamples; i++) {
            struct profd_sample *s = &p->samples[i];
            struct entry *e = find(prev, hashes[i]);
            bool nonzero = false;
            for (uint32_t c = 0; c < p->nsample_types; c++) {
                /* Duplicated identities: the first sample takes the whole subtraction. */
                if (cumulative[c] && e->hash && !e->used)
                    s->values[c] = sub_saturating(s->values[c], e->values[c]);
                nonzero |= s->values[c] != 0;
            }
            if (e->hash)
                e->used = true;
            if (nonzero)
                p->samples[kept++] = *s;
        }
        p->nsamples = kept;
    }
    profd_delta_state_free(prev);
    free(hashes);
    return result;
}
