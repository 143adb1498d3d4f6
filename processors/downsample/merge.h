// SPDX-License-Identifier: Apache-2.0
/* Profiles of one series merged into one, as pprof's own merge (`go tool
 * pprof -proto a b`) merges them. */
#ifndef PROFD_DOWNSAMPLE_MERGE_H
#define PROFD_DOWNSAMPLE_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../lib/key_map.h"
#include "profd/plugin.h"

/* What the profiles added so far make. */
struct merged {
    const struct profd_host *host;
    struct profd_profile *out;
    size_t nadded;
    /* by content hash: the entry of out that has it */
    struct key_map mappings, functions, locations, samples;
    /* for the profile being added, by its string index or ref: out's, or
     * UINT32_MAX not mapped yet */
    uint32_t *strings, *mapping_refs, *function_refs, *location_refs;
    size_t strings_cap, mapping_cap, function_cap, location_cap, shift_cap;
    int64_t *mapping_shift;   /* by p's mapping ref: what its addresses move by in out */
    uint32_t *stack;   /* the stack of the sample being added, out's refs */
    size_t stack_cap;
};

/* What to keep of each profile added: the sample types at types[0..ntypes)
 * (indices into its sample types, in the order out has them) and, when
 * max_depth is not 0, each stack's max_depth frames nearest the leaf. */
struct merge_cut {
    const uint32_t *types;
    uint32_t ntypes;
    uint32_t max_depth;
};

/* An empty merge. */
void merged_init(struct merged *m, const struct profd_host *host);

/*
 * Adds p, cut as cut says, as pprof's merge adds a profile: mappings of
 * the same size, offset and build id (else file) are one, their addresses
 * rebased to the first's; functions and locations the same in content as
 * ones added before are those; samples of the same stack and labels are
 * summed (held at the int64 limits), those of no value left out (and, in
 * merged_take, those whose sums came to zero). Of the profile's own
 * fields: the earliest nonzero time, the sum of the durations, the largest
 * period, the comments each once, the last default sample type; the rest
 * from the first profile. The caller adds only profiles of one period type
 * and of the same kept sample types.
 */
void merged_add(struct merged *m, const struct profd_profile *p, const struct merge_cut *cut);

/* The merged profile (NULL when nothing was added), the caller's to free;
 * m is left empty for another merge. The sample types named in snapshots
 * (what was in use at an instant, such as inuse_space) hold the average
 * over the profiles added, rounded to the nearest, where the other types
 * hold the sum. */
struct profd_profile *merged_take(struct merged *m, const struct profd_str_list *snapshots);

/* Frees what m holds. */
void merged_free(struct merged *m);

#endif
