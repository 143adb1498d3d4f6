// SPDX-License-Identifier: Apache-2.0
/*
 * A session's state, shared by the aggregation of samples (session.c) and
 * the building of profiles from it (build.c). Private to the receiver.
 */
#ifndef PROFD_PERF_SESSION_STATE_H
#define PROFD_PERF_SESSION_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "index.h"
#include "process.h"
#include "session.h"

struct location {
    uint32_t mapping;     /* mapping ref (position in the out's maps + 1), 0 = none */
    uint64_t address;
};

/* The labels that keep samples of one stack apart, when the session
 * labels samples (label_tid, label_cpu, label_comm): just before the
 * sample's values, so that a session that does not (the default) spends
 * nothing on them. */
struct sample_tags {
    int32_t tid, cpu;          /* -1: not labeled */
    const char *comm;          /* interned in the session's comm pool; NULL: not labeled */
};

/* A distinct stack (and labels). Its values and location refs are one
 * block in the arena of the profile being built, so a lookup that finds it
 * reads one place, and building the profile copies nothing. */
struct sample {
    int64_t *values;           /* the session's ncolumns, then nframes location refs
                                  (position + 1), leaf first; the tags before them */
    uint32_t nframes;
};

static inline const struct sample_tags *tags_of(const struct sample *sm)
{
    return (const struct sample_tags *)sm->values - 1;
}

/* Aggregation state of one output profile. */
struct out {
    int64_t key;                  /* pid, attr index or 0 */
    int32_t pid;
    size_t attr;                  /* SPLIT_EVENT: the event */
    struct location *locs;
    size_t nlocs, locs_cap;
    struct index loc_index;
    const struct map **maps;         /* the profile's mappings, one per binary */
    size_t nmaps, maps_cap;
    struct index map_index;
    struct profd_profile *profile;   /* receives locations and values as they come */
    struct sample *samples;
    size_t nsamples, samples_cap;
    struct index sample_index;
    uint64_t first_time, last_time;
};

#define MEMO_SIZE 4096    /* remembered frames, a power of 2 */

/* One remembered frame: valid while gen is the session's. */
struct memo {
    uint64_t key;     /* address, bit 63 set for a leaf */
    uint64_t gen;
    int32_t pid;
    uint32_t out, loc;
};

struct perf_session {
    const struct profd_host *h;
    const struct perf_file *f;
    struct perf_session_options o;
    struct processes procs;
    struct out *outs;
    size_t nouts, outs_cap;
    struct index out_index;
    size_t ncolumns;              /* 2 per attr, fixed at the first sample */
    bool labeled;                 /* samples carry tags (label_tid, label_cpu, label_comm) */
    uint64_t samples, lost;
    uint64_t lost_in_window;      /* since the last flush */
    struct memo *memo;
    uint64_t gen;                 /* bumped when mappings or outputs change */
    struct unwinder *unwinder;    /* made on the first dwarf-mode sample */
};

/* The profile of out o, built from what it aggregated (its tables are
 * cleared; the profile is the caller's). */
struct profd_profile *perf_build_profile(struct perf_session *s, struct out *o);
/* The series labels of out o's profile into l: __name__ (perf_<event>),
 * service_name (its process's name, or "perf"), pid when asked for, and the
 * recording's hostname and os_release. */
void perf_out_labels(struct perf_session *s, const struct out *o, struct profd_labels *l);

#endif
