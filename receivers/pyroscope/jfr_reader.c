// SPDX-License-Identifier: Apache-2.0
/*
 * A JFR chunk: a 68-byte header (magic "FLR\0", version, the chunk's size,
 * where its last constant pool and its metadata are, its start and
 * duration, its ticks per second, a flag for compressed integers), then
 * records, each its size, its type and its fields. Type 0 is the metadata
 * (every class with its fields, in the order they are written), type 1 a
 * constant pool event (entries of classes such as stack traces, methods,
 * classes and symbols, which events refer to by key), and the rest events.
 * The metadata is read first, then every pool of the chunk, then its
 * events, so that an event may refer to an entry written after it.
 * Integers are LEB128-like varints when the chunk says they are compressed
 * (the 9th byte holds 8 bits), else big-endian.
 */
#include "jfr_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/grow.h"
#include "../../lib/key_map.h"
#include "jfr_chunk.h"

/* ---- values ---- */

static bool skip_value(struct chunk *c, struct rd *r, uint64_t type, bool cp, int depth);

/* One value of a field, array or not. */
static bool skip_field(struct chunk *c, struct rd *r, const struct field *f, int depth)
{
    uint64_t n = 1;
    if (f->array && !jfr_count(r, &n))
        return false;
    for (uint64_t i = 0; i < n; i++)
        if (!skip_value(c, r, f->type, f->cp, depth))
            return false;
    return true;
}

static bool skip_value(struct chunk *c, struct rd *r, uint64_t type, bool cp, int depth)
{
    uint64_t v;
    uint8_t b;
    if (cp)
        return jfr_integer(r, 8, &v);
    const struct class *cls = jfr_class_by_id(c, type);
    if (!cls)
        return jfr_fail(r, "a field of a class the metadata does not have");
    switch (cls->prim) {
    case P_BOOLEAN:
    case P_BYTE:
        return jfr_byte(r, &b);
    case P_CHAR:
    case P_SHORT:
        return jfr_integer(r, 2, &v);
    case P_INT:
        return jfr_integer(r, 4, &v);
    case P_LONG:
        return jfr_integer(r, 8, &v);
    case P_FLOAT:
        return jfr_big_endian(r, 4, &v);
    case P_DOUBLE:
        return jfr_big_endian(r, 8, &v);
    case P_STRING: {
        struct str s;
        return jfr_string(c, r, &s);
    }
    case P_OBJECT:
        break;
    }
    if (depth >= JFR_MAX_DEPTH)
        return jfr_fail(r, "classes nested too deep");
    for (size_t i = 0; i < cls->nfields; i++)
        if (!skip_field(c, r, &cls->fields[i], depth + 1))
            return false;
    return true;
}

/* A scalar field (a pool key, a boolean or an integer) into *v; other
 * fields are skipped and *v left as it was. */
static bool scalar(struct chunk *c, struct rd *r, const struct field *f, int64_t *v)
{
    const struct class *cls = f->cp ? NULL : jfr_class_by_id(c, f->type);
    int bytes = f->cp ? 8 : !cls ? 0
                : cls->prim == P_BOOLEAN || cls->prim == P_BYTE ? 1
                : cls->prim == P_CHAR || cls->prim == P_SHORT   ? 2
                : cls->prim == P_INT                            ? 4
                : cls->prim == P_LONG                           ? 8
                                                                : 0;
    if (f->array || !bytes)
        return skip_field(c, r, f, 0);
    uint64_t x;
    uint8_t b;
    if (bytes == 1) {
        if (!jfr_byte(r, &b))
            return false;
        x = b;
    } else if (!jfr_integer(r, bytes, &x)) {
        return false;
    }
    *v = bytes == 4 ? (int32_t)(uint32_t)x : bytes == 2 ? (int16_t)(uint16_t)x : (int64_t)x;
    return true;
}

/* ---- constant pools ---- */

static void add_str(struct chunk *c, struct key_map *m, uint64_t key, struct str s)
{
    c->strs = grow_array(c->strs, &c->strs_cap, c->nstrs + 1, sizeof(*c->strs));
    c->strs[c->nstrs] = s;
    key_map_put(m, key, (uint32_t)c->nstrs++);
}

