// SPDX-License-Identifier: Apache-2.0
#include "profile_family.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* String idx of p, if it is one. */
static const struct profd_str *string_at(const struct profd_profile *p, uint32_t idx)
{
    return idx < p->nstrings ? &p->strings[idx] : NULL;
}

/* Whether s is word (whole) or, when part is set, holds it. */
static bool matches(const struct profd_str *s, const char *word, bool part)
{
    size_t n = strlen(word);
    if (!s || s->len < n)
        return false;
    if (!part)
        return s->len == n && !memcmp(s->ptr, word, n);
    for (size_t i = 0; i + n <= s->len; i++)
        if (!memcmp(s->ptr + i, word, n))
            return true;
    return false;
}

/* Whether the period type or a sample type of p is word, or holds it. */
static bool has_type(const struct profd_profile *p, const char *word, bool part)
{
    if (matches(string_at(p, p->period_type.type), word, part))
        return true;
    for (uint32_t i = 0; i < p->nsample_types; i++)
        if (matches(string_at(p, p->sample_types[i].type), word, part))
            return true;
    return false;
}

const char *profile_family(const struct profd_profile *p, const char *hint, char *buf,
                           size_t buflen)
{
    if (has_type(p, "wall", false))
        return "wall";
    if (has_type(p, "cpu", true))
        return "process_cpu";
    if (has_type(p, "alloc_", true) || has_type(p, "inuse_", true) ||
        has_type(p, "space", false) || has_type(p, "objects", false))
        return "memory";
    if (has_type(p, "goroutine", false) || has_type(p, "goroutines", false))
        return "goroutine";
    if (has_type(p, "threadcreate", false))
        return "threadcreate";
    if (has_type(p, "mutex_", true))
        return "mutex";
    if (has_type(p, "block_", true))
        return "block";
    if (has_type(p, "contentions", false) || has_type(p, "delay", false))
        return hint && strstr(hint, "block") ? "block" : "mutex";
    const struct profd_str *first = p->nsample_types ? string_at(p, p->sample_types[0].type) : NULL;
    if (first && first->len) {
        snprintf(buf, buflen, "%.*s", (int)first->len, first->ptr);
        return buf;
    }
    return "unknown";
}
