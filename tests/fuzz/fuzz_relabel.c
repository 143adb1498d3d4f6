// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: relabel rules from fuzzed text. The input is split on
 * NUL bytes into regex, replacement, target label, separator and label
 * values; every action is compiled and applied to a small label set. A
 * regex of plain text, which the engine compares instead of matching, must
 * give what the same text as a PCRE2 group gives. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/labels.h"
#include "../../core/relabel.h"

static const char *next_part(const uint8_t **p, const uint8_t *end, char *buf, size_t cap)
{
    size_t n = 0;
    while (*p < end && **p && n + 1 < cap)
        buf[n++] = (char)*(*p)++;
    if (*p < end)
        (*p)++;
    buf[n] = '\0';
    return buf;
}

/* The rule's outcome on the driver's label set: kept or not, and the
 * labels left in *l (the caller clears them); *compiled false, and false
 * returned, when the rule does not compile. */
static bool apply_to_set(const struct profd_relabel_rule_cfg *rule, const char *v1,
                         const char *v2, struct profd_labels *l, bool *compiled)
{
    char err[256];
    size_t bad;
    struct profd_relabel *rs = profd_relabel_compile(rule, 1, err, sizeof(err), &bad);
    *compiled = rs != NULL;
    if (!rs)
        return false;
    profd_labels_set(l, "a", v1);
    profd_labels_set(l, "b", v2);
    profd_labels_set(l, "__meta_x", v1);
    bool keep = profd_relabel_apply(rs, l);
    profd_relabel_free(rs);
    return keep;
}

static bool same_labels(const struct profd_labels *x, const struct profd_labels *y)
{
    if (x->n != y->n)
        return false;
    for (size_t i = 0; i < x->n; i++)
        if (strcmp(x->items[i].name, y->items[i].name) ||
            strcmp(x->items[i].value, y->items[i].value))
            return false;
    return true;
}

/* For a regex of plain text and an action that only tests for a match,
 * the comparison must agree with PCRE2 on the same text in a group. */
static void check_plain_text(const struct profd_relabel_rule_cfg *rule, bool keep,
                             const struct profd_labels *got, const char *v1, const char *v2)
{
    const char *re = rule->regex;
    int action = rule->action;
    bool tests_only = !strcmp(profd_relabel_actions[action], "keep") ||
                      !strcmp(profd_relabel_actions[action], "drop") ||
                      !strcmp(profd_relabel_actions[action], "labeldrop") ||
                      !strcmp(profd_relabel_actions[action], "labelkeep");
    if (!tests_only || re[strcspn(re, "\\^$.|?*+()[]{}")])
        return;
    char grouped[300];
    snprintf(grouped, sizeof(grouped), "(?:%s)", re);
    struct profd_relabel_rule_cfg as_regex = *rule;
    as_regex.regex = grouped;
    struct profd_labels l = {0};
    bool compiled;
    bool want = apply_to_set(&as_regex, v1, v2, &l, &compiled);
    if (!compiled || want != keep || (keep && !same_labels(&l, got)))
        abort();
    profd_labels_clear(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    const uint8_t *p = data, *end = data + len;
    char re[256], repl[256], target[64], sep[8], v1[128], v2[128];
    next_part(&p, end, re, sizeof(re));
    next_part(&p, end, repl, sizeof(repl));
    next_part(&p, end, target, sizeof(target));
    next_part(&p, end, sep, sizeof(sep));
    next_part(&p, end, v1, sizeof(v1));
    next_part(&p, end, v2, sizeof(v2));
    char *sources[2] = {"a", "b"};
    for (int action = 0; profd_relabel_actions[action]; action++) {
        struct profd_relabel_rule_cfg cfg = {
            .source_labels = {action >= 6 && action <= 8 ? 0 : 2, sources},
            .separator = sep, .regex = re, .modulus = 7,
            .target_label = action >= 6 && action <= 8 ? NULL : (target[0] ? target : "t"),
            .replacement = repl, .action = action,
        };
        struct profd_labels l = {0};
        bool compiled;
        bool keep = apply_to_set(&cfg, v1, v2, &l, &compiled);
        if (compiled)
            check_plain_text(&cfg, keep, &l, v1, v2);
        profd_labels_clear(&l);
    }
    return 0;
}