/* A stack trace's frames: each its method's key and its line. */
static bool stack_frames(struct chunk *c, struct rd *r, const struct field *f, uint64_t key)
{
    const struct class *frame = jfr_class_by_id(c, f->type);
    uint64_t n;
    if (!f->array || f->cp || !frame || frame->prim != P_OBJECT)
        return skip_field(c, r, f, 0);
    if (!jfr_count(r, &n))
        return false;
    uint32_t first = (uint32_t)c->nframes;
    for (uint64_t i = 0; i < n; i++) {
        int64_t method = 0, line = 0;
        for (size_t j = 0; j < frame->nfields; j++) {
            const struct field *ff = &frame->fields[j];
            bool ok = jfr_str_is(ff->name, "method")       ? scalar(c, r, ff, &method)
                      : jfr_str_is(ff->name, "lineNumber") ? scalar(c, r, ff, &line)
                                                       : skip_field(c, r, ff, 1);
            if (!ok)
                return false;
        }
        c->frames = grow_array(c->frames, &c->frames_cap, c->nframes + 1, sizeof(*c->frames));
        c->frames[c->nframes++] = (struct pool_frame){(uint64_t)method, (int32_t)line};
    }
    c->stack_runs = grow_array(c->stack_runs, &c->stacks_cap, c->nstacks + 1,
                               sizeof(*c->stack_runs));
    c->stack_runs[c->nstacks][0] = first;
    c->stack_runs[c->nstacks][1] = (uint32_t)n;
    key_map_put(&c->stacks, key, (uint32_t)c->nstacks++);
    return true;
}

/* One pool entry of class cls under key: kept when the stacks need it. */
static bool pool_entry(struct chunk *c, struct rd *r, const struct class *cls, uint64_t key)
{
    struct str s;
    if (cls->prim == P_STRING) {
        if (!jfr_string(c, r, &s))
            return false;
        add_str(c, &c->strings, key, s);
        return true;
    }
    bool symbol = jfr_str_is(cls->name, "jdk.types.Symbol");
    bool state = jfr_str_is(cls->name, "jdk.types.ThreadState");
    bool klass = jfr_str_is(cls->name, "java.lang.Class");
    bool method = jfr_str_is(cls->name, "jdk.types.Method");
    bool stack = jfr_str_is(cls->name, "jdk.types.StackTrace");
    if (!symbol && !state && !klass && !method && !stack)
        return skip_value(c, r, cls->id, false, 0);
    int64_t type = 0, name = 0;
    for (size_t i = 0; i < cls->nfields; i++) {
        const struct field *f = &cls->fields[i];
        bool ok;
        if (((symbol && jfr_str_is(f->name, "string")) || (state && jfr_str_is(f->name, "name"))) &&
            !f->cp && !f->array) {
            ok = jfr_string(c, r, &s);
            if (ok)
                add_str(c, symbol ? &c->symbols : &c->states, key, s);
        } else if ((klass || method) && jfr_str_is(f->name, "name")) {
            ok = scalar(c, r, f, &name);
        } else if (method && jfr_str_is(f->name, "type")) {
            ok = scalar(c, r, f, &type);
        } else if (stack && jfr_str_is(f->name, "frames")) {
            ok = stack_frames(c, r, f, key);
        } else {
            ok = skip_field(c, r, f, 0);
        }
        if (!ok)
            return false;
    }
    if (klass || method) {
        c->name_refs = grow_array(c->name_refs, &c->refs_cap, c->nrefs + 1, sizeof(*c->name_refs));
        c->name_refs[c->nrefs][0] = (uint64_t)type;
        c->name_refs[c->nrefs][1] = (uint64_t)name;
        key_map_put(klass ? &c->class_names : &c->methods, key, (uint32_t)c->nrefs++);
    }
    return true;
}

/* A constant pool event: start, duration, delta, flush flag, then pools
 * of entries of one class each. */
static bool read_pools(struct chunk *c, struct rd *r)
{
    uint64_t skip, npools, n, type, key;
    uint8_t flush;
    for (int i = 0; i < 3; i++)
        jfr_integer(r, 8, &skip);
    if (!jfr_byte(r, &flush) || !jfr_count(r, &npools))
        return false;
    for (uint64_t i = 0; i < npools; i++) {
        if (!jfr_integer(r, 8, &type) || !jfr_count(r, &n))
            return false;
        const struct class *cls = jfr_class_by_id(c, type);
        if (!cls)
            return jfr_fail(r, "a constant pool of a class the metadata does not have");
        for (uint64_t j = 0; j < n; j++)
            if (!jfr_integer(r, 8, &key) || !pool_entry(c, r, cls, key))
                return false;
    }
    return true;
}

