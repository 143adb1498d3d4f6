// SPDX-License-Identifier: Apache-2.0
/*
 * Functions for the frames found while a profile is symbolized, in two
 * steps so that lookups can run on several threads:
 *   1. each thread drafts the functions of its frames (name demangled,
 *      file joined to its directory): a frame whose strings are the very
 *      ones an earlier frame had (same pointers, from the same open
 *      binary) gets that frame's draft without any string work;
 *   2. one thread then adds every thread's drafts to the profile, each
 *      found again by content when the profile has it, and rewrites the
 *      lines that name drafts.
 * Each draft keeps its first use (a key the caller gives, the smallest
 * with which it was asked for): adding every thread's drafts in order of
 * first use gives the profile's functions and strings the same order
 * whatever the number of threads and whichever thread met a frame first.
 */
#ifndef PROFD_SYMBOLIZE_PROFILE_FUNCTIONS_H
#define PROFD_SYMBOLIZE_PROFILE_FUNCTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "demangle.h"
#include "elf_symbols.h"
#include "profd/plugin.h"

struct frame_memo;
struct function_draft;

/* One thread's drafts, numbered from 1. */
struct function_drafts {
    enum demangle_mode demangle;
    struct function_draft *items;
    size_t n, cap;
    struct frame_memo *memo;     /* draft numbers by frame strings */
    size_t memo_mask;
    uint32_t last_named;         /* the draft function_drafts_named made last */
};

void function_drafts_init(struct function_drafts *d, enum demangle_mode demangle);
/* The draft of frame fr, used at `use`: its name demangled, its file
 * joined to its directory, its declaration line. fr's strings must stay
 * valid until the drafts are added to the profile. */
uint32_t function_drafts_of_frame(struct function_drafts *d, const struct elf_frame *fr,
                                  uint64_t use);
/* The draft of the function called name (copied), used at `use`, without
 * file or line (symbol tables that only name functions). */
uint32_t function_drafts_named(struct function_drafts *d, const char *name, uint64_t use);
void function_drafts_free(struct function_drafts *d);

/* Profile p's functions, indexed by content. */
struct profile_functions {
    const struct profd_host *host;
    struct profd_profile *profile;
    uint32_t *slots;             /* function refs by content, 0 = empty */
    size_t mask;
};

void profile_functions_init(struct profile_functions *pf, const struct profd_host *h,
                            struct profd_profile *p);
/* Makes the drafts of *sets[0, n) functions of the profile, in order of
 * first use, equal ones in set order then draft order (a function the
 * profile has already is used as it is). */
void profile_functions_add(struct profile_functions *pf, struct function_drafts *const *sets,
                           size_t n);
/* The profile's function ref for draft number draft of d, once added. */
uint32_t profile_functions_ref(const struct function_drafts *d, uint32_t draft);
void profile_functions_free(struct profile_functions *pf);

#endif
