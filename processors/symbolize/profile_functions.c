// SPDX-License-Identifier: Apache-2.0
#include "profile_functions.h"

#include "../../lib/grow.h"
#include "../../lib/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A function as a thread found it, before it is the profile's. */
struct function_draft {
    char *name, *system_name, *file;
    int64_t decl_line;
    uint64_t first_use;          /* the smallest use it was asked for with */
    uint32_t ref;                /* the profile's function, once added */
};

/* A frame's identity: the addresses of its strings and its declaration line. */
struct frame_memo {
    const char *name, *file, *dir;
    int64_t decl_line;
    uint32_t draft;              /* 0 = empty slot */
};

/* ---- drafts ---- */

static uint64_t frame_hash(const char *name, const char *file, const char *dir, int64_t decl_line)
{
    uint64_t h = hash_mix(hash_mix(0, (uintptr_t)name), (uintptr_t)file);
    return hash_mix(hash_mix(h, (uintptr_t)dir), (uint64_t)decl_line);
}

void function_drafts_init(struct function_drafts *d, enum demangle_mode demangle)
{
    *d = (struct function_drafts){.demangle = demangle};
}

static char *copy_string(const char *s)
{
    char *c = strdup(s);
    if (!c)
        abort();
    return c;
}

/* Adds a draft first used at use, taking name and file (malloc'd). */
static uint32_t add_draft(struct function_drafts *d, char *name, const char *system_name,
                          char *file, int64_t decl_line, uint64_t use)
{
    d->items = grow_array(d->items, &d->cap, d->n + 1, sizeof(*d->items));
    d->items[d->n++] =
        (struct function_draft){name, copy_string(system_name), file, decl_line, use, 0};
    return (uint32_t)d->n;
}

/* Draft `draft`, used again at use. */
static uint32_t used_again(struct function_drafts *d, uint32_t draft, uint64_t use)
{
    struct function_draft *f = &d->items[draft - 1];
    if (use < f->first_use)
        f->first_use = use;
    return draft;
}

/* Puts e in the memo, which must have room. */
static void memo_put(struct function_drafts *d, const struct frame_memo *e)
{
    size_t i = frame_hash(e->name, e->file, e->dir, e->decl_line) & d->memo_mask;
    while (d->memo[i].draft)
        i = (i + 1) & d->memo_mask;
    d->memo[i] = *e;
}

/* Doubles the memo (or makes its first 1024 slots). */
static void memo_grow(struct function_drafts *d)
{
    struct frame_memo *old = d->memo;
    size_t old_size = old ? d->memo_mask + 1 : 0, size = old ? 2 * old_size : 1024;
    if (!(d->memo = calloc(size, sizeof(*d->memo))))
        abort();
    d->memo_mask = size - 1;
    for (size_t i = 0; i < old_size; i++)
        if (old[i].draft)
            memo_put(d, &old[i]);
    free(old);
}

uint32_t function_drafts_of_frame(struct function_drafts *d, const struct elf_frame *fr,
                                  uint64_t use)
{
    if (2 * (d->n + 1) > (d->memo ? d->memo_mask + 1 : 0))   /* a draft per entry, at most */
        memo_grow(d);
    size_t i = frame_hash(fr->name, fr->file, fr->dir, fr->decl_line) & d->memo_mask;
    for (; d->memo[i].draft; i = (i + 1) & d->memo_mask) {
        const struct frame_memo *e = &d->memo[i];
        if (e->name == fr->name && e->file == fr->file && e->dir == fr->dir &&
            e->decl_line == fr->decl_line)
            return used_again(d, e->draft, use);
    }
    char *file;
    if (asprintf(&file, "%s%s%s", fr->dir, fr->dir[0] ? "/" : "", fr->file) < 0)
        abort();
    uint32_t draft = add_draft(d, demangle(fr->name, d->demangle), fr->name, file,
                               fr->decl_line, use);
    d->memo[i] = (struct frame_memo){fr->name, fr->file, fr->dir, fr->decl_line, draft};
    return draft;
}

uint32_t function_drafts_named(struct function_drafts *d, const char *name, uint64_t use)
{
    /* Names come in address order: the one before is the likeliest. */
    if (d->last_named && !strcmp(d->items[d->last_named - 1].system_name, name))
        return used_again(d, d->last_named, use);
    return d->last_named = add_draft(d, copy_string(name), name, copy_string(""), 0, use);
}

