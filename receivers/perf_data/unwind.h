// SPDX-License-Identifier: Apache-2.0
/*
 * User stacks of `perf record --call-graph dwarf` samples: the sample holds
 * the user registers and a copy of the top of the user stack; elfutils'
 * unwinder walks it with the DWARF CFI (.eh_frame, .debug_frame) of the
 * binaries the process had mapped. One Dwfl per process is kept while the
 * process's mappings stay the same, so CFI is parsed once, not per sample.
 *
 * Binaries and the [vdso] are found as lib/binary_lookup.h describes, in
 * the configured directories. x86-64 only.
 */
#ifndef PROFD_PERF_UNWIND_H
#define PROFD_PERF_UNWIND_H

#include <stdint.h>

#include "process.h"

struct unwinder;

/* The state of one sample's user context. */
struct user_context {
    int32_t tid;
    uint64_t regs_mask;        /* perf register numbers present, in this order */
    const uint8_t *regs;       /* one u64 per bit of regs_mask, in input byte order */
    const uint8_t *stack;      /* the stack copy, starting at the SP register */
    uint64_t stack_size;       /* valid bytes (dyn_size) */
};

/* An unwinder looking in dirs[ndirs] (copied; a leading ~/ is $HOME)
 * after the recorded paths. */
struct unwinder *unwinder_new(const char *const *dirs, size_t ndirs);
/*
 * Unwinds c in process p: writes up to max program counters, the sampled
 * IP first, then return addresses (not moved back). Stops cleanly where
 * the CFI or the stack copy ends, and after a frame in none of p's
 * mappings. Returns how many were written.
 */
uint32_t unwinder_unwind(struct unwinder *u, const struct perf_file *f, const struct process *p,
                         const struct user_context *c, uint64_t *pcs, uint32_t max);
/* Drops what was made for the processes ps no longer has, and where the
 * files no map of it names were found; after processes_forget_ended. */
void unwinder_forget_gone(struct unwinder *u, const struct processes *ps);
void unwinder_free(struct unwinder *u);

#endif
