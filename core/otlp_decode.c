// SPDX-License-Identifier: Apache-2.0
/*
 * OTLP ExportProfilesServiceRequest -> records. Two sweeps over the request:
 * the dictionary first (it may follow the resources on the wire), then each
 * resource's scopes, whose profiles are read into views, grouped (see otlp.h)
 * and built into profile models. Dictionary entries are copied into a model
 * the first time one of its samples needs them, found again through
 * generation-stamped maps, so a big shared dictionary costs nothing per
 * record beyond the entries the record uses.
 */
#include "otlp.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "arena.h"
#include "block_cache.h"
#include "labels.h"
#include "otlp_attr.h"
#include "otlp_dict.h"
#include "pprof.h"
#include "profile.h"
#include "record.h"
#include "saturating.h"

struct sample_view {
    uint32_t stack, link;
    struct otlp_list attrs;
    int64_t value;
};

struct profile_view {
    size_t offset;                  /* of the Profile message, for errors */
    uint32_t type, unit;            /* sample type strings */
    uint64_t time, duration;
    uint32_t period_type, period_unit;
    int64_t period;
    struct otlp_list attrs;
    struct sample_view *samples;
    size_t nsamples, samples_cap;
    const uint8_t *payload, *payload_format;
    size_t payload_len, payload_format_len;
};

/* Maps dictionary indices to a model's refs, valid while stamp == gen. */
struct refmap {
    uint32_t *ref, *stamp;
    size_t ref_cap, stamp_cap;
};

struct decoder {
    const uint8_t *buf;
    struct otlp_dict dict;
    struct profd_batch *batch;
    struct profd_otlp_result *res;
    char *err;
    size_t errlen;
    size_t max_decoded;   /* of a pprof original_payload */
    struct refmap strings, mappings, locations, functions;
    uint32_t gen;
    struct profile_view *views;
    size_t nviews, views_cap;
    const char *default_sample_type;  /* of the current scope, or NULL */
    size_t default_sample_type_len;
};

#define NO_OFFSET ((size_t)-1)

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen, const char *fmt,
                                                      ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static const char *version_hint =
    " (OTLP profiles v1.9.0 and older numbered Sample and Profile fields differently; "
    "send v1.10.0 or newer)";

/* --- Reading profiles into views ------------------------------------------------------ */

static int read_value_type(const uint8_t *data, size_t len, uint32_t *type, uint32_t *unit)
{
    struct pb_reader r;
    pb_reader_init(&r, data, data, len);
    struct pb_field f = {0};
    const char *why;
    int rc;
    while ((rc = pb_next(&r, &f, &why)) > 0) {
        if ((f.number == 1 || f.number == 2) && f.wire != PB_VARINT)
            return -1;
        if (f.number == 1)
            *type = (uint32_t)(f.value > UINT32_MAX ? UINT32_MAX : f.value);
        else if (f.number == 2)
            *unit = (uint32_t)(f.value > UINT32_MAX ? UINT32_MAX : f.value);
    }
    return rc;
}

/* Sum of a packed (or single) int64 list (held at the int64 limits), or
 * the number of fixed64 values. */
static bool sum_values(const struct pb_field *f, int64_t *sum, bool *seen)
{
    *seen = true;
    if (f->wire == PB_VARINT) {
        *sum = add_saturating(*sum, (int64_t)f->value);
        return true;
    }
    if (f->wire != PB_LEN)
        return false;
    struct pb_reader r;
    pb_reader_init(&r, f->data, f->data, f->len);
    uint64_t v;
    while (r.p < r.end) {
        if (!pb_varint(&r, &v))
            return false;
        *sum = add_saturating(*sum, (int64_t)v);
    }
    return true;
}

