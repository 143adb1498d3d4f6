// SPDX-License-Identifier: Apache-2.0
#include "multipart.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <jansson.h>

#include "../../lib/grow.h"

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

/* The most a sample_type_config may take: a few hundred bytes a type. The
 * config is read into a tree, ten times its size, which a body as large as
 * a profile's should not be. */
#define MAX_SAMPLE_TYPE_CONFIG (64 * 1024)

/* sample_type_config parsed: a JSON object ({"<type>": {"units": ...,
 * "display-name": ..., "cumulative": bool, "aggregation": ...}, ...}), or
 * NULL with why set. */
static json_t *load_sample_type_config(const struct form_field *config, char *why,
                                       size_t whylen)
{
    if (config->len > MAX_SAMPLE_TYPE_CONFIG) {
        snprintf(why, whylen, "sample_type_config: %zu bytes, more than the %d a config of "
                 "sample types may take", config->len, MAX_SAMPLE_TYPE_CONFIG);
        return NULL;
    }
    json_error_t je;
    json_t *root = json_loadb((const char *)config->data, config->len, 0, &je);
    if (root && json_is_object(root))
        return root;
    snprintf(why, whylen, "sample_type_config: %s", root ? "not a JSON object" : je.text);
    json_decref(root);
    return NULL;
}

/* The entry of sample type i in the config, or NULL. */
static json_t *config_entry(const struct profd_profile *p, uint32_t i, json_t *config)
{
    const struct profd_str *t = &p->strings[p->sample_types[i].type];
    char name[256];
    snprintf(name, sizeof(name), "%.*s", (int)(t->len < 255 ? t->len : 255), t->ptr);
    json_t *entry = json_object_get(config, name);
    return json_is_object(entry) ? entry : NULL;
}

/* Which sample types the config calls cumulative (malloc'd). */
static bool *cumulative_by_config(const struct profd_profile *p, json_t *config)
{
    bool *c = calloc(p->nsample_types + 1, sizeof(*c));
    if (!c)
        abort();
    for (uint32_t i = 0; i < p->nsample_types; i++)
        c[i] = json_is_true(json_object_get(config_entry(p, i, config), "cumulative"));
    return c;
}

/* The config's display names and units given to p's sample types.
 * "aggregation" is how Pyroscope's own store merges a type over time and
 * has no place in a profile. */
static void rename_by_config(const struct profd_host *host, struct profd_profile *p,
                             json_t *config)
{
    for (uint32_t i = 0; i < p->nsample_types; i++) {
        json_t *entry = config_entry(p, i, config);
        const char *units = json_string_value(json_object_get(entry, "units"));
        const char *display = json_string_value(json_object_get(entry, "display-name"));
        if (units && *units)
            p->sample_types[i].unit = host->profile_intern(p, units, strlen(units));
        if (display && *display)
            p->sample_types[i].type = host->profile_intern(p, display, strlen(display));
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
    json_t *types = has_config ? load_sample_type_config(&config, why, whylen) : NULL;
    if (has_config && !types)
        return false;
    if (has_prev) {
        struct profd_profile *old = host->pprof_decode(prev.data, prev.len, max_decoded, err,
                                                       sizeof(err));
        if (!old) {
            snprintf(why, whylen, "prev_profile field: %s", err);
            json_decref(types);
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
    json_decref(types);
    if (has_prev || has_config)
        host->record_touch(r);
    return true;
}
