// SPDX-License-Identifier: Apache-2.0
#include "jfr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../lib/grow.h"
#include "../../lib/key_map.h"
#include "../../lib/pb_reader.h"
#include "jfr_reader.h"
#include "multipart.h"

/* What each kind of sample becomes, as Pyroscope's JFR conversion has it. */
static const struct {
    const char *family;
    const char *types[2][2];   /* type, unit */
    int ntypes;
    const char *period[2];
} kinds[JFR_KINDS] = {
    [JFR_CPU] = {"process_cpu", {{"cpu", "nanoseconds"}}, 1, {"cpu", "nanoseconds"}},
    [JFR_WALL] = {"wall", {{"wall", "nanoseconds"}}, 1, {"wall", "nanoseconds"}},
    [JFR_ALLOC_IN_TLAB] = {"memory",
                           {{"alloc_in_new_tlab_objects", "count"},
                            {"alloc_in_new_tlab_bytes", "bytes"}},
                           2, {"space", "bytes"}},
    [JFR_ALLOC_OUTSIDE] = {"memory",
                           {{"alloc_outside_tlab_objects", "count"},
                            {"alloc_outside_tlab_bytes", "bytes"}},
                           2, {"space", "bytes"}},
    [JFR_MONITOR] = {"mutex", {{"contentions", "count"}, {"delay", "nanoseconds"}}, 2,
                     {"mutex", "count"}},
    [JFR_PARK] = {"block", {{"contentions", "count"}, {"delay", "nanoseconds"}}, 2,
                  {"block", "count"}},
    [JFR_LIVE] = {"memory", {{"live", "count"}}, 1, {"objects", "count"}},
    [JFR_ALLOC_SAMPLE] = {"memory",
                          {{"alloc_sample_objects", "count"}, {"alloc_sample_bytes", "bytes"}},
                          2, {"space", "bytes"}},
    [JFR_MALLOC] = {"memory", {{"malloc_objects", "count"}, {"malloc_bytes", "bytes"}}, 2,
                    {"", ""}},
};

/* pyroscope-java's LabelsSnapshot: contexts (id -> label pairs of string
 * ids) and strings (id -> text). */
struct snapshot {
    struct key_map contexts, strings;
    uint32_t (*runs)[2];   /* a context's first pair and count */
    size_t nruns, runs_cap;
    int64_t (*pairs)[2];   /* key and value string ids */
    size_t npairs, pairs_cap;
    struct pb_field *texts;
    size_t ntexts, texts_cap;
};

/* One kind's profile as it is built. */
struct built {
    struct profd_profile *p;
    struct key_map functions;   /* name's string index -> function ref */
    struct key_map locations;   /* function ref << 32 | line -> location ref */
};

struct builder {
    const struct profd_host *host;
    struct built kinds[JFR_KINDS];
    int64_t cpu_period;
    const struct snapshot *labels;
    char *name;   /* class.method, made here */
    size_t name_cap;
};

/* Fields of a map entry message: key (1, varint) and value (2). */
static bool map_entry(const uint8_t *data, size_t len, uint64_t *key, struct pb_field *value)
{
    struct pb_reader r;
    struct pb_field f;
    const char *err;
    int rc;
    *key = 0;
    *value = (struct pb_field){0};
    pb_reader_init(&r, data, data, len);
    while ((rc = pb_next(&r, &f, &err)) > 0) {
        if (f.number == 1 && f.wire == PB_VARINT)
            *key = f.value;
        else if (f.number == 2)
            *value = f;
    }
    return rc == 0;
}

static bool read_context(struct snapshot *s, uint64_t id, const struct pb_field *ctx)
{
    struct pb_reader r;
    struct pb_field f, v;
    const char *err;
    uint64_t key;
    int rc;
    uint32_t first = (uint32_t)s->npairs;
    static const uint8_t none[1];   /* a context without its message: no labels */
    if (ctx->wire == PB_LEN)
        pb_reader_init(&r, ctx->data, ctx->data, ctx->len);
    else
        pb_reader_init(&r, none, none, 0);
    while ((rc = pb_next(&r, &f, &err)) > 0) {
        if (f.number != 1 || f.wire != PB_LEN)
            continue;
        if (!map_entry(f.data, f.len, &key, &v) || v.wire != PB_VARINT)
            return false;
        s->pairs = grow_array(s->pairs, &s->pairs_cap, s->npairs + 1, sizeof(*s->pairs));
        s->pairs[s->npairs][0] = (int64_t)key;
        s->pairs[s->npairs++][1] = (int64_t)v.value;
    }
    s->runs = grow_array(s->runs, &s->runs_cap, s->nruns + 1, sizeof(*s->runs));
    s->runs[s->nruns][0] = first;
    s->runs[s->nruns][1] = (uint32_t)(s->npairs - first);
    key_map_put(&s->contexts, id, (uint32_t)s->nruns++);
    return rc == 0;
}