static int read_sample(struct decoder *d, const struct pb_field *sf, struct sample_view *s,
                       char *err, size_t errlen)
{
    *s = (struct sample_view){0};
    struct pb_reader r;
    pb_reader_init(&r, d->buf, sf->data, sf->len);
    struct pb_field f = {0};
    const char *why = "";
    bool has_values = false, has_field2 = false;
    int64_t timestamps = 0;
    int rc;
    while ((rc = pb_next(&r, &f, &why)) > 0) {
        switch (f.number) {
        case 1:
        case 3:
            if (f.wire != PB_VARINT)
                return fail(err, errlen, "Sample field %u has wire type %u at byte %zu%s",
                            f.number, f.wire, f.offset, version_hint);
            if (f.number == 1)
                s->stack = (uint32_t)(f.value > UINT32_MAX ? UINT32_MAX : f.value);
            else
                s->link = (uint32_t)(f.value > UINT32_MAX ? UINT32_MAX : f.value);
            break;
        case 2:
            has_field2 = true;
            if (!otlp_pool_append(&d->dict, &f, &s->attrs))
                return fail(err, errlen, "Sample.attribute_indices malformed at byte %zu",
                            f.offset);
            break;
        case 4:
            if (!sum_values(&f, &s->value, &has_values))
                return fail(err, errlen, "Sample.values malformed at byte %zu", f.offset);
            break;
        case 5:   /* packed, or one fixed64 per field */
            if (f.wire == PB_I64) {
                timestamps++;
                break;
            }
            if (f.wire != PB_LEN || f.len % 8)
                return fail(err, errlen, "Sample.timestamps_unix_nano malformed at byte %zu",
                            f.offset);
            timestamps += (int64_t)(f.len / 8);
            break;
        }
    }
    if (rc < 0)
        return fail(err, errlen, "Sample: %s at byte %zu", why, f.offset);
    if (!has_values && timestamps == 0)
        return fail(err, errlen, "Sample at byte %zu has neither values (field 4) nor "
                    "timestamps (field 5)%s", sf->offset,
                    has_field2 ? version_hint : "");
    if (!has_values)
        s->value = timestamps;   /* each timestamp is one event of value 1 */
    return 0;
}

/* Reads one Profile into a view; -1 with err set when this profile alone is
 * refused. Its sample attribute lists go to the dictionary's pool. */
static int read_profile(struct decoder *d, const struct pb_field *pf, struct profile_view *v,
                        char *err, size_t errlen)
{
    *v = (struct profile_view){.offset = pf->offset};
    struct pb_reader r;
    pb_reader_init(&r, d->buf, pf->data, pf->len);
    struct pb_field f = {0};
    const char *why = "";
    int rc, sample_types = 0;
    while ((rc = pb_next(&r, &f, &why)) > 0) {
        switch (f.number) {
        case 1:
            if (f.wire != PB_LEN || read_value_type(f.data, f.len, &v->type, &v->unit) < 0)
                return fail(err, errlen, "Profile.sample_type malformed at byte %zu", f.offset);
            if (++sample_types > 1)
                return fail(err, errlen, "Profile at byte %zu repeats sample_type: "
                            "OTLP profiles v1.7.0 or older (one sample type per profile since "
                            "v1.8.0); send v1.10.0 or newer", pf->offset);
            break;
        case 2:
            if (f.wire != PB_LEN)
                return fail(err, errlen, "Profile.samples malformed at byte %zu", f.offset);
            profd_block_grow(&v->samples, &v->samples_cap, v->nsamples + 1,
                             sizeof(*v->samples));
            if (read_sample(d, &f, &v->samples[v->nsamples], err, errlen) < 0)
                return -1;
            v->nsamples++;
            break;
        case 3:
            if (f.wire != PB_I64)
                return fail(err, errlen, "Profile.time_unix_nano (field 3) has wire type %u, "
                            "not fixed64, at byte %zu%s", f.wire, f.offset, version_hint);
            v->time = f.value;
            break;
        case 4:
        case 6:
        case 8:
            if (f.wire != PB_VARINT)
                return fail(err, errlen, "Profile field %u has wire type %u at byte %zu%s",
                            f.number, f.wire, f.offset, version_hint);
            if (f.number == 4)
                v->duration = f.value;
            else if (f.number == 6)
                v->period = (int64_t)f.value;
            break;
        case 5:
            if (f.wire != PB_LEN ||
                read_value_type(f.data, f.len, &v->period_type, &v->period_unit) < 0)
                return fail(err, errlen, "Profile.period_type malformed at byte %zu", f.offset);
            break;
        case 9:
        case 10:
            if (f.wire != PB_LEN)
                return fail(err, errlen, "Profile field %u has wire type %u at byte %zu%s",
                            f.number, f.wire, f.offset, version_hint);
            if (f.number == 9) {
                v->payload_format = f.data;
                v->payload_format_len = f.len;
            } else {
                v->payload = f.data;
                v->payload_len = f.len;
            }
            break;
        case 11:
            if (!otlp_pool_append(&d->dict, &f, &v->attrs))
                return fail(err, errlen, "Profile.attribute_indices malformed at byte %zu",
                            f.offset);
            break;
        }
    }
    if (rc < 0)
        return fail(err, errlen, "Profile: %s at byte %zu", why, f.offset);
    return 0;
}

