// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: relabel rules from fuzzed text. The input is split on
 * NUL bytes into regex, replacement, target label, separator and label
 * values; every action is compiled and applied to a small label set. */
#include <stdint.h>
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
        char err[256];
        size_t bad;
        struct profd_relabel *rs = profd_relabel_compile(&cfg, 1, err, sizeof(err), &bad);
        if (!rs)
            continue;
        struct profd_labels l = {0};
        profd_labels_set(&l, "a", v1);
        profd_labels_set(&l, "b", v2);
        profd_labels_set(&l, "__meta_x", v1);
        profd_relabel_apply(rs, &l);
        profd_labels_clear(&l);
        profd_relabel_free(rs);
    }
    return 0;
}
