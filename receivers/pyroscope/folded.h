// SPDX-License-Identifier: Apache-2.0
/* Pyroscope's folded stacks ("frame;frame;leaf count" a line, root first;
 * or with format=lines "frame;frame;leaf", each line one sample) into the
 * pprof model. */
#ifndef PROFD_PYROSCOPE_FOLDED_H
#define PROFD_PYROSCOPE_FOLDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profd/plugin.h"

/* What the /ingest parameters say about the samples. */
struct folded_meta {
    const char *units;          /* samples, objects, goroutines, bytes, lock_nanoseconds, lock_samples */
    int64_t cpu_period;         /* ns of CPU a sample stands for, for units=samples */
    int64_t time_nanos, duration_nanos;
    bool individual_lines;      /* format=lines: a whole stack a line, counted once */
};

/* A profile of stacks as it is built: folded_begin, folded_add for each
 * stack, folded_end. */
struct folded_builder {
    const struct profd_host *host;
    struct profd_profile *p;
    uint32_t *name_loc;   /* by a frame name's string index: its location ref, 0 none yet */
    size_t name_cap;
    int64_t period;
};

/* Starts b's profile: sample types by meta's units (samples give
 * samples/count and cpu/nanoseconds at cpu_period each; a units value
 * it does not know is samples), time and duration from meta; size_hint
 * the input's size. */
void folded_begin(struct folded_builder *b, const struct profd_host *host,
                  const struct folded_meta *meta, size_t size_hint);
/* Adds a sample of count for stack (len bytes: frames root first, ';'
 * between), one function and location per distinct frame name. False for
 * an empty frame or a count no profile holds. */
bool folded_add(struct folded_builder *b, const char *stack, size_t len, int64_t count);
/* b's profile when keep is set, else NULL with it freed; b's own memory
 * freed either way. */
struct profd_profile *folded_end(struct folded_builder *b, bool keep);

/*
 * Builds a profile from folded stacks: one function and location per
 * distinct frame name, one sample a line (values by units: samples give
 * samples/count and cpu/nanoseconds at cpu_period each; a units value
 * it does not know is samples). Returns NULL with why naming the line and
 * what is wrong.
 */
struct profd_profile *folded_profile(const struct profd_host *host, const char *text, size_t len,
                                     const struct folded_meta *meta, char *why, size_t whylen);

#endif
