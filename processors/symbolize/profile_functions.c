// SPDX-License-Identifier: Apache-2.0
#include "profile_functions.h"

#include "../../lib/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A frame's identity: the addresses of its strings and its declaration line. */
struct frame_memo {
    const char *name, *file, *dir;
    int64_t decl_line;
    uint32_t ref;                /* 0 = empty slot */
};

static uint64_t function_hash(const struct profd_function *f)
{
    uint64_t h = hash_mix(hash_mix(0, f->name), f->system_name);
    return hash_mix(hash_mix(h, f->filename), (uint64_t)f->start_line);
}

static uint64_t frame_hash(const struct elf_frame *fr)
{
    uint64_t h = hash_mix(hash_mix(0, (uintptr_t)fr->name), (uintptr_t)fr->file);
    return hash_mix(hash_mix(h, (uintptr_t)fr->dir), (uint64_t)fr->decl_line);
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
                            struct profd_profile *p, enum demangle_mode demangle)
{
    *pf = (struct profile_functions){.host = h, .profile = p, .demangle = demangle};
    index_build(pf, 0);
}

/* The ref of function f, added when new. */
static uint32_t function_ref(struct profile_functions *pf, const struct profd_function *f)
{
    struct profd_profile *p = pf->profile;
    for (size_t i = function_hash(f) & pf->mask; pf->slots[i]; i = (i + 1) & pf->mask)
        if (same_function(&p->functions[pf->slots[i] - 1], f))
            return pf->slots[i];
    if (p->nfunctions == p->functions_cap) {
        uint32_t cap = p->functions_cap ? 2 * p->functions_cap : 64;
        struct profd_function *grown = pf->host->profile_alloc(p, cap * sizeof(*grown));
        if (p->nfunctions)
            memcpy(grown, p->functions, p->nfunctions * sizeof(*grown));
        p->functions = grown;
        p->functions_cap = cap;
    }
    p->functions[p->nfunctions++] = *f;
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

uint32_t profile_functions_named(struct profile_functions *pf, const char *name)
{
    uint32_t n = intern(pf, name);
    struct profd_function f = {n, n, 0, 0};
    return function_ref(pf, &f);
}

/* The function of fr made the slow way. */
static uint32_t make_function(struct profile_functions *pf, const struct elf_frame *fr)
{
    char *display = demangle(fr->name, pf->demangle);
    char file[4096];
    snprintf(file, sizeof(file), "%s%s%s", fr->dir, fr->dir[0] ? "/" : "", fr->file);
    struct profd_function f = {intern(pf, display), intern(pf, fr->name), intern(pf, file),
                               fr->decl_line};
    free(display);
    return function_ref(pf, &f);
}

/* Puts e in the memo, which must have room. */
static void memo_put(struct profile_functions *pf, const struct frame_memo *e)
{
    size_t i = frame_hash(&(struct elf_frame){e->name, e->file, e->dir, 0, 0, e->decl_line}) &
               pf->memo_mask;
    while (pf->memo[i].ref)
        i = (i + 1) & pf->memo_mask;
    pf->memo[i] = *e;
}

/* Doubles the memo (or makes its first 1024 slots). */
static void memo_grow(struct profile_functions *pf)
{
    struct frame_memo *old = pf->memo;
    size_t old_size = old ? pf->memo_mask + 1 : 0, size = old ? 2 * old_size : 1024;
    if (!(pf->memo = calloc(size, sizeof(*pf->memo))))
        abort();
    pf->memo_mask = size - 1;
    for (size_t i = 0; i < old_size; i++)
        if (old[i].ref)
            memo_put(pf, &old[i]);
    free(old);
}

uint32_t profile_functions_of_frame(struct profile_functions *pf, const struct elf_frame *fr)
{
    if (2 * (pf->memo_count + 1) > (pf->memo ? pf->memo_mask + 1 : 0))
        memo_grow(pf);
    size_t i = frame_hash(fr) & pf->memo_mask;
    for (; pf->memo[i].ref; i = (i + 1) & pf->memo_mask) {
        const struct frame_memo *e = &pf->memo[i];
        if (e->name == fr->name && e->file == fr->file && e->dir == fr->dir &&
            e->decl_line == fr->decl_line)
            return e->ref;
    }
    pf->memo[i] = (struct frame_memo){fr->name, fr->file, fr->dir, fr->decl_line,
                                      make_function(pf, fr)};
    pf->memo_count++;
    return pf->memo[i].ref;
}

void profile_functions_free(struct profile_functions *pf)
{
    free(pf->slots);
    free(pf->memo);
}