/* Checks the indices a view holds against the dictionary. */
static int check_view(const struct decoder *d, const struct profile_view *v, char *err,
                      size_t errlen)
{
    const struct otlp_dict *dict = &d->dict;
    if (v->type >= dict->nstrings || v->unit >= dict->nstrings ||
        v->period_type >= dict->nstrings || v->period_unit >= dict->nstrings)
        return fail(err, errlen, "Profile at byte %zu: a sample or period type string index "
                    "is out of range (string_table has %zu entries)", v->offset, dict->nstrings);
    for (uint32_t i = 0; i < v->attrs.count; i++)
        if (dict->pool[v->attrs.start + i] >= dict->nattrs)
            return fail(err, errlen, "Profile at byte %zu: attribute index %u out of range "
                        "(attribute_table has %zu entries)", v->offset,
                        dict->pool[v->attrs.start + i], dict->nattrs);
    for (size_t i = 0; i < v->nsamples; i++) {
        const struct sample_view *s = &v->samples[i];
        if (s->stack >= dict->nstacks)
            return fail(err, errlen, "Profile at byte %zu: sample %zu: stack_index %u out of "
                        "range (stack_table has %zu entries)", v->offset, i, s->stack,
                        dict->nstacks);
        if (s->link >= dict->nlinks && s->link != 0)
            return fail(err, errlen, "Profile at byte %zu: sample %zu: link_index %u out of "
                        "range (link_table has %zu entries)", v->offset, i, s->link,
                        dict->nlinks);
        for (uint32_t k = 0; k < s->attrs.count; k++)
            if (dict->pool[s->attrs.start + k] >= dict->nattrs)
                return fail(err, errlen, "Profile at byte %zu: sample %zu: attribute index %u "
                            "out of range (attribute_table has %zu entries)", v->offset, i,
                            dict->pool[s->attrs.start + k], dict->nattrs);
    }
    return 0;
}

/* --- Grouping ------------------------------------------------------------------------- */

static bool same_list(const struct otlp_dict *d, struct otlp_list a, struct otlp_list b)
{
    return a.count == b.count &&
           (a.count == 0 ||
            memcmp(d->pool + a.start, d->pool + b.start, a.count * sizeof(*d->pool)) == 0);
}

