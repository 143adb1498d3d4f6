// SPDX-License-Identifier: Apache-2.0
#include "multipart.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* Which sample types of p are cumulative, by sample_type_config's JSON
 * ("<type>": {..., "cumulative": true}) or, without one, by name. */
static bool *cumulative_types(const struct profd_profile *p, const struct form_field *config)
{
    bool *c = calloc(p->nsample_types + 1, sizeof(*c));
    if (!c)
        abort();
    for (uint32_t i = 0; i < p->nsample_types; i++) {
        const struct profd_str *t = &p->strings[p->sample_types[i].type];
        char key[160];
        snprintf(key, sizeof(key), "\"%.*s\"", (int)(t->len < 150 ? t->len : 150), t->ptr);
        if (!config) {
            c[i] = (t->len > 6 && !memcmp(t->ptr, "alloc_", 6)) ||
                   (t->len == 11 && !memcmp(t->ptr, "contentions", 11)) ||
                   (t->len == 5 && !memcmp(t->ptr, "delay", 5));
            continue;
        }
        const uint8_t *k = memmem(config->data, config->len, key, strlen(key));
        if (!k)
            continue;
        const uint8_t *close = memchr(k, '}', (size_t)(config->data + config->len - k));
        size_t span = close ? (size_t)(close - k) : (size_t)(config->data + config->len - k);
        const uint8_t *cu = memmem(k, span, "\"cumulative\"", 12);
        c[i] = cu && memmem(cu, span - (size_t)(cu - k), "true", 4);
    }
    return c;
}

bool multipart_record(const struct profd_host *host, const char *content_type,
                      const uint8_t *body, size_t len, struct profd_batch *b, char *why,
                      size_t whylen)
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
    uint8_t *copy = must_malloc(profile.len);
    memcpy(copy, profile.data, profile.len);
    bool gz = profile.len >= 2 && copy[0] == 0x1f && copy[1] == 0x8b;
    struct profd_record *r =
        host->record_add(b, copy, profile.len, gz ? PROFD_ENC_PPROF_GZIP : PROFD_ENC_PPROF_RAW);
    char err[200];
    struct profd_profile *p = host->record_profile(r, err, sizeof(err));
    if (!p) {
        snprintf(why, whylen, "profile field: %s", err);
        return false;
    }
    if (!has_prev)
        return true;
    struct profd_profile *old = host->pprof_decode(prev.data, prev.len, err, sizeof(err));
    if (!old) {
        snprintf(why, whylen, "prev_profile field: %s", err);
        return false;
    }
    bool *cumulative = cumulative_types(p, has_config ? &config : NULL);
    struct profd_delta_state *state = NULL;
    host->profile_delta(&state, old, cumulative);   /* primes with the previous values */
    host->profile_delta(&state, p, cumulative);     /* p - old, or p whole after a restart */
    host->delta_state_free(state);
    host->profile_free(old);
    free(cumulative);
    host->record_touch(r);
    return true;
}
