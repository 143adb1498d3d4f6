// SPDX-License-Identifier: Apache-2.0
/*
 * Targets: every (target, profile) pair a job scrapes, with its URL and
 * series labels, built from static_configs, file_sd_configs and
 * kubernetes_sd_configs and passed
 * through relabel_configs as Prometheus does.
 */
#ifndef PPROF_SCRAPE_TARGETS_H
#define PPROF_SCRAPE_TARGETS_H

#include "../../lib/key_map.h"
#include "config.h"
#include "presets.h"

struct scrape_unit {
    /* A unit of a found group met unchanged: the pair it made at the last
     * build (the caller's) and where that was in the caller's list, and
     * nothing else set. */
    void *pair;
    size_t slot;
    char *key;                    /* URL and labels: the identity across refreshes */
    uint64_t key_hash;            /* unit_key_hash(key) */
    char *url;
    char *address;                /* host:port, after relabeling */
    struct profd_labels labels;   /* the series labels of what it yields */
    size_t job, def;              /* indices of its job and profile */
};

/* The target groups a discovery of a job found (kubernetes_sd_configs). */
struct found_groups {
    const struct profd_target_group *groups;
    size_t n;
    const uint64_t *hashes;   /* each group's target_group_hash */
};

/*
 * The units each found group made (by a hash of the group's target and
 * labels) and the pairs they became: a discovery's groups change a few at
 * a time, and the units of those that did not are not made again, their
 * pairs taken as they are. Zeroed is empty.
 */
struct unit_memo {
    struct key_map by_group;   /* group hash -> index into ranges */
    struct memo_range {
        size_t first, n;       /* the build's units [first, first + n) */
    } *ranges;
    size_t nranges, ranges_cap;
    /* Filled by the caller once the build's units are pairs: the pair of
     * unit i and its place in the caller's list. */
    void **pairs;
    size_t *slots;
};

/* Frees what m holds and empties it. */
void unit_memo_clear(struct unit_memo *m);

/* The hash a unit's key is found by. */
uint64_t unit_key_hash(const char *key);

/* A 64-bit identity of g's targets and labels. */
uint64_t target_group_hash(const struct profd_target_group *g);

/*
 * Builds every unit of job number job_index, from its static_configs, the
 * groups its discoveries found (nfound of them) and its file_sd_configs.
 * A found group that last (NULL: none) has gives units of its pairs alone
 * (`pair`, `slot`); every found group's units go into next (its pairs
 * left for the caller). Returns 0, or -1 with err set when a file_sd file
 * cannot be read (the caller keeps its current units).
 */
int targets_build(const struct profd_host *h, const struct job *job, size_t job_index,
                  const struct profile_def *defs, size_t ndefs, const struct found_groups *found,
                  size_t nfound, const struct unit_memo *last, struct unit_memo *next,
                  struct scrape_unit **units, size_t *n, char *err, size_t errlen);
/* A string that changes when any of job's file_sd files changes. */
char *targets_sd_signature(const struct job *job);
/* v escaped as a label value of /metrics (\\, \" and \n), malloc'd. */
char *escape_label_value(const char *v);
void scrape_unit_clear(const struct profd_host *h, struct scrape_unit *u);

#endif