static bool same_bytes(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

/* True when b is another column of the pprof profile a is a column of. */
static bool same_pprof(const struct otlp_dict *d, const struct profile_view *a,
                       const struct profile_view *b)
{
    if (a->time != b->time || a->duration != b->duration || a->period != b->period ||
        a->period_type != b->period_type || a->period_unit != b->period_unit ||
        a->nsamples != b->nsamples || !same_list(d, a->attrs, b->attrs) ||
        !same_bytes(a->payload, a->payload_len, b->payload, b->payload_len))
        return false;
    for (size_t i = 0; i < a->nsamples; i++) {
        const struct sample_view *x = &a->samples[i], *y = &b->samples[i];
        if (x->stack != y->stack || x->link != y->link || !same_list(d, x->attrs, y->attrs))
            return false;
    }
    return true;
}

/* --- Building the model ----------------------------------------------------------------- */

static void refmap_init(struct refmap *m, size_t n)
{
    *m = (struct refmap){0};
    profd_block_grow(&m->ref, &m->ref_cap, n ? n : 1, sizeof(*m->ref));
    profd_block_grow(&m->stamp, &m->stamp_cap, n ? n : 1, sizeof(*m->stamp));
    memset(m->stamp, 0, m->stamp_cap * sizeof(*m->stamp));   /* no index mapped yet */
}

static void refmap_free(struct refmap *m)
{
    profd_block_release(m->ref, m->ref_cap, sizeof(*m->ref));
    profd_block_release(m->stamp, m->stamp_cap, sizeof(*m->stamp));
}

static uint32_t str_ref(struct decoder *d, struct profd_profile *p, uint32_t i)
{
    if (i == 0)
        return 0;
    if (d->strings.stamp[i] == d->gen)
        return d->strings.ref[i];
    const struct profd_str *s = &d->dict.strings[i];
    d->strings.stamp[i] = d->gen;
    return d->strings.ref[i] = profd_profile_intern(p, s->ptr, s->len);
}

static uint32_t function_ref(struct decoder *d, struct profd_profile *p, uint32_t i)
{
    if (i == 0)
        return 0;
    if (d->functions.stamp[i] == d->gen)
        return d->functions.ref[i];
    const struct otlp_function *src = &d->dict.functions[i];
    struct profd_function *fn = profd_profile_add_function(p);
    uint32_t ref = p->nfunctions;
    fn->name = str_ref(d, p, src->name);
    fn->system_name = str_ref(d, p, src->system_name);
    fn->filename = str_ref(d, p, src->filename);
    fn->start_line = src->start_line;
    d->functions.stamp[i] = d->gen;
    return d->functions.ref[i] = ref;
}

static uint32_t mapping_ref(struct decoder *d, struct profd_profile *p, uint32_t i)
{
    if (i == 0)
        return 0;
    if (d->mappings.stamp[i] == d->gen)
        return d->mappings.ref[i];
    const struct otlp_mapping *src = &d->dict.mappings[i];
    struct profd_mapping *m = profd_profile_add_mapping(p);
    uint32_t ref = p->nmappings;
    m->memory_start = src->memory_start;
    m->memory_limit = src->memory_limit;
    m->file_offset = src->file_offset;
    m->filename = str_ref(d, p, src->filename);
    otlp_attrs_to_mapping(&d->dict, src->attrs, p, m);
    d->mappings.stamp[i] = d->gen;
    return d->mappings.ref[i] = ref;
}

static uint32_t location_ref(struct decoder *d, struct profd_profile *p, uint32_t i)
{
    if (d->locations.stamp[i] == d->gen)
        return d->locations.ref[i];
    const struct otlp_location *src = &d->dict.locations[i];
    uint32_t mapping = mapping_ref(d, p, src->mapping);
    struct profd_line *lines = NULL;
    if (src->nlines) {
        lines = profd_arena_alloc(p->arena, src->nlines * sizeof(*lines));
        for (uint32_t k = 0; k < src->nlines; k++) {
            const struct otlp_line *l = &d->dict.lines[src->lines_start + k];
            lines[k] = (struct profd_line){function_ref(d, p, l->function), l->line, l->column};
        }
    }
    struct profd_location *loc = profd_profile_add_location(p);
    loc->address = src->address;
    loc->mapping = mapping;
    loc->lines = lines;
    loc->nlines = src->nlines;
    loc->is_folded = otlp_attrs_flag(&d->dict, src->attrs, OTLP_ATTR_IS_FOLDED);
    d->locations.stamp[i] = d->gen;
    return d->locations.ref[i] = p->nlocations;
}

static void build_sample(struct decoder *d, struct profd_profile *p, struct profd_sample *out,
                         const struct sample_view *s)
{
    const struct otlp_stack *stack = &d->dict.stacks[s->stack];
    out->nlocations = stack->locations.count;
    out->locations = profd_arena_alloc(p->arena, (out->nlocations + 1) * sizeof(uint32_t));
    for (uint32_t k = 0; k < out->nlocations; k++)
        out->locations[k] = location_ref(d, p, d->dict.pool[stack->locations.start + k]);
    uint32_t nlabels = s->attrs.count + (s->link ? 2 : 0);
    out->labels = profd_arena_alloc(p->arena, (nlabels + 1) * sizeof(*out->labels));
    out->nlabels = 0;
    for (uint32_t k = 0; k < s->attrs.count; k++) {
        const struct otlp_attr *a = &d->dict.attrs[d->dict.pool[s->attrs.start + k]];
        struct profd_sample_label *l = &out->labels[out->nlabels];
        if (otlp_attr_to_label(a, p, l, str_ref(d, p, a->key), str_ref(d, p, a->unit)))
            out->nlabels++;
    }
    if (s->link)
        out->nlabels += otlp_link_to_labels(&d->dict.links[s->link], p,
                                            &out->labels[out->nlabels]);
}

/* Builds the model of views[first..first+n), one sample type per view. */
static struct profd_profile *build_profile(struct decoder *d, const struct profile_view *v,
                                           size_t n)
{
    struct profd_profile *p = profd_profile_new(4096 + v->nsamples * 64);
    d->gen++;
    p->nsample_types = (uint32_t)n;
    p->sample_types = profd_arena_alloc(p->arena, n * sizeof(*p->sample_types));
    for (size_t k = 0; k < n; k++)
        p->sample_types[k] = (struct profd_value_type){str_ref(d, p, v[k].type),
                                                      str_ref(d, p, v[k].unit)};
    p->nsamples = p->samples_cap = v->nsamples;
    p->samples = profd_arena_alloc(p->arena, (v->nsamples + 1) * sizeof(*p->samples));
    for (size_t i = 0; i < v->nsamples; i++) {
        struct profd_sample *s = &p->samples[i];
        build_sample(d, p, s, &v->samples[i]);
        s->values = profd_arena_alloc(p->arena, n * sizeof(*s->values));
        for (size_t k = 0; k < n; k++)
            s->values[k] = v[k].samples[i].value;
    }
    p->time_nanos = (int64_t)v->time;
    p->duration_nanos = (int64_t)v->duration;
    p->period = v->period;
    p->period_type = (struct profd_value_type){str_ref(d, p, v->period_type),
                                               str_ref(d, p, v->period_unit)};
    otlp_attrs_to_profile(&d->dict, v->attrs, p);
    if (d->default_sample_type)
        p->default_sample_type = profd_profile_intern(p, d->default_sample_type,
                                                      d->default_sample_type_len);
    return p;
}

/* --- Records ---------------------------------------------------------------------------- */

static bool is_pprof_payload(const struct profile_view *v)
{
    return v->payload_len && same_bytes(v->payload_format, v->payload_format_len,
                                        (const uint8_t *)"pprof", 5);
}

/* Adds the record of views v[0..n): the original pprof when it came along,
 * else the translated model. -1 with err set when it is refused. */
static int add_record(struct decoder *d, const struct profd_labels *resource,
                      const struct profile_view *v, size_t n, char *err, size_t errlen)
{
    struct profd_record *r;
    if (is_pprof_payload(v)) {
        char why[256];
        r = profd_record_add_pprof(d->batch, v->payload, v->payload_len, d->max_decoded, why,
                                   sizeof(why));
        if (!r)
            return fail(err, errlen, "Profile at byte %zu: original_payload: %s", v->offset, why);
    } else {
        r = profd_record_add_profile(d->batch, build_profile(d, v, n));
    }
    profd_labels_copy(&r->labels, resource);
    otlp_attrs_to_series(&d->dict, v->attrs, &r->labels);
    if (!profd_labels_get(&r->labels, "__name__"))
        otlp_set_profile_name(r);
    if (!profd_labels_get(&r->labels, "service_name"))
        profd_labels_set(&r->labels, "service_name", "unknown_service");
    r->time_nanos = (int64_t)v->time;
    r->duration_nanos = (int64_t)v->duration;
    return 0;
}

static void refuse(struct decoder *d, const char *why)
{
    if (d->res->rejected++ == 0)
        snprintf(d->res->message, sizeof(d->res->message), "%s", why);
}

/* Translates the profiles of one ScopeProfiles. */
static int scope_profiles(struct decoder *d, const struct pb_field *sf,
                          const struct profd_labels *resource)
{
    struct pb_reader r;
    pb_reader_init(&r, d->buf, sf->data, sf->len);
    struct pb_field f = {0};
    const char *why = "";
    int rc;
    size_t pool_mark = d->dict.npool;
    char msg[256];
    d->nviews = 0;
    d->default_sample_type = NULL;
    while ((rc = pb_next(&r, &f, &why)) > 0) {
        if (f.number == 1 && f.wire == PB_LEN) {
            d->default_sample_type = otlp_scope_default_sample_type(
                &d->dict, f.data, f.len, &d->default_sample_type_len);
        } else if (f.number == 2 && f.wire == PB_LEN) {
            profd_block_grow(&d->views, &d->views_cap, d->nviews + 1, sizeof(*d->views));
            struct profile_view *v = &d->views[d->nviews];
            if (read_profile(d, &f, v, msg, sizeof(msg)) < 0 ||
                check_view(d, v, msg, sizeof(msg)) < 0) {
                profd_block_release(v->samples, v->samples_cap, sizeof(*v->samples));
                refuse(d, msg);
                continue;
            }
            d->nviews++;
        }
    }
    for (size_t i = 0; i < d->nviews;) {
        size_t n = 1;
        while (i + n < d->nviews && same_pprof(&d->dict, &d->views[i], &d->views[i + n]))
            n++;
        if (add_record(d, resource, &d->views[i], n, msg, sizeof(msg)) < 0) {
            d->res->rejected += n - 1;   /* refuse() counts the first */
            refuse(d, msg);
        } else {
            d->res->records++;
        }
        i += n;
    }
    for (size_t i = 0; i < d->nviews; i++)
        profd_block_release(d->views[i].samples, d->views[i].samples_cap,
                            sizeof(*d->views[i].samples));
    d->dict.npool = pool_mark;
    if (rc < 0)
        return fail(d->err, d->errlen, "otlp: ScopeProfiles: %s at byte %zu", why, f.offset);
    return 0;
}

static int resource_profiles(struct decoder *d, const struct pb_field *rf)
{
    struct profd_labels resource = {0};
    struct pb_reader r;
    pb_reader_init(&r, d->buf, rf->data, rf->len);
    struct pb_field f = {0};
    const char *why = "";
    int rc;
    while ((rc = pb_next(&r, &f, &why)) > 0)
        if (f.number == 1 && f.wire == PB_LEN)
            otlp_resource_to_labels(&d->dict, f.data, f.len, &resource);
    if (rc < 0) {
        profd_labels_clear(&resource);
        return fail(d->err, d->errlen, "otlp: ResourceProfiles: %s at byte %zu", why, f.offset);
    }
    pb_reader_init(&r, d->buf, rf->data, rf->len);
    while (pb_next(&r, &f, &why) > 0)
        if (f.number == 2 && f.wire == PB_LEN && scope_profiles(d, &f, &resource) < 0)
            break;
    profd_labels_clear(&resource);
    return d->err[0] ? -1 : 0;
}

int profd_otlp_decode(const uint8_t *data, size_t len, size_t max_decoded, struct profd_batch *b,
                      struct profd_otlp_result *res, char *err, size_t errlen)
{
    *res = (struct profd_otlp_result){0};
    err[0] = '\0';
    struct decoder d = {.buf = data, .batch = b, .res = res, .err = err, .errlen = errlen,
                        .max_decoded = max_decoded};
    size_t first_record = b->nrecords;
    struct pb_reader r;
    pb_reader_init(&r, data, data, len);
    struct pb_field f = {0};
    const char *why = "";
    int rc;
    while ((rc = pb_next(&r, &f, &why)) > 0)
        if (f.number == 2 && (f.wire != PB_LEN ||
                              otlp_dict_add(&d.dict, data, f.data, f.len, err, errlen) < 0))
            goto fail;
    if (rc < 0) {
        fail(err, errlen, "otlp: ExportProfilesServiceRequest: %s at byte %zu", why, f.offset);
        goto fail;
    }
    if (d.dict.nstrings == 0)   /* no dictionary: only empty profiles can be read */
        otlp_dict_add(&d.dict, data, (const uint8_t *)"\x2a\x00", 2, err, errlen);
    if (otlp_dict_check(&d.dict, err, errlen) < 0)
        goto fail;
    refmap_init(&d.strings, d.dict.nstrings);
    refmap_init(&d.mappings, d.dict.nmappings);
    refmap_init(&d.locations, d.dict.nlocations);
    refmap_init(&d.functions, d.dict.nfunctions);
    pb_reader_init(&r, data, data, len);
    while (pb_next(&r, &f, &why) > 0)
        if (f.number == 1 && (f.wire != PB_LEN || resource_profiles(&d, &f) < 0)) {
            if (!err[0])
                fail(err, errlen, "otlp: resource_profiles malformed at byte %zu", f.offset);
            break;
        }
    refmap_free(&d.strings);
    refmap_free(&d.mappings);
    refmap_free(&d.locations);
    refmap_free(&d.functions);
    profd_block_release(d.views, d.views_cap, sizeof(*d.views));
    if (err[0])
        goto fail;
    otlp_dict_free(&d.dict);
    return 0;
fail:
    if (!err[0])
        fail(err, errlen, "otlp: dictionary malformed");
    while (b->nrecords > first_record)
        profd_batch_remove(b, b->nrecords - 1);
    otlp_dict_free(&d.dict);
    return -1;
}
