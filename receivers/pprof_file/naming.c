// SPDX-License-Identifier: Apache-2.0
#include "naming.h"

#include <stdio.h>
#include <string.h>

static bool str_is(const struct profd_profile *p, uint32_t idx, const char *s)
{
    size_t n = strlen(s);
    return idx < p->nstrings && p->strings[idx].len == n && !memcmp(p->strings[idx].ptr, s, n);
}

static bool has_type(const struct profd_profile *p, const char *type)
{
    if (str_is(p, p->period_type.type, type))
        return true;
    for (uint32_t i = 0; i < p->nsample_types; i++)
        if (str_is(p, p->sample_types[i].type, type))
            return true;
    return false;
}

const char *pprof_file_infer_name(const struct profd_profile *p, const char *file_name, char *buf,
                                  size_t buflen)
{
    if (has_type(p, "cpu"))
        return "process_cpu";
    if (has_type(p, "alloc_space") || has_type(p, "inuse_space") || has_type(p, "space"))
        return "memory";
    if (has_type(p, "goroutine") || has_type(p, "goroutines"))
        return "goroutine";
    if (has_type(p, "threadcreate"))
        return "threadcreate";
    if (has_type(p, "contentions") || has_type(p, "delay"))
        return strstr(file_name, "block") ? "block" : "mutex";
    if (p->nsample_types && p->sample_types[0].type < p->nstrings &&
        p->strings[p->sample_types[0].type].len) {
        const struct profd_str *s = &p->strings[p->sample_types[0].type];
        snprintf(buf, buflen, "%.*s", (int)s->len, s->ptr);
        return buf;
    }
    return "unknown";
}
