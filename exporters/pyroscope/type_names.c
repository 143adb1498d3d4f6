// SPDX-License-Identifier: Apache-2.0
#include "type_names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool has_dash(const char *name)
{
    return strchr(name, '-') != NULL;
}

static bool types_have_dash(const struct profd_type_names *t)
{
    bool dash = has_dash(t->period);
    for (uint32_t i = 0; i < t->nsample; i++)
        dash |= has_dash(t->sample[i]);
    return dash;
}

static bool string_has_dash(const struct profd_profile *p, uint32_t index)
{
    return index < p->nstrings && memchr(p->strings[index].ptr, '-', p->strings[index].len);
}

/* types_have_dash over every name in full, for names too many or too long
 * for struct profd_type_names. */
static bool model_types_have_dash(const struct profd_profile *p)
{
    bool dash = string_has_dash(p, p->period_type.type);
    for (uint32_t i = 0; i < p->nsample_types; i++)
        dash |= string_has_dash(p, p->sample_types[i].type);
    return dash;
}

/* Points q's string at index (a copy of p's table) to a copy of it with
 * each '-' made '_', kept in *made for freeing; once per index. */
static void undash(const struct profd_profile *p, struct profd_str *strings, uint32_t index,
                   char **made, size_t *nmade)
{
    if (!string_has_dash(p, index) || strings[index].ptr != p->strings[index].ptr)
        return;
    char *s = malloc(p->strings[index].len + 1);
    if (!s)
        abort();
    memcpy(s, p->strings[index].ptr, p->strings[index].len);
    for (uint32_t i = 0; i < p->strings[index].len; i++)
        if (s[i] == '-')
            s[i] = '_';
    strings[index].ptr = s;
    made[(*nmade)++] = s;
}

int pyroscope_pprof_of(const struct profd_host *host, struct profd_record *r,
                       const struct profd_type_names *types, struct pyroscope_pprof *out,
                       bool *fixed, char *why, size_t whylen)
{
    *out = (struct pyroscope_pprof){0};
    *fixed = false;
    const struct profd_profile *p = NULL;
    if (types->cut && !(p = host->record_profile(r, why, whylen)))
        return -1;
    if (!(p ? model_types_have_dash(p) : types_have_dash(types)))
        return host->record_pprof_view(r, true, false, &out->data, &out->len, &out->owned, why,
                                       whylen) < 0
                   ? -1
                   : 0;
    if (!p && !(p = host->record_profile(r, why, whylen)))
        return -1;
    /* the record's model stays as it is (other exporters read it): the
     * renamed strings live in a copy of its string table */
    struct profd_profile q = *p;
    q.strings = malloc((p->nstrings ? p->nstrings : 1) * sizeof(*q.strings));
    char **made = malloc((p->nsample_types + 1) * sizeof(*made));
    if (!q.strings || !made)
        abort();
    memcpy(q.strings, p->strings, p->nstrings * sizeof(*q.strings));
    q.string_index = NULL;
    size_t nmade = 0;
    undash(p, q.strings, p->period_type.type, made, &nmade);
    for (uint32_t i = 0; i < p->nsample_types; i++)
        undash(p, q.strings, p->sample_types[i].type, made, &nmade);
    uint8_t *encoded = NULL;
    int rc = host->pprof_encode(&q, true, &encoded, &out->len);
    for (size_t i = 0; i < nmade; i++)
        free(made[i]);
    free(made);
    free(q.strings);
    if (rc < 0) {
        snprintf(why, whylen, "the profile could not be encoded");
        return -1;
    }
    out->data = out->owned = encoded;
    *fixed = nmade > 0;
    return 0;
}

void pyroscope_pprof_free(struct pyroscope_pprof *pp)
{
    free(pp->owned);
    *pp = (struct pyroscope_pprof){0};
}
