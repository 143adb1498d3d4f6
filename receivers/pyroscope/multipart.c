// SPDX-License-Identifier: Apache-2.0
#include "multipart.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../lib/grow.h"
#include "../../lib/json_pull.h"

/* The boundary parameter of a multipart Content-Type, into buf. */
static bool boundary_of(const char *content_type, char *buf, size_t n)
{
    const char *b = strcasestr(content_type, "boundary=");
    if (!b)
        return false;
    b += 9;
    bool quoted = *b == '"';
    b += quoted;
    size_t len = strcspn(b, quoted ? "\"" : "; \t");
    if (!len || len + 3 > n)
        return false;
    snprintf(buf, n, "--%.*s", (int)len, b);
    return true;
}

static const uint8_t *find(const uint8_t *hay, size_t len, const char *needle, size_t nlen)
{
    return nlen <= len ? memmem(hay, len, needle, nlen) : NULL;
}

int multipart_field(const char *content_type, const uint8_t *body, size_t len, const char *name,
                    struct form_field *out, char *why, size_t whylen)
{
    char delim[128];
    if (!boundary_of(content_type, delim, sizeof(delim))) {
        snprintf(why, whylen, "multipart body without a boundary");
        return -1;
    }
    size_t dlen = strlen(delim);
    const uint8_t *end = body + len;
    const uint8_t *p = find(body, len, delim, dlen);
    while (p) {
        p += dlen;
        if (end - p >= 2 && p[0] == '-' && p[1] == '-')
            return 0;   /* the closing delimiter */
        const uint8_t *head_end = find(p, (size_t)(end - p), "\r\n\r\n", 4);
        if (!head_end) {
            snprintf(why, whylen, "multipart part without the end of its headers");
            return -1;
        }
        const uint8_t *data = head_end + 4;
        const uint8_t *next = find(data, (size_t)(end - data), delim, dlen);
        if (!next || next - data < 2) {
            snprintf(why, whylen, "multipart part without its closing boundary");
            return -1;
        }
        const uint8_t *n = find(p, (size_t)(head_end - p), "name=\"", 6);
        if (n) {
            n += 6;
            const uint8_t *q = memchr(n, '"', (size_t)(head_end - n));
            if (q && (size_t)(q - n) == strlen(name) && !memcmp(n, name, (size_t)(q - n))) {
                *out = (struct form_field){(const char *)n, (size_t)(q - n), data,
                                           (size_t)(next - data) - 2};   /* less CRLF */
                return 1;
            }
        }
        p = next;
    }
    snprintf(why, whylen, "multipart body without its boundary");
    return -1;
}

/* Which sample types of p are cumulative, by name (Go's cumulative
 * columns) when there is no sample_type_config. */
static bool *cumulative_by_name(const struct profd_profile *p)
{
    bool *c = calloc(p->nsample_types + 1, sizeof(*c));
    if (!c)
        abort();
    for (uint32_t i = 0; i < p->nsample_types; i++) {
        const struct profd_str *t = &p->strings[p->sample_types[i].type];
        c[i] = (t->len > 6 && !memcmp(t->ptr, "alloc_", 6)) ||
               (t->len == 11 && !memcmp(t->ptr, "contentions", 11)) ||
               (t->len == 5 && !memcmp(t->ptr, "delay", 5));
    }
    return c;
}

/* What sample_type_config says of one of a profile's sample types. */
struct type_config {
    bool cumulative;
    char *units, *display;   /* NULL: not given */
};

static void type_config_clear(struct type_config *t)
{
    free(t->units);
    free(t->display);
    *t = (struct type_config){0};
}

/* Frees the entries of a profile's n sample types, and c. */
static void type_configs_free(struct type_config *c, uint32_t n)
{
    for (uint32_t i = 0; c && i < n; i++)
        type_config_clear(&c[i]);
    free(c);
}

/* Reads the entry object at the cursor ({"units": ..., "display-name":
 * ..., "cumulative": bool, "aggregation": ...}) into e, empty before. */
static void read_type_entry(struct json_pull *j, struct type_config *e)
{
    const char *key, *s;
    json_pull_object(j);
    while (json_pull_member(j, &key)) {
        char **text = !strcmp(key, "units")          ? &e->units
                      : !strcmp(key, "display-name") ? &e->display : NULL;
        if (text) {
            free(*text);
            *text = json_pull_string(j, &s, NULL) ? must_strdup(s) : NULL;
        } else {
            e->cumulative = !strcmp(key, "cumulative") ? json_pull_kind(j) == JSON_PULL_TRUE
                                                       : e->cumulative;
            json_pull_skip(j);
        }
    }
}

/* Gives entry e to each sample type of p named name, in place of what
 * c had for it. */
static void set_type_entry(const struct profd_profile *p, const char *name,
                           const struct type_config *e, struct type_config *c)
{
    for (uint32_t i = 0; i < p->nsample_types; i++) {
        const struct profd_str *t = &p->strings[p->sample_types[i].type];
        if (t->len != strlen(name) || memcmp(t->ptr, name, t->len))
            continue;
        type_config_clear(&c[i]);
        c[i] = (struct type_config){e->cumulative, must_strdup_or_null(e->units),
                                    must_strdup_or_null(e->display)};
    }
}

