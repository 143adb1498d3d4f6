// SPDX-License-Identifier: Apache-2.0
/*
 * Prometheus relabeling, shared by the relabel processor and the scrape
 * receiver: replace, keep, drop, keepequal, dropequal, hashmod, labelmap,
 * labeldrop, labelkeep, lowercase, uppercase, with Prometheus's defaults.
 * Rule lists are compiled once, at config time, and are read-only after:
 * profd_relabel_apply may run on several threads at once.
 */
#ifndef PROFD_RELABEL_H
#define PROFD_RELABEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profd/model.h"
#include "profd/options.h"

/* One rule as written in YAML (bound through profd_relabel_rule_options). */
struct profd_relabel_rule_cfg {
    struct profd_str_list source_labels;
    char *separator;
    char *regex;
    int64_t modulus;
    char *target_label;
    char *replacement;
    int action;
};

extern const struct profd_option profd_relabel_rule_options[];
extern const char *const profd_relabel_actions[];

struct profd_relabel;

/* Compiles n rules. NULL with err filled and *bad_rule set to the index of
 * the rule at fault when a rule is incomplete or its regex invalid. */
struct profd_relabel *profd_relabel_compile(const struct profd_relabel_rule_cfg *cfgs, size_t n,
                                            char *err, size_t errlen, size_t *bad_rule);
void profd_relabel_free(struct profd_relabel *rs);
/* Applies every rule to l in order. Returns false when l is to be dropped
 * (l is then in an unspecified state). NULL rules keep everything. */
bool profd_relabel_apply(const struct profd_relabel *rs, struct profd_labels *l);
/* Prometheus's hashmod: md5 of s, bytes 8..15 as a big-endian integer, mod modulus. */
uint64_t profd_hash_mod(const char *s, size_t len, uint64_t modulus);

#endif
