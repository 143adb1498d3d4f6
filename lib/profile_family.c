// SPDX-License-Identifier: Apache-2.0
#include "profile_family.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Whether the period type or a sample type of t is word, or holds it. */
static bool has_type(const struct profd_type_names *t, const char *word, bool part)
{
    if (part ? strstr(t->period, word) != NULL : !strcmp(t->period, word))
        return true;
    for (uint32_t i = 0; i < t->nsample; i++)
        if (part ? strstr(t->sample[i], word) != NULL : !strcmp(t->sample[i], word))
            return true;
    return false;
}

const char *profile_family_of_types(const struct profd_type_names *t, const char *hint,
                                    char *buf, size_t buflen)
{
    if (has_type(t, "wall", false))
        return "wall";
    if (has_type(t, "cpu", true))
        return "process_cpu";
    if (has_type(t, "alloc_", true) || has_type(t, "inuse_", true) ||
        has_type(t, "space", false) || has_type(t, "objects", false))
        return "memory";
    if (has_type(t, "goroutine", false) || has_type(t, "goroutines", false))
        return "goroutine";
    if (has_type(t, "threadcreate", false))
        return "threadcreate";
    if (has_type(t, "mutex_", true))
        return "mutex";
    if (has_type(t, "block_", true))
        return "block";
    if (has_type(t, "contentions", false) || has_type(t, "delay", false))
        return hint && strstr(hint, "block") ? "block" : "mutex";
    if (t->nsample && t->sample[0][0]) {
        snprintf(buf, buflen, "%s", t->sample[0]);
        return buf;
    }
    return "unknown";
}