/* sample_type_config ({"<type>": entry, ...}) read where it lies into
 * what it says of each sample type of p, the last entry of a name
 * counting (an entry that is not an object: nothing); NULL with why set
 * when it is not a JSON object. */
static struct type_config *read_sample_type_config(const struct form_field *config,
                                                   const struct profd_profile *p, char *why,
                                                   size_t whylen)
{
    struct type_config *c = calloc(p->nsample_types + 1, sizeof(*c));
    if (!c)
        abort();
    struct json_pull j;
    json_pull_init(&j, (const char *)config->data, config->len);
    bool object = json_pull_kind(&j) == JSON_PULL_OBJECT && json_pull_object(&j);
    const char *key;
    while (object && json_pull_member(&j, &key)) {
        char *name = must_strdup(key);   /* the entry's own names are read next */
        struct type_config e = {0};
        if (json_pull_kind(&j) == JSON_PULL_OBJECT)
            read_type_entry(&j, &e);
        else
            json_pull_skip(&j);
        set_type_entry(p, name, &e, c);
        type_config_clear(&e);
        free(name);
    }
    if (!object)
        json_pull_skip(&j);
    bool json = json_pull_end(&j);
    if (!json || !object) {
        char error[160] = "not a JSON object";
        if (!json)
            json_pull_error(&j, error, sizeof(error));
        snprintf(why, whylen, "sample_type_config: %s", error);
        type_configs_free(c, p->nsample_types);
        c = NULL;
    }
    json_pull_free(&j);
    return c;
}

/* Which sample types the config calls cumulative (malloc'd). */
static bool *cumulative_by_config(const struct profd_profile *p, const struct type_config *c)
{
    bool *cumulative = calloc(p->nsample_types + 1, sizeof(*cumulative));
    if (!cumulative)
        abort();
    for (uint32_t i = 0; i < p->nsample_types; i++)
        cumulative[i] = c[i].cumulative;
    return cumulative;
}

/* The config's display names and units given to p's sample types.
 * "aggregation" is how Pyroscope's own store merges a type over time and
 * has no place in a profile. */
static void rename_by_config(const struct profd_host *host, struct profd_profile *p,
                             const struct type_config *c)
{
    for (uint32_t i = 0; i < p->nsample_types; i++) {
        if (c[i].units && *c[i].units)
            p->sample_types[i].unit = host->profile_intern(p, c[i].units, strlen(c[i].units));
        if (c[i].display && *c[i].display)
            p->sample_types[i].type =
                host->profile_intern(p, c[i].display, strlen(c[i].display));
    }
}

bool multipart_record(const struct profd_host *host, const char *content_type,
                      const uint8_t *body, size_t len, size_t max_decoded, struct profd_batch *b,
                      char *why, size_t whylen)
{
    struct form_field profile, prev, config;
    int has_profile = multipart_field(content_type, body, len, "profile", &profile, why, whylen);
    if (has_profile <= 0) {
        if (has_profile == 0)
            snprintf(why, whylen, "multipart body without a profile field");
        return false;
    }
    int has_prev = multipart_field(content_type, body, len, "prev_profile", &prev, why, whylen);
    int has_config = multipart_field(content_type, body, len, "sample_type_config", &config, why,
                                     whylen);
    if (has_prev < 0 || has_config < 0)
        return false;
    char err[200];
    struct profd_record *r =
        host->record_add_pprof(b, profile.data, profile.len, max_decoded, err, sizeof(err));
    if (!r) {
        snprintf(why, whylen, "profile field: %s", err);
        return false;
    }
    struct profd_profile *p = host->record_profile(r, err, sizeof(err));
    if (!p) {   /* checked already: only memory could fail it */
        snprintf(why, whylen, "profile field: %s", err);
        return false;
    }
    struct type_config *types =
        has_config ? read_sample_type_config(&config, p, why, whylen) : NULL;
    if (has_config && !types)
        return false;
    if (has_prev) {
        struct profd_profile *old = host->pprof_decode(prev.data, prev.len, max_decoded, err,
                                                       sizeof(err));
        if (!old) {
            snprintf(why, whylen, "prev_profile field: %s", err);
            type_configs_free(types, p->nsample_types);
            return false;
        }
        bool *cumulative = types ? cumulative_by_config(p, types) : cumulative_by_name(p);
        struct profd_delta_state *state = NULL;
        host->profile_delta(&state, old, cumulative);   /* primes with the previous values */
        host->profile_delta(&state, p, cumulative);     /* p - old, or p whole after a restart */
        host->delta_state_free(state);
        host->profile_free(old);
        free(cumulative);
    }
    if (types)
        rename_by_config(host, p, types);   /* after the delta, which matches by name */
    type_configs_free(types, p->nsample_types);
    if (has_prev || has_config)
        host->record_touch(r);
    return true;
}
