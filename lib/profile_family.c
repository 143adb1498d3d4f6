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

/* String idx of p into out (cut to fit); "" when it is not one. */
static void copy_string(const struct profd_profile *p, uint32_t idx, char *out, size_t n)
{
    const struct profd_str *s = idx < p->nstrings ? &p->strings[idx] : NULL;
    size_t len = s ? (s->len < n - 1 ? s->len : n - 1) : 0;
    if (len)
        memcpy(out, s->ptr, len);
    out[len] = '\0';
}

const char *profile_family(const struct profd_profile *p, const char *hint, char *buf,
                           size_t buflen)
{
    struct profd_type_names t;
    copy_string(p, p->period_type.type, t.period, sizeof(t.period));
    t.nsample = p->nsample_types < PROFD_TYPE_NAMES ? p->nsample_types : PROFD_TYPE_NAMES;
    for (uint32_t i = 0; i < t.nsample; i++)
        copy_string(p, p->sample_types[i].type, t.sample[i], sizeof(t.sample[i]));
    return profile_family_of_types(&t, hint, buf, buflen);
}
