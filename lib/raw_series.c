// SPDX-License-Identifier: Apache-2.0
#include "raw_series.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "label_valid.h"
#include "pb_reader.h"
#include "utf8_valid.h"

static void put_varint(struct pb_buf *b, uint64_t v)
{
    b->p = grow_array(b->p, &b->cap, b->len + 10, 1);
    while (v >= 0x80) {
        b->p[b->len++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b->p[b->len++] = (uint8_t)v;
}

void pb_buf_bytes(struct pb_buf *b, unsigned field, const void *data, size_t len)
{
    put_varint(b, (uint64_t)field << 3 | 2);
    put_varint(b, len);
    b->p = grow_array(b->p, &b->cap, b->len + len, 1);
    if (len)
        memcpy(b->p + b->len, data, len);
    b->len += len;
}

/* Which labels of a series a pass over it reads. Parca's are read in one
 * pass, as sent. Pyroscope's in two: first those named without a dot, then
 * the dotted ones with each dot made an underscore, as its distributor
 * does; a name so made that the series has already is dropped when the
 * values agree and refused when they differ, in either order. */
enum label_pass { PASS_AS_SENT, PASS_UNDOTTED, PASS_DOTTED };   /* Pyroscope's in this order */

/* Adds one label { name = 1, value = 2 } to l when it belongs to pass;
 * false with why set. */
static bool read_label(const struct profd_host *host, const uint8_t *data, size_t len,
                       enum label_pass pass, struct profd_labels *l, char *why, size_t whylen)
{
    struct pb_reader r;
    struct pb_field f = {0};
    const char *err;
    const char *name = "", *value = "";
    size_t nlen = 0, vlen = 0;
    pb_reader_init(&r, data, data, len);
    while (pb_next(&r, &f, &err) > 0) {
        if (f.number == 1 && f.wire == PB_LEN)
            name = (const char *)f.data, nlen = f.len;
        else if (f.number == 2 && f.wire == PB_LEN)
            value = (const char *)f.data, vlen = f.len;
    }
    bool dotted = memchr(name, '.', nlen) != NULL;
    if ((pass == PASS_UNDOTTED && dotted) || (pass == PASS_DOTTED && !dotted))
        return true;
    char key[RAW_MAX_LABEL_NAME + 1], val[RAW_MAX_LABEL_VALUE + 1];
    int shown = (int)(nlen < 64 ? nlen : 64);
    if (nlen > RAW_MAX_LABEL_NAME || vlen > RAW_MAX_LABEL_VALUE) {
        snprintf(why, whylen, "label \"%.*s\": %s over %d bytes", shown, name,
                 nlen > RAW_MAX_LABEL_NAME ? "name" : "value",
                 nlen > RAW_MAX_LABEL_NAME ? RAW_MAX_LABEL_NAME : RAW_MAX_LABEL_VALUE);
        return false;
    }
    if (!label_name_undotted(name, nlen, key) || (pass == PASS_AS_SENT && dotted)) {
        snprintf(why, whylen, "invalid label name \"%.*s\"", shown, name);
        return false;
    }
    if (!utf8_is_valid(value, vlen)) {   /* as protobuf's string fields must be */
        snprintf(why, whylen, "label \"%.*s\": value not valid UTF-8", shown, name);
        return false;
    }
    memcpy(val, value, vlen);
    val[vlen] = '\0';
    const char *had = host->labels_get(l, key);
    if (had && pass == PASS_DOTTED && !strcmp(had, val))
        return true;
    if (had) {
        snprintf(why, whylen, "duplicate label name \"%.64s\"", key);
        return false;
    }
    host->labels_set(l, key, val);
    return true;
}

/* The labels of a series (field 1, in either shape) into l. */
static bool read_labels(const struct profd_host *host, const uint8_t *data, size_t len,
                        enum raw_labels shape, struct profd_labels *l, char *why, size_t whylen)
{
    enum label_pass first = shape == RAW_LABEL_PAIRS ? PASS_UNDOTTED : PASS_AS_SENT;
    enum label_pass last = shape == RAW_LABEL_PAIRS ? PASS_DOTTED : PASS_AS_SENT;
    for (enum label_pass pass = first; pass <= last; pass++) {
        struct pb_reader r, sr;
        struct pb_field f = {0}, g = {0};
        const char *err;
        pb_reader_init(&r, data, data, len);
        while (pb_next(&r, &f, &err) > 0) {
            if (f.number != 1 || f.wire != PB_LEN)
                continue;
            if (shape == RAW_LABEL_PAIRS) {
                if (!read_label(host, f.data, f.len, pass, l, why, whylen))
                    return false;
                continue;
            }
            pb_reader_init(&sr, f.data, f.data, f.len);
            while (pb_next(&sr, &g, &err) > 0)
                if (g.number == 1 && g.wire == PB_LEN &&
                    !read_label(host, g.data, g.len, pass, l, why, whylen))
                    return false;
        }
    }
    return true;
}

/* One RawSample's raw_profile as a record of b; false with why set. */
static bool read_sample(const struct profd_host *host, const uint8_t *data, size_t len,
                        const struct profd_labels *labels, size_t max_decoded,
                        struct profd_batch *b, char *why, size_t whylen)
{
    struct pb_reader r;
    struct pb_field f = {0};
    const char *err;
    pb_reader_init(&r, data, data, len);
    while (pb_next(&r, &f, &err) > 0) {
        if (f.number != 1 || f.wire != PB_LEN)
            continue;
        struct profd_record *rec =
            host->record_add_pprof(b, f.data, f.len, max_decoded, why, whylen);
        if (!rec)
            return false;
        host->labels_copy(&rec->labels, labels);
    }
    return true;
}

bool raw_series_read(const struct profd_host *host, const uint8_t *data, size_t len,
                     enum raw_labels shape, bool require_name, size_t index, size_t max_decoded,
                     struct profd_batch *b, char *why, size_t whylen)
{
    struct profd_labels labels = {0};
    char what[200] = "";
    bool ok = read_labels(host, data, len, shape, &labels, what, sizeof(what));
    if (ok && require_name && !host->labels_get(&labels, "__name__")) {
        snprintf(what, sizeof(what), "missing __name__ label");
        ok = false;
    }
    struct pb_reader r;
    struct pb_field f = {0};
    const char *err;
    size_t sample = 0;
    pb_reader_init(&r, data, data, len);
    while (ok && pb_next(&r, &f, &err) > 0) {
        if (f.number != 2 || f.wire != PB_LEN)
            continue;
        char perr[180];
        if (!read_sample(host, f.data, f.len, &labels, max_decoded, b, perr, sizeof(perr))) {
            snprintf(what, sizeof(what), "sample %zu: raw_profile: %.150s", sample, perr);
            ok = false;
        }
        sample++;
    }
    host->labels_clear(&labels);
    if (!ok)
        snprintf(why, whylen, "series %zu: %s", index, what);
    return ok;
}

bool raw_series_write(const struct profd_host *host, struct profd_record *r,
                      const struct profd_labels *labels, enum raw_labels shape, bool strict_ids,
                      unsigned field, struct pb_buf *out, char *why, size_t whylen)
{
    if (!labels)
        labels = &r->labels;
    const uint8_t *pprof;
    uint8_t *owned;
    size_t pprof_len;
    if (host->record_pprof_view(r, true, strict_ids, &pprof, &pprof_len, &owned, why, whylen) < 0)
        return false;
    raw_series_write_pprof(labels, pprof, pprof_len, shape, field, out);
    free(owned);
    return true;
}

void raw_series_write_pprof(const struct profd_labels *labels, const uint8_t *pprof,
                            size_t pprof_len, enum raw_labels shape, unsigned field,
                            struct pb_buf *out)
{
    struct pb_buf set = {0}, label = {0}, sample = {0}, series = {0};
    for (size_t i = 0; i < labels->n; i++) {
        label.len = 0;
        pb_buf_bytes(&label, 1, labels->items[i].name, strlen(labels->items[i].name));
        pb_buf_bytes(&label, 2, labels->items[i].value, strlen(labels->items[i].value));
        pb_buf_bytes(shape == RAW_LABEL_SET ? &set : &series, 1, label.p, label.len);
    }
    if (shape == RAW_LABEL_SET)
        pb_buf_bytes(&series, 1, set.p, set.len);
    pb_buf_bytes(&sample, 1, pprof, pprof_len);
    pb_buf_bytes(&series, 2, sample.p, sample.len);
    pb_buf_bytes(out, field, series.p, series.len);
    free(set.p);
    free(label.p);
    free(sample.p);
    free(series.p);
}