static bool read_snapshot(const uint8_t *data, size_t len, struct snapshot *s)
{
    struct pb_reader r;
    struct pb_field f, v;
    const char *err;
    uint64_t key;
    int rc;
    pb_reader_init(&r, data, data, len);
    while ((rc = pb_next(&r, &f, &err)) > 0) {
        if ((f.number != 1 && f.number != 2) || f.wire != PB_LEN)
            continue;
        if (!map_entry(f.data, f.len, &key, &v))
            return false;
        if (f.number == 1 && !read_context(s, key, &v))
            return false;
        if (f.number == 2 && v.wire == PB_LEN) {
            s->texts = grow_array(s->texts, &s->texts_cap, s->ntexts + 1, sizeof(*s->texts));
            s->texts[s->ntexts] = v;
            key_map_put(&s->strings, key, (uint32_t)s->ntexts++);
        }
    }
    return rc == 0;
}

static void snapshot_free(struct snapshot *s)
{
    key_map_free(&s->contexts);
    key_map_free(&s->strings);
    free(s->runs);
    free(s->pairs);
    free(s->texts);
}

static struct built *kind_profile(struct builder *b, enum jfr_kind k)
{
    struct built *kb = &b->kinds[k];
    if (kb->p)
        return kb;
    const struct profd_host *host = b->host;
    struct profd_profile *p = kb->p = host->profile_new(1 << 16);
    p->nsample_types = (uint32_t)kinds[k].ntypes;
    p->sample_types = host->profile_alloc(p, 2 * sizeof(*p->sample_types));
    for (int i = 0; i < kinds[k].ntypes; i++)
        p->sample_types[i] = (struct profd_value_type){
            host->profile_intern(p, kinds[k].types[i][0], strlen(kinds[k].types[i][0])),
            host->profile_intern(p, kinds[k].types[i][1], strlen(kinds[k].types[i][1]))};
    p->period_type = (struct profd_value_type){
        host->profile_intern(p, kinds[k].period[0], strlen(kinds[k].period[0])),
        host->profile_intern(p, kinds[k].period[1], strlen(kinds[k].period[1]))};
    p->period = k == JFR_CPU || k == JFR_WALL ? b->cpu_period : 1;
    return kb;
}

/* The location of frame f in kb's profile: one function per name, one
 * location per function and line. */
static uint32_t location_of(struct builder *b, struct built *kb, const struct jfr_frame *f)
{
    const struct profd_host *host = b->host;
    struct profd_profile *p = kb->p;
    size_t n = (size_t)f->class_len + 1 + f->method_len;
    b->name = grow_array(b->name, &b->name_cap, n, 1);
    memcpy(b->name, f->class_name, f->class_len);
    b->name[f->class_len] = '.';
    memcpy(b->name + f->class_len + 1, f->method, f->method_len);
    uint32_t name = host->profile_intern(p, b->name, n), fn, loc;
    if (!key_map_get(&kb->functions, name, &fn)) {
        *host->profile_add_function(p) = (struct profd_function){.name = name,
                                                                 .system_name = name};
        fn = p->nfunctions;
        key_map_put(&kb->functions, name, fn);
    }
    uint64_t key = (uint64_t)fn << 32 | (uint32_t)f->line;
    if (key_map_get(&kb->locations, key, &loc))
        return loc;
    struct profd_line *line = host->profile_alloc(p, sizeof(*line));
    *line = (struct profd_line){.function = fn, .line = f->line};
    *host->profile_add_location(p) = (struct profd_location){.lines = line, .nlines = 1};
    key_map_put(&kb->locations, key, p->nlocations);
    return p->nlocations;
}

