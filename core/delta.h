// SPDX-License-Identifier: Apache-2.0
/* Client-side delta of cumulative profiles (mutex, block, allocs' alloc_*). */
#ifndef PROFD_DELTA_H
#define PROFD_DELTA_H

#include <stdbool.h>
#include <stddef.h>

#include "profd/model.h"

struct profd_delta_state;

enum profd_delta_result {
    PROFD_DELTA_OK,       /* p now holds cur - prev in its cumulative columns */
    PROFD_DELTA_PRIMED,   /* first profile (or its shape changed): p untouched, emit nothing */
    PROFD_DELTA_RESET,    /* a cumulative value went down, the process restarted:
                           * p untouched, everything in it is new since the restart */
};

/*
 * Subtracts the previous profile of the series (*state) from p in the
 * columns where cumulative[c] is true, matching samples by stack and labels;
 * other columns (inuse_*) pass unchanged. Samples whose every value becomes
 * zero are removed. *state becomes p's cumulative totals. Never yields a
 * negative value: a decrease is a restart.
 */
enum profd_delta_result profd_profile_delta(struct profd_delta_state **state,
                                            struct profd_profile *p, const bool *cumulative);
void profd_delta_state_free(struct profd_delta_state *st);
/* Bytes the state holds, for accounting. */
size_t profd_delta_state_size(const struct profd_delta_state *st);

#endif
