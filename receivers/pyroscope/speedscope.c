// SPDX-License-Identifier: Apache-2.0
#include "speedscope.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/grow.h"
#include "../../lib/hash.h"
#include "../../lib/key_map.h"

#define SCHEMA "https://www.speedscope.app/file-format-schema.json"

/* What a unit's weights become. */
struct unit_info {
    const char *unit;
    double nanos;      /* nanoseconds a weight of 1 stands for; 0: a count */
    const char *type, *type_unit;
    bool cpu_too;      /* a second value: the count at the CPU period */
};

static const struct unit_info unit_infos[] = {
    {"nanoseconds", 1, "cpu", "nanoseconds", false},
    {"microseconds", 1e3, "cpu", "nanoseconds", false},
    {"milliseconds", 1e6, "cpu", "nanoseconds", false},
    {"seconds", 1e9, "cpu", "nanoseconds", false},
    {"none", 0, "samples", "count", true},
    {"bytes", 0, "inuse_space", "bytes", false},
};

/* One record's profile as it is built. */
struct built {
    struct profd_profile *p;
    const struct unit_info *unit;
    json_t *first;           /* the first speedscope profile of its key */
    uint32_t *frame_loc;     /* by frame index: its location ref, 0 none yet */
    struct key_map stacks;   /* a stack's hash -> its sample's index */
};

struct conversion {
    const struct profd_host *host;
    json_t *frames;   /* shared.frames */
    int64_t cpu_period;
    struct built *built;
    size_t nbuilt, built_cap;
    struct key_map by_key;   /* hash of name, type, unit, startValue -> built index */
    uint32_t *stack;         /* frame indices root first, of the sample at hand */
    size_t stack_len, stack_cap;
    uint32_t *locs;          /* its location refs, leaf first */
    size_t locs_cap;
    char *why;
    size_t whylen;
    char where[128];         /* the profile at hand, for messages */
};

