// SPDX-License-Identifier: Apache-2.0
#include "speedscope.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/grow.h"
#include "../../lib/hash.h"
#include "../../lib/json_pull.h"
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

/* What makes speedscope profiles one record: the same name, type, unit and
 * startValue. */
struct profile_key {
    char *name, *type, *unit;   /* "" when the profile has none */
    double start;
};

/* One record's profile as it is built. */
struct built {
    struct profd_profile *p;
    const struct unit_info *unit;
    struct profile_key key;
    uint32_t *frame_loc;     /* by frame index: its location ref, 0 none yet */
    struct key_map stacks;   /* a stack's hash -> its sample's index */
};

/* Where a speedscope profile's members are in the file, read once. */
struct profile_fields {
    struct profile_key key;
    struct json_mark samples, weights, events;
    bool has_samples, has_weights, has_events;
};

struct conversion {
    const struct profd_host *host;
    struct json_pull j;        /* the file, read where each part is needed */
    struct json_mark *frames;  /* shared.frames: each frame's object */
    size_t nframes, frames_cap;
    struct json_mark shared, profiles;
    bool has_shared, has_profiles;
    size_t nprofiles;
    int64_t cpu_period;
    struct built *built;
    size_t nbuilt, built_cap;
    struct key_map by_key;   /* hash of a profile_key -> built index */
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

static uint32_t intern(struct built *bt, const struct profd_host *host, const char *s,
                       size_t len)
{
    return host->profile_intern(bt->p, s, len);
}

/* A record's profile for the unit u, its types set; it takes key. */
static void built_begin(struct conversion *c, struct built *bt, const struct unit_info *u,
                        struct profile_key key, size_t size_hint)
{
    const struct profd_host *host = c->host;
    *bt = (struct built){.p = host->profile_new(size_hint), .unit = u, .key = key};
    struct profd_profile *p = bt->p;
    bt->frame_loc = calloc(c->nframes + 1, sizeof(*bt->frame_loc));
    if (!bt->frame_loc)
        abort();
    p->nsample_types = u->cpu_too ? 2 : 1;
    p->sample_types = host->profile_alloc(p, 2 * sizeof(*p->sample_types));
    p->sample_types[0] = (struct profd_value_type){
        intern(bt, host, u->type, strlen(u->type)),
        intern(bt, host, u->type_unit, strlen(u->type_unit))};
    if (u->cpu_too)
        p->sample_types[1] = (struct profd_value_type){intern(bt, host, "cpu", 3),
                                                       intern(bt, host, "nanoseconds", 11)};
    if (u->nanos > 0 || u->cpu_too) {
        p->period_type = p->sample_types[u->cpu_too];
        p->period = u->cpu_too ? c->cpu_period : 0;
    }
}

/* The location of frame i in bt's profile, made on first use from the
 * frame's object (the reader's cursor left where it was). */
static uint32_t frame_location(struct conversion *c, struct built *bt, uint32_t i)
{
    if (bt->frame_loc[i])
        return bt->frame_loc[i];
    const struct profd_host *host = c->host;
    struct profd_profile *p = bt->p;
    struct json_pull *j = &c->j;
    struct json_mark back = json_pull_mark(j);
    json_pull_seek(j, c->frames[i]);
    uint32_t name = 0, file = intern(bt, host, "", 0);
    int64_t line = 0, column = 0;
    const char *key, *s;
    size_t len;
    json_pull_object(j);   /* read once already: an object with a name */
    while (json_pull_member(j, &key)) {
        bool is_name = !strcmp(key, "name");
        if (is_name || !strcmp(key, "file")) {
            uint32_t text = intern(bt, host, "", 0);
            if (json_pull_string(j, &s, &len))
                text = intern(bt, host, s, len);
            *(is_name ? &name : &file) = text;
        } else if (!strcmp(key, "line") || !strcmp(key, "col")) {
            int64_t *v = key[0] == 'l' ? &line : &column;
            *v = json_pull_integer(j, v) ? *v : 0;
        } else {
            json_pull_skip(j);
        }
    }
    json_pull_seek(j, back);
    *host->profile_add_function(p) =
        (struct profd_function){.name = name, .system_name = name, .filename = file};
    struct profd_line *l = host->profile_alloc(p, sizeof(*l));
    *l = (struct profd_line){.function = p->nfunctions, .line = line, .column = column};
    *host->profile_add_location(p) = (struct profd_location){.lines = l, .nlines = 1};
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

/* Reads the value at the cursor as a frame index; false when it is not one
 * into the frames. */
static bool frame_index(struct conversion *c, uint32_t *i)
{
    int64_t x;
    if (!json_pull_integer(&c->j, &x) || x < 0 || (uint64_t)x >= c->nframes)
        return false;
    *i = (uint32_t)x;
    return true;
}

static void stack_push(struct conversion *c, uint32_t frame)
{
    c->stack = grow_array(c->stack, &c->stack_cap, c->stack_len + 1, sizeof(*c->stack));
    c->stack[c->stack_len++] = frame;
}

/* Reads the stack at the cursor (an array of frame indices, root first)
 * into c->stack; sample i for messages. */
static bool read_stack(struct conversion *c, size_t i)
{
    struct json_pull *j = &c->j;
    if (json_pull_kind(j) != JSON_PULL_ARRAY)
        return failf(c, "sample %zu is not an array of frame indices", i);
    json_pull_array(j);
    c->stack_len = 0;
    for (size_t k = 0; json_pull_element(j); k++) {
        uint32_t frame;
        if (!frame_index(c, &frame))
            return failf(c, "sample %zu, frame %zu: not an index into the %zu frames", i, k,
                         c->nframes);
        stack_push(c, frame);
    }
    return true;
}

/* Goes through samples and weights side by side, each array's place kept
 * in its mark. */
static bool sampled(struct conversion *c, struct built *bt, const struct profile_fields *f)
{
    struct json_pull *j = &c->j;
    struct json_mark samples = f->samples, weights = f->weights;
    bool arrays = f->has_samples && f->has_weights;
    if (arrays) {
        json_pull_seek(j, samples);
        arrays = json_pull_kind(j) == JSON_PULL_ARRAY && json_pull_array(j);
        samples = json_pull_mark(j);
        json_pull_seek(j, weights);
        arrays = arrays && json_pull_kind(j) == JSON_PULL_ARRAY && json_pull_array(j);
        weights = json_pull_mark(j);
    }
    for (size_t i = 0; arrays; i++) {
        json_pull_seek(j, samples);
        bool sample = json_pull_element(j);
        if (sample && !read_stack(c, i))
            return false;
        samples = json_pull_mark(j);
        json_pull_seek(j, weights);
        bool weight = json_pull_element(j);
        if (sample != weight)
            break;
        if (!sample)
            return true;
        double w;
        if (!json_pull_number(j, &w) || !add_stack(c, bt, w))
            return failf(c, "sample %zu: weight is not a number a profile holds", i);
        weights = json_pull_mark(j);
    }
    return failf(c, "samples and weights are not two arrays of the same length");
}

/* One event of an evented profile, as read. */
struct event {
    char type;   /* 'O', 'C', or 0 for any other */
    char type_text[24];
    bool has_at, has_frame;
    double at;
    uint32_t frame;
};

/* Reads the event object at the cursor into ev (what it lacks left unset). */
static void read_event(struct conversion *c, struct event *ev)
{
    struct json_pull *j = &c->j;
    const char *key, *s;
    size_t len;
    *ev = (struct event){0};
    if (json_pull_kind(j) != JSON_PULL_OBJECT) {
        json_pull_skip(j);
        return;
    }
    json_pull_object(j);
    while (json_pull_member(j, &key)) {
        if (!strcmp(key, "type")) {
            bool is_string = json_pull_string(j, &s, &len);
            snprintf(ev->type_text, sizeof(ev->type_text), "%s", is_string ? s : "");
            ev->type = is_string && len == 1 && (*s == 'O' || *s == 'C') ? *s : 0;
        } else if (!strcmp(key, "at")) {
            ev->has_at = json_pull_number(j, &ev->at);
        } else if (!strcmp(key, "frame")) {
            ev->has_frame = frame_index(c, &ev->frame);
        } else {
            json_pull_skip(j);
        }
    }
}

static bool evented(struct conversion *c, struct built *bt, const struct profile_fields *f)
{
    struct json_pull *j = &c->j;
    if (f->has_events)
        json_pull_seek(j, f->events);
    if (!f->has_events || json_pull_kind(j) != JSON_PULL_ARRAY)
        return failf(c, "events is not an array");
    json_pull_array(j);
    double last = bt->key.start;   /* f's start; built_for may have taken f's key */
    c->stack_len = 0;
    for (size_t i = 0; json_pull_element(j); i++) {
        struct event ev;
        read_event(c, &ev);
        if (!ev.has_at || !(ev.at >= last))
            return failf(c, "event %zu: at is not a time at or after the one before", i);
        if (!ev.has_frame)
            return failf(c, "event %zu: frame is not an index into the %zu frames", i,
                         c->nframes);
        if (!ev.type)
            return failf(c, "event %zu: type \"%.20s\" is neither O nor C", i, ev.type_text);
        bool open = ev.type == 'O';
        if (!open && (!c->stack_len || c->stack[c->stack_len - 1] != ev.frame))
            return failf(c, "event %zu closes frame %u, which is not the innermost open", i,
                         ev.frame);
        if (!add_stack(c, bt, ev.at - last))
            return failf(c, "event %zu: a time no profile holds", i);
        if (open)
            stack_push(c, ev.frame);
        else
            c->stack_len--;
        last = ev.at;
    }
    return true;
}

static bool same_key(const struct profile_key *a, const struct profile_key *b)
{
    return !strcmp(a->name, b->name) && !strcmp(a->type, b->type) &&
           !strcmp(a->unit, b->unit) && a->start == b->start;
}

static uint64_t key_hash(const struct profile_key *k)
{
    uint64_t h = hash_mix(hash_bytes(k->name, strlen(k->name)),
                          hash_bytes(k->type, strlen(k->type)));
    return hash_mix(hash_mix(h, hash_bytes(k->unit, strlen(k->unit))),
                    hash_bytes(&k->start, sizeof(k->start)));
}

static void key_free(struct profile_key *k)
{
    free(k->name);
    free(k->type);
    free(k->unit);
}

/* The record of key: the one made for it before, or a new one, which then
 * takes key; NULL when its unit is none known. */
static struct built *built_for(struct conversion *c, struct profile_key *key, size_t size_hint)
{
    uint64_t h = key_hash(key);
    uint32_t idx;
    if (key_map_get(&c->by_key, h, &idx)) {   /* the map holds the latest of a hash */
        if (same_key(&c->built[idx].key, key))
            return &c->built[idx];
        for (size_t i = 0; i < c->nbuilt; i++)   /* keys whose hashes collide */
            if (same_key(&c->built[i].key, key))
                return &c->built[i];
    }
    const struct unit_info *u = NULL;
    for (size_t i = 0; i < sizeof(unit_infos) / sizeof(*unit_infos); i++)
        if (!strcmp(key->unit, unit_infos[i].unit))
            u = &unit_infos[i];
    if (!u) {
        failf(c, "unit \"%.30s\" is none of nanoseconds, microseconds, milliseconds, seconds, "
                 "none, bytes", key->unit);
        return NULL;
    }
    c->built = grow_array(c->built, &c->built_cap, c->nbuilt + 1, sizeof(*c->built));
    key_map_put(&c->by_key, h, (uint32_t)c->nbuilt);
    built_begin(c, &c->built[c->nbuilt], u, *key, size_hint);
    *key = (struct profile_key){0};
    return &c->built[c->nbuilt++];
}

/* The string value at the cursor, copied; "" when it is none. */
static char *string_copy(struct json_pull *j)
{
    const char *s;
    return must_strdup(json_pull_string(j, &s, NULL) ? s : "");
}

/* Reads the members of the profile object at the cursor into f, marking
 * the arrays for later. */
static void read_profile_fields(struct conversion *c, struct profile_fields *f)
{
    struct json_pull *j = &c->j;
    const char *key;
    json_pull_object(j);
    while (json_pull_member(j, &key)) {
        char **text = !strcmp(key, "name") ? &f->key.name
                      : !strcmp(key, "type") ? &f->key.type
                      : !strcmp(key, "unit") ? &f->key.unit : NULL;
        struct json_mark at = json_pull_mark(j);
        if (text) {
            free(*text);
            *text = string_copy(j);
        } else if (!strcmp(key, "startValue")) {
            f->key.start = json_pull_number(j, &f->key.start) ? f->key.start : 0;
        } else if (!strcmp(key, "samples")) {
            f->samples = at;
            f->has_samples = json_pull_skip(j);
        } else if (!strcmp(key, "weights")) {
            f->weights = at;
            f->has_weights = json_pull_skip(j);
        } else if (!strcmp(key, "events")) {
            f->events = at;
            f->has_events = json_pull_skip(j);
        } else {
            json_pull_skip(j);
        }
    }
    f->key.name = f->key.name ? f->key.name : must_strdup("");
    f->key.type = f->key.type ? f->key.type : must_strdup("");
    f->key.unit = f->key.unit ? f->key.unit : must_strdup("");
}

/* Converts profile i, at the cursor, into its record; the cursor then
 * past it. */
static bool convert_profile(struct conversion *c, size_t i)
{
    struct json_pull *j = &c->j;
    if (json_pull_kind(j) != JSON_PULL_OBJECT) {
        snprintf(c->where, sizeof(c->where), "profile %zu (\"\"): ", i);
        return failf(c, "not an object");
    }
    struct profile_fields f = {0};
    read_profile_fields(c, &f);
    struct json_mark next = json_pull_mark(j);
    snprintf(c->where, sizeof(c->where), "profile %zu (\"%.40s\"): ", i, f.key.name);
    bool is_sampled = !strcmp(f.key.type, "sampled");
    bool ok = false;
    if (!is_sampled && strcmp(f.key.type, "evented")) {
        failf(c, "type \"%.30s\" is neither sampled nor evented", f.key.type);
    } else {
        struct built *bt = built_for(c, &f.key, (size_t)(j->end - j->doc) / (c->nprofiles + 1));
        ok = bt && (is_sampled ? sampled(c, bt, &f) : evented(c, bt, &f));
    }
    key_free(&f.key);
    json_pull_seek(j, next);
    return ok;
}

/* Reads the file's top level: checks it is JSON, marks shared and
 * profiles, counts the profiles and checks the $schema. */
static bool read_top(struct conversion *c)
{
    struct json_pull *j = &c->j;
    const char *key, *s;
    bool schema = false;
    if (json_pull_kind(j) != JSON_PULL_OBJECT) {
        if (json_pull_skip(j) && json_pull_end(j))
            return failf(c, "not a JSON object");
    } else {
        json_pull_object(j);
    }
    while (json_pull_member(j, &key)) {
        struct json_mark at = json_pull_mark(j);
        if (!strcmp(key, "$schema")) {
            schema = json_pull_string(j, &s, NULL) && !strcmp(s, SCHEMA);
        } else if (!strcmp(key, "shared")) {
            c->shared = at;
            c->has_shared = json_pull_skip(j);
        } else if (!strcmp(key, "profiles") && json_pull_kind(j) == JSON_PULL_ARRAY) {
            c->profiles = at;
            c->has_profiles = json_pull_array(j);
            for (c->nprofiles = 0; json_pull_element(j); c->nprofiles++)
                json_pull_skip(j);
        } else {
            c->has_profiles = c->has_profiles && strcmp(key, "profiles");
            json_pull_skip(j);
        }
    }
    if (!json_pull_end(j)) {
        char error[160];
        json_pull_error(j, error, sizeof(error));
        return failf(c, "not JSON: %s", error);
    }
    return schema || failf(c, "$schema is not \"%s\"", SCHEMA);
}

/* Marks each frame of shared.frames, each an object with a name. */
static bool read_frames(struct conversion *c)
{
    struct json_pull *j = &c->j;
    const char *key, *s;
    bool found = false;
    struct json_mark frames;
    if (c->has_shared) {
        json_pull_seek(j, c->shared);
        if (json_pull_kind(j) == JSON_PULL_OBJECT && json_pull_object(j))
            while (json_pull_member(j, &key)) {
                if (!strcmp(key, "frames")) {
                    frames = json_pull_mark(j);
                    found = json_pull_kind(j) == JSON_PULL_ARRAY;
                }
                json_pull_skip(j);
            }
    }
    if (!found)
        return failf(c, "shared.frames is not an array");
    json_pull_seek(j, frames);
    json_pull_array(j);
    while (json_pull_element(j)) {
        c->frames = grow_array(c->frames, &c->frames_cap, c->nframes + 1, sizeof(*c->frames));
        c->frames[c->nframes] = json_pull_mark(j);
        bool named = false;
        if (json_pull_kind(j) != JSON_PULL_OBJECT)
            json_pull_skip(j);
        else if (json_pull_object(j))
            while (json_pull_member(j, &key)) {
                if (!strcmp(key, "name"))
                    named = json_pull_string(j, &s, NULL);
                else
                    json_pull_skip(j);
            }
        if (!named)
            return failf(c, "frame %zu has no name", c->nframes);
        c->nframes++;
    }
    return true;
}

int speedscope_records(const struct profd_host *host, const char *json, size_t len,
                       int64_t cpu_period_nanos, struct profd_batch *b, char *why, size_t whylen)
{
    struct conversion c = {.host = host, .cpu_period = cpu_period_nanos, .why = why,
                           .whylen = whylen};
    json_pull_init(&c.j, json, len);
    bool ok = read_top(&c) && read_frames(&c);
    if (ok && !c.has_profiles)
        ok = failf(&c, "profiles is not an array");
    if (ok) {
        json_pull_seek(&c.j, c.profiles);
        json_pull_array(&c.j);
    }
    for (size_t i = 0; ok && json_pull_element(&c.j); i++)
        ok = convert_profile(&c, i);
    for (size_t i = 0; i < c.nbuilt; i++) {
        struct built *bt = &c.built[i];
        if (ok)
            host->record_set_label(host->record_add_profile(b, bt->p), "profile_name",
                                   bt->key.name);
        else
            host->profile_free(bt->p);
        key_free(&bt->key);
        free(bt->frame_loc);
        key_map_free(&bt->stacks);
    }
    free(c.built);
    free(c.frames);
    free(c.stack);
    free(c.locs);
    key_map_free(&c.by_key);
    json_pull_free(&c.j);
    return ok ? (int)c.nbuilt : -1;
}