/* ---- events ---- */

/* A recording as it is read: where its samples go, and what its settings
 * said so far. */
struct reading {
    bool (*fn)(void *arg, const struct jfr_sample *s);
    void *arg;
    bool wall;       /* async-profiler's event=wall: execution samples are wall time too */
    bool stopped;    /* fn said to stop */
    long samples;
    struct jfr_frame *frames;   /* a sample's, resolved */
    size_t frames_cap;
};

/* The kind of the samples events of class name make, or -1. */
static int kind_of(struct str name)
{
    static const char *const names[JFR_KINDS] = {
        [JFR_CPU] = "jdk.ExecutionSample",
        [JFR_WALL] = "profiler.WallClockSample",
        [JFR_ALLOC_IN_TLAB] = "jdk.ObjectAllocationInNewTLAB",
        [JFR_ALLOC_OUTSIDE] = "jdk.ObjectAllocationOutsideTLAB",
        [JFR_MONITOR] = "jdk.JavaMonitorEnter",
        [JFR_PARK] = "jdk.ThreadPark",
        [JFR_LIVE] = "profiler.LiveObject",
        [JFR_ALLOC_SAMPLE] = "jdk.ObjectAllocationSample",
        [JFR_MALLOC] = "profiler.Malloc",
    };
    for (int k = 0; k < JFR_KINDS; k++)
        if (jfr_str_is(name, names[k]))
            return k;
    return -1;
}

static struct str symbol(const struct chunk *c, uint64_t key)
{
    uint32_t at;
    return key_map_get(&c->symbols, key, &at) ? c->strs[at] : (struct str){"", 0};
}

/* The frames of the stack trace at (its run in c->stack_runs), resolved,
 * into *frames (grown). */
static uint32_t resolve(const struct chunk *c, uint32_t at, struct jfr_frame **frames,
                        size_t *cap)
{
    uint32_t m, k;
    uint32_t first = c->stack_runs[at][0], n = c->stack_runs[at][1];
    *frames = grow_array(*frames, cap, n, sizeof(**frames));
    for (uint32_t i = 0; i < n; i++) {
        const struct pool_frame *pf = &c->frames[first + i];
        struct str klass = {"", 0}, method = {"", 0};
        if (key_map_get(&c->methods, pf->method, &m)) {
            method = symbol(c, c->name_refs[m][1]);
            if (key_map_get(&c->class_names, c->name_refs[m][0], &k))
                klass = symbol(c, c->name_refs[k][1]);
        }
        (*frames)[i] = (struct jfr_frame){klass.p, method.p, klass.len, method.len,
                                          pf->line > 0 ? pf->line : 0};
    }
    return n;
}

/* A string field into *out (empty when it is no string); other fields are
 * skipped. */
static bool string_field(struct chunk *c, struct rd *r, const struct field *f, struct str *out)
{
    const struct class *cls = jfr_class_by_id(c, f->type);
    uint64_t key;
    uint32_t at;
    *out = (struct str){"", 0};
    if (f->array || !cls || cls->prim != P_STRING)
        return skip_field(c, r, f, 0);
    if (!f->cp)
        return jfr_string(c, r, out);
    if (jfr_integer(r, 8, &key) && key_map_get(&c->strings, key, &at))
        *out = c->strs[at];
    return !r->err;
}

/* A jdk.ActiveSetting event: async-profiler's "event" setting says which
 * event it samples; "wall" makes execution samples wall time too. */
static void active_setting(struct chunk *c, struct rd *r, const struct class *cls,
                           struct reading *rg)
{
    struct str name = {"", 0}, value = {"", 0};
    for (size_t i = 0; i < cls->nfields; i++) {
        const struct field *f = &cls->fields[i];
        bool ok = jfr_str_is(f->name, "name")    ? string_field(c, r, f, &name)
                  : jfr_str_is(f->name, "value") ? string_field(c, r, f, &value)
                                                 : skip_field(c, r, f, 0);
        if (!ok)
            return;
    }
    if (jfr_str_is(name, "event"))
        rg->wall = jfr_str_is(value, "wall");
}