static bool failf(struct conversion *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Sets why to the profile at hand and fmt's message; returns false. */
static bool failf(struct conversion *c, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(c->why, c->whylen, "%s%s", c->where, msg);
    return false;
}

static const char *string_of(json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

static double number_of(json_t *obj, const char *key)
{
    return json_number_value(json_object_get(obj, key));
}

static uint32_t intern(struct built *bt, const struct profd_host *host, const char *s)
{
    return host->profile_intern(bt->p, s, strlen(s));
}

/* A record's profile for the unit u, its types set. */
static void built_begin(struct conversion *c, struct built *bt, const struct unit_info *u,
                        json_t *first, size_t size_hint)
{
    const struct profd_host *host = c->host;
    *bt = (struct built){.p = host->profile_new(size_hint), .unit = u, .first = first};
    struct profd_profile *p = bt->p;
    size_t nframes = json_array_size(c->frames);
    bt->frame_loc = calloc(nframes + 1, sizeof(*bt->frame_loc));
    if (!bt->frame_loc)
        abort();
    p->nsample_types = u->cpu_too ? 2 : 1;
    p->sample_types = host->profile_alloc(p, 2 * sizeof(*p->sample_types));
    p->sample_types[0] = (struct profd_value_type){intern(bt, host, u->type),
                                                   intern(bt, host, u->type_unit)};
    if (u->cpu_too)
        p->sample_types[1] = (struct profd_value_type){intern(bt, host, "cpu"),
                                                       intern(bt, host, "nanoseconds")};
    if (u->nanos > 0 || u->cpu_too) {
        p->period_type = p->sample_types[u->cpu_too];
        p->period = u->cpu_too ? c->cpu_period : 0;
    }
}

/* The location of frame i in bt's profile, made on first use. */
static uint32_t frame_location(struct conversion *c, struct built *bt, uint32_t i)
{
    if (bt->frame_loc[i])
        return bt->frame_loc[i];
    const struct profd_host *host = c->host;
    struct profd_profile *p = bt->p;
    json_t *f = json_array_get(c->frames, i);
    uint32_t name = intern(bt, host, string_of(f, "name"));
    *host->profile_add_function(p) = (struct profd_function){
        .name = name, .system_name = name, .filename = intern(bt, host, string_of(f, "file"))};
    struct profd_line *line = host->profile_alloc(p, sizeof(*line));
    *line = (struct profd_line){.function = p->nfunctions,
                                .line = json_integer_value(json_object_get(f, "line")),
                                .column = json_integer_value(json_object_get(f, "col"))};
    *host->profile_add_location(p) = (struct profd_location){.lines = line, .nlines = 1};
    return bt->frame_loc[i] = p->nlocations;
}

/* The values a weight gives in bt's profile; false when it is negative,
 * not a number, or more than a profile holds. */
static bool weight_values(const struct conversion *c, const struct built *bt, double weight,
                          int64_t v[2])
{
    double scaled = bt->unit->nanos > 0 ? weight * bt->unit->nanos : weight;
    if (!(scaled >= 0 && scaled < 9.2e18))
        return false;
    v[0] = (int64_t)(scaled + 0.5);
    return !bt->unit->cpu_too || !__builtin_mul_overflow(v[0], c->cpu_period, &v[1]);
}

/* Adds the stack at hand (c->stack) with weight to bt's profile, to the
 * sample of the same stack when there is one. */
static bool add_stack(struct conversion *c, struct built *bt, double weight)
{
    const struct profd_host *host = c->host;
    struct profd_profile *p = bt->p;
    int64_t v[2] = {0, 0};
    if (!weight_values(c, bt, weight, v))
        return false;
    if (!v[0] || !c->stack_len)
        return true;   /* nothing to count */
    uint32_t n = (uint32_t)c->stack_len;
    c->locs = grow_array(c->locs, &c->locs_cap, n, sizeof(*c->locs));
    uint32_t *locs = c->locs;
    for (uint32_t k = 0; k < n; k++)   /* speedscope is root first; pprof leaf first */
        locs[n - 1 - k] = frame_location(c, bt, c->stack[k]);
    uint64_t h = hash_bytes(locs, n * sizeof(*locs));
    uint32_t idx;
    if (key_map_get(&bt->stacks, h, &idx)) {
        struct profd_sample *s = &p->samples[idx];
        if (s->nlocations == n && !memcmp(s->locations, locs, n * sizeof(*locs))) {
            for (uint32_t t = 0; t < p->nsample_types; t++)
                if (__builtin_add_overflow(s->values[t], v[t], &s->values[t]))
                    return false;
            return true;
        }
    } else {
        key_map_put(&bt->stacks, h, p->nsamples);
    }
    int64_t *values = host->profile_alloc(p, 2 * sizeof(*values));
    memcpy(values, v, sizeof(v));
    uint32_t *kept = host->profile_alloc(p, n * sizeof(*kept));
    memcpy(kept, locs, n * sizeof(*kept));
    *host->profile_add_sample(p) = (struct profd_sample){.locations = kept, .values = values,
                                                         .nlocations = n};
    return true;
}

/* Frame index i of an event or a sample, checked against the frames. */
static bool frame_index(struct conversion *c, json_t *v, uint32_t *i)
{
    json_int_t x = json_integer_value(v);
    if (!json_is_integer(v) || x < 0 || (size_t)x >= json_array_size(c->frames))
        return false;
    *i = (uint32_t)x;
    return true;
}

static void stack_push(struct conversion *c, uint32_t frame)
{
    c->stack = grow_array(c->stack, &c->stack_cap, c->stack_len + 1, sizeof(*c->stack));
    c->stack[c->stack_len++] = frame;
}

static bool sampled(struct conversion *c, struct built *bt, json_t *prof)
{
    json_t *samples = json_object_get(prof, "samples"), *weights = json_object_get(prof, "weights");
    if (!json_is_array(samples) || !json_is_array(weights) ||
        json_array_size(samples) != json_array_size(weights))
        return failf(c, "samples and weights are not two arrays of the same length");
    for (size_t i = 0; i < json_array_size(samples); i++) {
        json_t *stack = json_array_get(samples, i);
        if (!json_is_array(stack))
            return failf(c, "sample %zu is not an array of frame indices", i);
        c->stack_len = 0;
        for (size_t k = 0; k < json_array_size(stack); k++) {
            uint32_t frame;
            if (!frame_index(c, json_array_get(stack, k), &frame))
                return failf(c, "sample %zu, frame %zu: not an index into the %zu frames", i, k,
                             json_array_size(c->frames));
            stack_push(c, frame);
        }
        json_t *w = json_array_get(weights, i);
        if (!json_is_number(w) || !add_stack(c, bt, json_number_value(w)))
            return failf(c, "sample %zu: weight is not a number a profile holds", i);
    }
    return true;
}

static bool evented(struct conversion *c, struct built *bt, json_t *prof)
{
    json_t *events = json_object_get(prof, "events");
    if (!json_is_array(events))
        return failf(c, "events is not an array");
    double last = number_of(prof, "startValue");
    c->stack_len = 0;
    for (size_t i = 0; i < json_array_size(events); i++) {
        json_t *ev = json_array_get(events, i);
        const char *type = string_of(ev, "type");
        double at = number_of(ev, "at");
        uint32_t frame;
        if (!json_is_number(json_object_get(ev, "at")) || !(at >= last))
            return failf(c, "event %zu: at is not a time at or after the one before", i);
        if (!frame_index(c, json_object_get(ev, "frame"), &frame))
            return failf(c, "event %zu: frame is not an index into the %zu frames", i,
                         json_array_size(c->frames));
        bool open = !strcmp(type, "O");
        if (!open && strcmp(type, "C"))
            return failf(c, "event %zu: type \"%.20s\" is neither O nor C", i, type);
        if (!open && (!c->stack_len || c->stack[c->stack_len - 1] != frame))
            return failf(c, "event %zu closes frame %u, which is not the innermost open", i,
                         frame);
        if (!add_stack(c, bt, at - last))
            return failf(c, "event %zu: a time no profile holds", i);
        if (open)
            stack_push(c, frame);
        else
            c->stack_len--;
        last = at;
    }
    return true;
}

/* Whether two speedscope profiles are one record: the same name, type,
 * unit and startValue. */
static bool same_key(json_t *a, json_t *b)
{
    return !strcmp(string_of(a, "name"), string_of(b, "name")) &&
           !strcmp(string_of(a, "type"), string_of(b, "type")) &&
           !strcmp(string_of(a, "unit"), string_of(b, "unit")) &&
           number_of(a, "startValue") == number_of(b, "startValue");
}

static uint64_t string_hash(json_t *obj, const char *key)
{
    const char *s = string_of(obj, key);
    return hash_bytes(s, strlen(s));
}

static uint64_t key_hash(json_t *prof)
{
    double start = number_of(prof, "startValue");
    uint64_t h = hash_mix(string_hash(prof, "name"), string_hash(prof, "type"));
    return hash_mix(hash_mix(h, string_hash(prof, "unit")), hash_bytes(&start, sizeof(start)));
}

/* The record prof goes into: the one of its key, or a new one. */
static struct built *built_for(struct conversion *c, json_t *prof, size_t size_hint)
{
    uint64_t h = key_hash(prof);
    uint32_t idx;
    if (key_map_get(&c->by_key, h, &idx)) {   /* the map holds the latest of a hash */
        if (same_key(c->built[idx].first, prof))
            return &c->built[idx];
        for (size_t i = 0; i < c->nbuilt; i++)   /* keys whose hashes collide */
            if (same_key(c->built[i].first, prof))
                return &c->built[i];
    }
    const char *unit = string_of(prof, "unit");
    const struct unit_info *u = NULL;
    for (size_t i = 0; i < sizeof(unit_infos) / sizeof(*unit_infos); i++)
        if (!strcmp(unit, unit_infos[i].unit))
            u = &unit_infos[i];
    if (!u) {
        failf(c, "unit \"%.30s\" is none of nanoseconds, microseconds, milliseconds, seconds, "
                 "none, bytes", unit);
        return NULL;
    }
    c->built = grow_array(c->built, &c->built_cap, c->nbuilt + 1, sizeof(*c->built));
    key_map_put(&c->by_key, h, (uint32_t)c->nbuilt);
    built_begin(c, &c->built[c->nbuilt], u, prof, size_hint);
    return &c->built[c->nbuilt++];
}

static bool convert_profile(struct conversion *c, json_t *prof, size_t size_hint)
{
    if (!json_is_object(prof))
        return failf(c, "not an object");
    const char *type = string_of(prof, "type");
    if (strcmp(type, "sampled") && strcmp(type, "evented"))
        return failf(c, "type \"%.30s\" is neither sampled nor evented", type);
    struct built *bt = built_for(c, prof, size_hint);
    return bt && (!strcmp(type, "sampled") ? sampled(c, bt, prof) : evented(c, bt, prof));
}

/* Checks what the profiles need of the file: its schema and its frames. */
static bool check_file(struct conversion *c, json_t *root)
{
    if (strcmp(string_of(root, "$schema"), SCHEMA))
        return failf(c, "$schema is not \"%s\"", SCHEMA);
    c->frames = json_object_get(json_object_get(root, "shared"), "frames");
    if (!json_is_array(c->frames))
        return failf(c, "shared.frames is not an array");
    for (size_t i = 0; i < json_array_size(c->frames); i++)
        if (!json_is_string(json_object_get(json_array_get(c->frames, i), "name")))
            return failf(c, "frame %zu has no name", i);
    if (!json_is_array(json_object_get(root, "profiles")))
        return failf(c, "profiles is not an array");
    return true;
}

int speedscope_records(const struct profd_host *host, const char *json, size_t len,
                       int64_t cpu_period_nanos, struct profd_batch *b, char *why, size_t whylen)
{
    struct conversion c = {.host = host, .cpu_period = cpu_period_nanos, .why = why,
                           .whylen = whylen};
    json_error_t je;
    json_t *root = json_loadb(json, len, 0, &je);
    if (!root) {
        snprintf(why, whylen, "not JSON: %s at line %d, column %d", je.text, je.line,
                 je.column);
        return -1;
    }
    bool ok = json_is_object(root) && check_file(&c, root);
    if (!json_is_object(root))
        snprintf(why, whylen, "not a JSON object");
    json_t *profiles = json_object_get(root, "profiles");
    for (size_t i = 0; ok && i < json_array_size(profiles); i++) {
        json_t *prof = json_array_get(profiles, i);
        snprintf(c.where, sizeof(c.where), "profile %zu (\"%.40s\"): ", i,
                 string_of(prof, "name"));
        ok = convert_profile(&c, prof, len / (json_array_size(profiles) + 1));
    }
    for (size_t i = 0; i < c.nbuilt; i++) {
        struct built *bt = &c.built[i];
        if (ok)
            host->record_set_label(host->record_add_profile(b, bt->p), "profile_name",
                                   string_of(bt->first, "name"));
        else
            host->profile_free(bt->p);
        free(bt->frame_loc);
        key_map_free(&bt->stacks);
    }
    free(c.built);
    free(c.stack);
    free(c.locs);
    key_map_free(&c.by_key);
    json_decref(root);
    return ok ? (int)c.nbuilt : -1;
}
