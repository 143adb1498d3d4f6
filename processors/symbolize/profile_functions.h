// SPDX-License-Identifier: Apache-2.0
/*
 * The functions of one profile while it is symbolized: each function is
 * added once (found again by content), and a frame whose strings are the
 * very ones an earlier frame had (same pointers, from the same open
 * binary) gets that frame's function without any string work: demangling,
 * joining, interning and hashing happen once per function, not once per
 * location. Valid while the binaries that made the frames stay open.
 */
#ifndef PROFD_SYMBOLIZE_PROFILE_FUNCTIONS_H
#define PROFD_SYMBOLIZE_PROFILE_FUNCTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "demangle.h"
#include "elf_symbols.h"
#include "profd/plugin.h"

struct frame_memo;

struct profile_functions {
    const struct profd_host *host;
    struct profd_profile *profile;
    enum demangle_mode demangle;
    uint32_t *slots;             /* function refs by content, 0 = empty */
    size_t mask;
    struct frame_memo *memo;     /* function refs by frame strings */
    size_t memo_mask, memo_count;
};

/* Starts on profile p, whose existing functions are indexed. */
void profile_functions_init(struct profile_functions *pf, const struct profd_host *h,
                            struct profd_profile *p, enum demangle_mode demangle);
/* The function called name, without file or line (symbol tables that
 * only name functions). */
uint32_t profile_functions_named(struct profile_functions *pf, const char *name);
/* The function of frame fr: its name demangled, its file joined to its
 * directory, its declaration line. */
uint32_t profile_functions_of_frame(struct profile_functions *pf, const struct elf_frame *fr);
void profile_functions_free(struct profile_functions *pf);

#endif