/* The labels of context id into sample s of p. */
static void context_labels(struct builder *b, struct profd_profile *p, struct profd_sample *s,
                           int64_t id)
{
    const struct snapshot *l = b->labels;
    uint32_t run, k, v;
    if (!l || !id || !key_map_get(&l->contexts, (uint64_t)id, &run))
        return;
    uint32_t first = l->runs[run][0], n = l->runs[run][1];
    s->labels = b->host->profile_alloc(p, (n ? n : 1) * sizeof(*s->labels));
    for (uint32_t i = 0; i < n; i++) {
        if (!key_map_get(&l->strings, (uint64_t)l->pairs[first + i][0], &k) ||
            !key_map_get(&l->strings, (uint64_t)l->pairs[first + i][1], &v))
            continue;
        s->labels[s->nlabels++] = (struct profd_sample_label){
            .key = b->host->profile_intern(p, (const char *)l->texts[k].data, l->texts[k].len),
            .str = b->host->profile_intern(p, (const char *)l->texts[v].data, l->texts[v].len)};
    }
}

static bool add_sample(void *arg, const struct jfr_sample *js)
{
    struct builder *b = arg;
    struct built *kb = kind_profile(b, js->kind);
    struct profd_profile *p = kb->p;
    uint32_t *locs = b->host->profile_alloc(p, (js->nframes ? js->nframes : 1) * sizeof(*locs));
    for (uint32_t i = 0; i < js->nframes; i++)
        locs[i] = location_of(b, kb, &js->frames[i]);
    int64_t *values = b->host->profile_alloc(p, 2 * sizeof(*values));
    values[1] = js->value;
    if (js->kind == JFR_WALL) {   /* value samples of a period each */
        if (__builtin_mul_overflow(js->value, b->cpu_period, &values[0]))
            values[0] = INT64_MAX;
    } else {
        values[0] = js->kind == JFR_CPU ? b->cpu_period : 1;
    }
    struct profd_sample *s = b->host->profile_add_sample(p);
    *s = (struct profd_sample){.locations = locs, .values = values, .nlocations = js->nframes};
    context_labels(b, p, s, js->context);
    return true;
}

int jfr_records(const struct profd_host *host, const uint8_t *jfr, size_t len,
                const uint8_t *labels, size_t labels_len, int64_t cpu_period_nanos,
                struct profd_batch *b, char *why, size_t whylen)
{
    struct snapshot snap = {0};
    struct builder bl = {.host = host, .cpu_period = cpu_period_nanos,
                         .labels = labels ? &snap : NULL};
    struct jfr_span span;
    int added = 0;
    if (labels && !read_snapshot(labels, labels_len, &snap)) {
        snprintf(why, whylen, "labels: not a LabelsSnapshot");
        added = -1;
    } else if (jfr_read(jfr, len, add_sample, &bl, &span, why, whylen) < 0) {
        added = -1;
    }
    for (int k = 0; k < JFR_KINDS; k++) {
        struct built *kb = &bl.kinds[k];
        if (kb->p && added >= 0) {
            kb->p->time_nanos = span.start_nanos;
            kb->p->duration_nanos = span.duration_nanos;
            struct profd_record *r = host->record_add_profile(b, kb->p);
            host->record_set_label(r, "__name__", kinds[k].family);
            added++;
        } else if (kb->p) {
            host->profile_free(kb->p);
        }
        key_map_free(&kb->functions);
        key_map_free(&kb->locations);
    }
    free(bl.name);
    snapshot_free(&snap);
    return added;
}

int jfr_ingest(const struct profd_host *host, const char *content_type, const uint8_t *body,
               size_t len, size_t max_decoded, int64_t cpu_period_nanos, struct profd_batch *b,
               char *why, size_t whylen)
{
    struct form_field recording = {.data = body, .len = len}, labels = {0};
    if (!strncasecmp(content_type, "multipart/form-data", 19)) {
        int rc = multipart_field(content_type, body, len, "jfr", &recording, why, whylen);
        if (rc == 0)
            snprintf(why, whylen, "the form has no jfr field");
        if (rc <= 0 || multipart_field(content_type, body, len, "labels", &labels, why,
                                       whylen) < 0)
            return -1;
    }
    uint8_t *inflated = NULL;
    size_t inflated_len;
    bool gzipped = recording.len >= 2 && recording.data[0] == 0x1f && recording.data[1] == 0x8b;
    if (gzipped && host->decompress("gzip", recording.data, recording.len, max_decoded,
                                    &inflated, &inflated_len, why, whylen) != 0)
        return -1;
    int added = jfr_records(host, gzipped ? inflated : recording.data,
                            gzipped ? inflated_len : recording.len, labels.data, labels.len,
                            cpu_period_nanos, b, why, whylen);
    free(inflated);
    return added;
}