void function_drafts_free(struct function_drafts *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->items[i].name);
        free(d->items[i].system_name);
        free(d->items[i].file);
    }
    free(d->items);
    free(d->memo);
}

/* ---- the profile's functions ---- */

static uint64_t function_hash(const struct profd_function *f)
{
    uint64_t h = hash_mix(hash_mix(0, f->name), f->system_name);
    return hash_mix(hash_mix(h, f->filename), (uint64_t)f->start_line);
}

static bool same_function(const struct profd_function *a, const struct profd_function *b)
{
    return a->name == b->name && a->system_name == b->system_name &&
           a->filename == b->filename && a->start_line == b->start_line;
}

/* Adds ref (a function of the profile) to the index, which must have room. */
static void index_put(struct profile_functions *pf, uint32_t ref)
{
    size_t i = function_hash(&pf->profile->functions[ref - 1]) & pf->mask;
    while (pf->slots[i])
        i = (i + 1) & pf->mask;
    pf->slots[i] = ref;
}

/* (Re)builds the index with room for `room` more functions. */
static void index_build(struct profile_functions *pf, size_t room)
{
    size_t size = 64;
    while (size < 2 * (pf->profile->nfunctions + room))
        size *= 2;
    free(pf->slots);
    if (!(pf->slots = calloc(size, sizeof(*pf->slots))))
        abort();
    pf->mask = size - 1;
    for (uint32_t i = 0; i < pf->profile->nfunctions; i++)
        index_put(pf, i + 1);
}

void profile_functions_init(struct profile_functions *pf, const struct profd_host *h,
                            struct profd_profile *p)
{
    *pf = (struct profile_functions){.host = h, .profile = p};
    index_build(pf, 0);
}

/* The ref of function f, added when new. */
static uint32_t function_ref(struct profile_functions *pf, const struct profd_function *f)
{
    struct profd_profile *p = pf->profile;
    for (size_t i = function_hash(f) & pf->mask; pf->slots[i]; i = (i + 1) & pf->mask)
        if (same_function(&p->functions[pf->slots[i] - 1], f))
            return pf->slots[i];
    *pf->host->profile_add_function(p) = *f;
    if (2 * p->nfunctions > pf->mask + 1)   /* keep the load at most 1/2 */
        index_build(pf, p->nfunctions);
    else
        index_put(pf, p->nfunctions);
    return p->nfunctions;
}

static uint32_t intern(struct profile_functions *pf, const char *s)
{
    return pf->host->profile_intern(pf->profile, s, strlen(s));
}

static void add_draft_to_profile(struct profile_functions *pf, struct function_draft *f)
{
    struct profd_function fn = {intern(pf, f->name), intern(pf, f->system_name),
                                intern(pf, f->file), f->decl_line};
    f->ref = function_ref(pf, &fn);
}

/* A draft to add, and where it is, for ordering. */
struct use_order {
    uint64_t first_use;
    uint32_t set, index;
};

static int by_first_use(const void *a, const void *b)
{
    const struct use_order *x = a, *y = b;
    if (x->first_use != y->first_use)
        return x->first_use < y->first_use ? -1 : 1;
    if (x->set != y->set)
        return x->set < y->set ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

void profile_functions_add(struct profile_functions *pf, struct function_drafts *const *sets,
                           size_t n)
{
    size_t total = 0;
    for (size_t k = 0; k < n; k++)
        total += sets[k]->n;
    struct use_order *all = malloc((total ? total : 1) * sizeof(*all));
    if (!all)
        abort();
    for (size_t k = 0, at = 0; k < n; k++)
        for (size_t i = 0; i < sets[k]->n; i++)
            all[at++] = (struct use_order){sets[k]->items[i].first_use, (uint32_t)k, (uint32_t)i};
    qsort(all, total, sizeof(*all), by_first_use);
    for (size_t i = 0; i < total; i++)
        add_draft_to_profile(pf, &sets[all[i].set]->items[all[i].index]);
    free(all);
}

uint32_t profile_functions_ref(const struct function_drafts *d, uint32_t draft)
{
    return d->items[draft - 1].ref;
}

void profile_functions_free(struct profile_functions *pf)
{
    free(pf->slots);
}