/* Hands a sample of kind with value and the stack at to rg's fn. */
static void emit(const struct chunk *c, struct reading *rg, enum jfr_kind kind, int64_t value,
                 int64_t context, uint32_t stack_at)
{
    if (rg->stopped)
        return;
    struct jfr_sample s = {kind, NULL, 0, value, context};
    s.nframes = resolve(c, stack_at, &rg->frames, &rg->frames_cap);
    s.frames = rg->frames;
    rg->samples++;
    rg->stopped = !rg->fn(rg->arg, &s);
}

/* One event of class cls: the samples of it, if its kind is one profiles
 * use and it has a stack trace. */
static void event(struct chunk *c, struct rd *r, const struct class *cls, struct reading *rg)
{
    int kind = kind_of(cls->name);
    int64_t stack = 0, value = 0, duration = 0, context = 0, state = 0;
    if (kind < 0)
        return;
    for (size_t i = 0; i < cls->nfields; i++) {
        const struct field *f = &cls->fields[i];
        bool ok = jfr_str_is(f->name, "stackTrace")       ? scalar(c, r, f, &stack)
                  : jfr_str_is(f->name, "tlabSize")       ? scalar(c, r, f, &value)
                  : jfr_str_is(f->name, "allocationSize") ? scalar(c, r, f, &value)
                  : jfr_str_is(f->name, "weight")         ? scalar(c, r, f, &value)
                  : jfr_str_is(f->name, "size")           ? scalar(c, r, f, &value)
                  : jfr_str_is(f->name, "samples")        ? scalar(c, r, f, &value)
                  : jfr_str_is(f->name, "duration")       ? scalar(c, r, f, &duration)
                  : jfr_str_is(f->name, "contextId")      ? scalar(c, r, f, &context)
                  : jfr_str_is(f->name, "state")          ? scalar(c, r, f, &state)
                                                      : skip_field(c, r, f, 0);
        if (!ok)
            return;
    }
    uint32_t at, stack_at;
    if (!key_map_get(&c->stacks, (uint64_t)stack, &stack_at))
        return;   /* no stack trace (a compiler thread's): Pyroscope leaves it out */
    if (kind == JFR_CPU) {
        /* a thread asleep (sampled in async-profiler's wall mode) spends no CPU */
        if (!key_map_get(&c->states, (uint64_t)state, &at) ||
            !jfr_str_is(c->strs[at], "STATE_SLEEPING"))
            emit(c, rg, JFR_CPU, 0, context, stack_at);
        if (rg->wall)
            emit(c, rg, JFR_WALL, 1, context, stack_at);
        return;
    }
    if (kind == JFR_MONITOR || kind == JFR_PARK) {
        double nanos = c->ticks_per_second > 0 && duration > 0
                           ? (double)duration * 1e9 / (double)c->ticks_per_second
                           : 0;
        value = nanos < 9.2e18 ? (int64_t)nanos : INT64_MAX;
    } else if (kind == JFR_LIVE) {
        value = 0;
    }
    emit(c, rg, (enum jfr_kind)kind, value, context, stack_at);
}

static void chunk_free(struct chunk *c)
{
    for (size_t i = 0; i < c->nclasses; i++)
        free(c->classes[i].fields);
    for (size_t i = 0; i < c->nowned; i++)
        free(c->owned[i]);
    free(c->owned);
    free(c->classes);
    free(c->meta_strings);
    key_map_free(&c->strings);
    key_map_free(&c->symbols);
    key_map_free(&c->states);
    key_map_free(&c->class_names);
    key_map_free(&c->methods);
    key_map_free(&c->stacks);
    free(c->strs);
    free(c->name_refs);
    free(c->frames);
    free(c->stack_runs);
}

/* Reads the records of c: with samples false its constant pools, then its
 * settings (which may refer to the pools); with samples set its events,
 * into rg. False with c->r's error set. */
