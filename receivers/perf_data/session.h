// SPDX-License-Identifier: Apache-2.0
/*
 * A perf.data session: follows processes and threads through COMM, FORK,
 * EXIT, MMAP and MMAP2 records, turns every SAMPLE into a stack of
 * (mapping, address) frames, and aggregates them into pprof profiles, one
 * per process, per event or for everything (split). Addresses are left
 * unsymbolized: a symbolize processor downstream fills functions and lines.
 */
#ifndef PROFD_PERF_SESSION_H
#define PROFD_PERF_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "perf_file.h"
#include "profd/plugin.h"

enum perf_split { SPLIT_PID, SPLIT_EVENT, SPLIT_NONE };

struct perf_session_options {
    enum perf_split split;
    bool label_pid, label_tid, label_comm, label_cpu;
    const char *const *binary_dirs;   /* where dwarf-mode unwinding looks for binaries */
    size_t nbinary_dirs;
};

/* One output profile with the series labels it should carry. */
struct perf_output {
    struct profd_profile *profile;
    struct profd_labels labels;   /* __name__, service_name, pid, ... */
};

struct perf_session;

/* A session over an opened file; f stays owned by the caller, h builds
 * the profiles. */
struct perf_session *perf_session_new(const struct profd_host *h, const struct perf_file *f,
                                      const struct perf_session_options *o);
/* Applies one record. Returns 0, or -1 with err naming the problem and the
 * record's offset (the session stays usable: the record is skipped). */
int perf_session_add(struct perf_session *s, const struct perf_record *r, char *err,
                     size_t errlen);
/* Samples and lost-sample counts seen so far. */
uint64_t perf_session_samples(const struct perf_session *s);
uint64_t perf_session_lost(const struct perf_session *s);
/*
 * Builds the profiles aggregated so far and resets the aggregation (process
 * state is kept, so a stream can be cut into intervals). The caller owns the
 * returned array and its profiles and label sets; *n is set to its length.
 */
struct perf_output *perf_session_flush(struct perf_session *s, size_t *n);
/* Forgets the processes and threads that ended, the mappings no process
 * holds and the unwinder's state for them (processes_forget_ended): a
 * stream's, between two flushes, so that it keeps what is live. Nothing
 * may point at processes or mappings then: call it after a flush. */
void perf_session_forget_ended(struct perf_session *s);
void perf_session_free(struct perf_session *s);

#endif