static bool read_records(struct chunk *c, struct reading *rg, bool samples)
{
    struct rd r = c->r, body, *settings = NULL;   /* settings: ActiveSetting events */
    size_t nsettings = 0, settings_cap = 0;
    const struct class *setting = NULL;
    r.p = c->r.base + JFR_HEADER_SIZE;
    uint64_t type;
    while (r.p < r.end && !rg->stopped && jfr_record(&r, &body, &type)) {
        const struct class *cls = type > 1 ? jfr_class_by_id(c, type) : NULL;
        if (!samples && type == 1) {
            read_pools(c, &body);
        } else if (!samples && cls && jfr_str_is(cls->name, "jdk.ActiveSetting")) {
            setting = cls;
            settings = grow_array(settings, &settings_cap, nsettings + 1, sizeof(*settings));
            settings[nsettings++] = body;
        } else if (samples && cls) {
            event(c, &body, cls, rg);
        }
        if (body.err)
            r = body;
    }
    for (size_t i = 0; i < nsettings && !r.err; i++) {
        body = settings[i];
        active_setting(c, &body, setting, rg);
        if (body.err)
            r = body;
    }
    free(settings);
    if (r.err) {
        c->r.err = r.err;
        c->r.err_at = r.err_at;
    }
    return !r.err;
}

/* Reads one chunk at file->p: pools and settings, then events into rg.
 * False with file's error set. */
static bool read_chunk(struct rd *file, struct reading *rg, struct jfr_span *span)
{
    uint64_t magic = 0, version = 0, size = 0, cp_offset, meta_offset = 0, start = 0, duration = 0,
             ticks = 0, skip, flags = 0;
    struct chunk c = {.r = *file};
    c.r.base = file->p;
    c.r.compressed = false;
    if (!jfr_big_endian(&c.r, 4, &magic) || magic != 0x464c5200) {
        return jfr_fail(file, "not a JFR chunk (no FLR magic)");
    }
    jfr_big_endian(&c.r, 4, &version);
    jfr_big_endian(&c.r, 8, &size);
    jfr_big_endian(&c.r, 8, &cp_offset);
    jfr_big_endian(&c.r, 8, &meta_offset);
    jfr_big_endian(&c.r, 8, &start);
    jfr_big_endian(&c.r, 8, &duration);
    jfr_big_endian(&c.r, 8, &skip);
    jfr_big_endian(&c.r, 8, &ticks);
    jfr_big_endian(&c.r, 4, &flags);
    if (c.r.err || version >> 16 != 2 || size < JFR_HEADER_SIZE ||
        size > (uint64_t)(file->end - file->p)) {
        return jfr_fail(file, c.r.err                 ? c.r.err
                              : version >> 16 != 2 ? "a JFR version other than 2"
                                                   : "a chunk size past the data");
    }
    c.r.end = file->p + size;
    c.r.compressed = flags & 1;
    c.ticks_per_second = (int64_t)ticks;
    int64_t end, span_len;
    if (!span->start_nanos || (int64_t)start < span->start_nanos)
        span->start_nanos = (int64_t)start;
    if (!__builtin_add_overflow((int64_t)start, (int64_t)duration, &end) &&
        !__builtin_sub_overflow(end, span->start_nanos, &span_len) &&
        span_len > span->duration_nanos)
        span->duration_nanos = span_len;
    if (jfr_read_metadata(&c, meta_offset) && read_records(&c, rg, false))
        read_records(&c, rg, true);
    file->p = file->p + size;
    if (c.r.err) {
        file->err = c.r.err;
        file->err_at = (size_t)(c.r.base - file->base) + c.r.err_at;
    }
    chunk_free(&c);
    return !file->err;
}

long jfr_read(const uint8_t *data, size_t len, bool (*fn)(void *arg, const struct jfr_sample *s),
              void *arg, struct jfr_span *span, char *why, size_t whylen)
{
    *span = (struct jfr_span){0};
    if (len == 0) {
        snprintf(why, whylen, "an empty recording");
        return -1;
    }
    struct rd file = {data, data + len, data, false, NULL, 0};
    struct reading rg = {.fn = fn, .arg = arg};
    while (file.p < file.end && !rg.stopped && read_chunk(&file, &rg, span))
        ;
    free(rg.frames);
    if (file.err) {
        snprintf(why, whylen, "JFR: %s at byte %zu", file.err, file.err_at);
        return -1;
    }
    return rg.samples;
}
