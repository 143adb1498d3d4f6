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

#define HEADER_SIZE 68
#define MAX_DEPTH 16   /* classes inline in classes, deepest */

struct str {
    const char *p;
    uint32_t len;
};

/* A cursor over the chunk; on the first error err is set and every read
 * fails from then on. */
struct rd {
    const uint8_t *p, *end, *base;
    bool compressed;
    const char *err;
    size_t err_at;
};

static bool fail(struct rd *r, const char *what)
{
    if (!r->err) {
        r->err = what;
        r->err_at = (size_t)(r->p - r->base);
    }
    r->p = r->end;
    return false;
}

static bool byte(struct rd *r, uint8_t *v)
{
    if (r->p >= r->end)
        return fail(r, "truncated");
    *v = *r->p++;
    return true;
}

static bool big_endian(struct rd *r, int n, uint64_t *v)
{
    if (r->end - r->p < n)
        return fail(r, "truncated");
    uint64_t x = 0;
    for (int i = 0; i < n; i++)
        x = x << 8 | *r->p++;
    *v = x;
    return true;
}

/* An integer of n bytes when not compressed. */
static bool integer(struct rd *r, int n, uint64_t *v)
{
    if (!r->compressed)
        return big_endian(r, n, v);
    uint64_t x = 0;
    for (int i = 0; i < 9; i++) {
        uint8_t b;
        if (!byte(r, &b))
            return false;
        if (i == 8) {
            *v = x | (uint64_t)b << 56;
            return true;
        }
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *v = x;
            return true;
        }
    }
    return false;   /* not reached */
}

/* A count of things still to come, each at least a byte. */
static bool count(struct rd *r, uint64_t *n)
{
    if (!integer(r, 4, n))
        return false;
    return *n <= (uint64_t)(r->end - r->p) || fail(r, "a count past the record's end");
}

/* ---- metadata ---- */

enum prim { P_OBJECT, P_BOOLEAN, P_BYTE, P_CHAR, P_SHORT, P_INT, P_LONG, P_FLOAT, P_DOUBLE,
            P_STRING };

struct field {
    struct str name;
    uint64_t type;
    bool cp, array;
};

struct class {
    uint64_t id;
    struct str name;
    enum prim prim;
    struct field *fields;
    size_t nfields, cap;
};

/* Stack frames as pooled: the method's key and the line. */
struct pool_frame {
    uint64_t method;
    int32_t line;
};

struct chunk {
    struct rd r;
    int64_t ticks_per_second;
    struct str *meta_strings;
    size_t nmeta_strings;
    struct class *classes;   /* sorted by id once read */
    size_t nclasses, classes_cap;
    /* constant pools, by key: strings and symbols (index into strs),
     * classes (their name's symbol key), methods (their class's and name's
     * keys), stack traces (a run of frames) */
    struct key_map strings, symbols, states, class_names, methods, stacks;
    struct str *strs;
    size_t nstrs, strs_cap;
    uint64_t (*name_refs)[2];   /* a method's class key and name symbol key; a class's 0 and
                                   name symbol key */
    size_t nrefs, refs_cap;
    struct pool_frame *frames;
    size_t nframes, frames_cap;
    uint32_t (*stack_runs)[2];   /* first frame, count */
    size_t nstacks, stacks_cap;
    char **owned;   /* strings made UTF-8 here */
    size_t nowned, owned_cap;
};

static bool str_is(struct str s, const char *c)
{
    return s.len == strlen(c) && !memcmp(s.p, c, s.len);
}

static const struct class *class_by_id(const struct chunk *c, uint64_t id)
{
    size_t lo = 0, hi = c->nclasses;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->classes[mid].id == id)
            return &c->classes[mid];
        if (c->classes[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int by_id(const void *a, const void *b)
{
    uint64_t x = ((const struct class *)a)->id, y = ((const struct class *)b)->id;
    return x < y ? -1 : x > y;
}

static enum prim prim_of(struct str name)
{
    static const char *const names[] = {"", "boolean", "byte", "char", "short", "int",
                                        "long", "float", "double", "java.lang.String"};
    for (size_t i = 1; i < sizeof(names) / sizeof(*names); i++)
        if (str_is(name, names[i]))
            return (enum prim)i;
    return P_OBJECT;
}

/* Keeps s (n bytes, made here) for the chunk's life. */
static struct str keep(struct chunk *c, char *s, size_t n)
{
    c->owned = grow_array(c->owned, &c->owned_cap, c->nowned + 1, sizeof(*c->owned));
    c->owned[c->nowned++] = s;
    return (struct str){s, (uint32_t)n};
}

static size_t put_utf8(char *out, uint32_t cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    out[0] = (char)(0xe0 | cp >> 12);
    out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
    out[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
}

/* A string field: null (empty here), empty, a key into the String pool,
 * UTF-8, UTF-16 chars or Latin-1, the last two made UTF-8. */
static bool string(struct chunk *c, struct rd *r, struct str *out)
{
    uint8_t enc;
    uint64_t n, key;
    uint32_t at;
    *out = (struct str){"", 0};
    if (!byte(r, &enc))
        return false;
    switch (enc) {
    case 0:
    case 1:
        return true;
    case 2:
        if (integer(r, 8, &key) && key_map_get(&c->strings, key, &at))
            *out = c->strs[at];
        return !r->err;
    case 3:
    case 5:
        if (!count(r, &n))
            return false;
        bool ascii = true;
        for (uint64_t i = 0; i < n && enc == 5; i++)
            ascii &= r->p[i] < 0x80;
        if (ascii) {
            *out = (struct str){(const char *)r->p, (uint32_t)n};
        } else {
            char *s = must_malloc(2 * n);
            size_t len = 0;
            for (uint64_t i = 0; i < n; i++)
                len += put_utf8(s + len, r->p[i]);
            *out = keep(c, s, len);
        }
        r->p += n;
        return true;
    case 4: {
        if (!count(r, &n))
            return false;
        char *s = must_malloc(3 * n + 1);
        size_t len = 0;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t ch;
            if (!integer(r, 2, &ch)) {
                free(s);
                return false;
            }
            len += put_utf8(s + len, (uint32_t)(ch & 0xffff));
        }
        *out = keep(c, s, len);
        return true;
    }
    default:
        return fail(r, "a string of an unknown encoding");
    }
}

static bool decimal(struct str s, uint64_t *v)
{
    uint64_t x = 0;
    for (uint32_t i = 0; i < s.len; i++) {
        if (s.p[i] < '0' || s.p[i] > '9' || x > (UINT64_MAX - 9) / 10)
            return false;
        x = x * 10 + (uint64_t)(s.p[i] - '0');
    }
    *v = x;
    return s.len > 0;
}

static bool meta_string(struct chunk *c, struct rd *r, struct str *out)
{
    uint64_t i;
    if (!integer(r, 4, &i))
        return false;
    if (i >= c->nmeta_strings)
        return fail(r, "a metadata string index past the table");
    *out = c->meta_strings[i];
    return true;
}

/* One element of the metadata tree and its children: "class" elements
 * (name, id) make classes, "field" elements (name, class, constantPool,
 * dimension) inside them their fields. */
static bool element(struct chunk *c, struct rd *r, int depth, struct class *owner)
{
    struct str name, key, value, attr_name = {0}, id = {0}, type = {0}, cp = {0}, dim = {0};
    uint64_t nattrs, nchildren;
    if (depth > MAX_DEPTH)
        return fail(r, "metadata nested too deep");
    if (!meta_string(c, r, &name) || !count(r, &nattrs))
        return false;
    for (uint64_t i = 0; i < nattrs; i++) {
        if (!meta_string(c, r, &key) || !meta_string(c, r, &value))
            return false;
        struct str *slot = str_is(key, "name")           ? &attr_name
                           : str_is(key, "id")           ? &id
                           : str_is(key, "class")        ? &type
                           : str_is(key, "constantPool") ? &cp
                           : str_is(key, "dimension")    ? &dim
                                                         : NULL;
        if (slot)
            *slot = value;
    }
    struct class *cls = owner;
    if (str_is(name, "class")) {
        uint64_t class_id;
        if (!decimal(id, &class_id))
            return fail(r, "a metadata class without a numeric id");
        c->classes = grow_array(c->classes, &c->classes_cap, c->nclasses + 1, sizeof(*c->classes));
        cls = &c->classes[c->nclasses++];
        *cls = (struct class){.id = class_id, .name = attr_name, .prim = prim_of(attr_name)};
    } else if (str_is(name, "field") && owner) {
        struct field f = {.name = attr_name, .cp = str_is(cp, "true"), .array = str_is(dim, "1")};
        if (!decimal(type, &f.type))
            return fail(r, "a metadata field without a numeric class");
        owner->fields = grow_array(owner->fields, &owner->cap, owner->nfields + 1, sizeof(f));
        owner->fields[owner->nfields++] = f;
    }
    if (!count(r, &nchildren))
        return false;
    for (uint64_t i = 0; i < nchildren; i++) {
        size_t at = cls ? (size_t)(cls - c->classes) : 0;
        if (!element(c, r, depth + 1, cls ? &c->classes[at] : NULL))
            return false;
        if (cls)
            cls = &c->classes[at];   /* the array may have moved */
    }
    return true;
}

/* Record header: its size (from its first byte) and type; *body the rest. */
static bool record(struct rd *r, struct rd *body, uint64_t *type)
{
    const uint8_t *start = r->p;
    uint64_t size;
    if (!integer(r, 4, &size))
        return false;
    if (size < (uint64_t)(r->p - start) || size > (uint64_t)(r->end - start))
        return fail(r, "a record's size past its chunk");
    *body = *r;
    body->end = start + size;
    r->p = start + size;
    return integer(body, 8, type);
}

static bool read_metadata(struct chunk *c, uint64_t offset)
{
    struct rd all = c->r, body;
    uint64_t type, skip, n;
    if (offset < HEADER_SIZE || offset >= (uint64_t)(c->r.end - c->r.base))
        return fail(&c->r, "the metadata offset is past the chunk");
    all.p = c->r.base + offset;
    if (!record(&all, &body, &type) || type != 0) {
        c->r.err = all.err ? all.err : "no metadata where the header says";
        c->r.err_at = offset;
        return false;
    }
    for (int i = 0; i < 3; i++)   /* start time, duration, metadata id */
        integer(&body, 8, &skip);
    if (!count(&body, &n)) {
        c->r.err = body.err;
        c->r.err_at = body.err_at;
        return false;
    }
    c->meta_strings = must_malloc(n * sizeof(*c->meta_strings));
    c->nmeta_strings = 0;
    for (uint64_t i = 0; i < n && string(c, &body, &c->meta_strings[i]); i++)
        c->nmeta_strings++;
    if (!body.err)
        element(c, &body, 0, NULL);
    if (body.err) {
        c->r.err = body.err;
        c->r.err_at = body.err_at;
        return false;
    }
    if (c->nclasses)   /* qsort wants an array, even of none */
        qsort(c->classes, c->nclasses, sizeof(*c->classes), by_id);
    return true;
}

/* ---- values ---- */

static bool skip_value(struct chunk *c, struct rd *r, uint64_t type, bool cp, int depth);

/* One value of a field, array or not. */
static bool skip_field(struct chunk *c, struct rd *r, const struct field *f, int depth)
{
    uint64_t n = 1;
    if (f->array && !count(r, &n))
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
        return integer(r, 8, &v);
    const struct class *cls = class_by_id(c, type);
    if (!cls)
        return fail(r, "a field of a class the metadata does not have");
    switch (cls->prim) {
    case P_BOOLEAN:
    case P_BYTE:
        return byte(r, &b);
    case P_CHAR:
    case P_SHORT:
        return integer(r, 2, &v);
    case P_INT:
        return integer(r, 4, &v);
    case P_LONG:
        return integer(r, 8, &v);
    case P_FLOAT:
        return big_endian(r, 4, &v);
    case P_DOUBLE:
        return big_endian(r, 8, &v);
    case P_STRING: {
        struct str s;
        return string(c, r, &s);
    }
    case P_OBJECT:
        break;
    }
    if (depth >= MAX_DEPTH)
        return fail(r, "classes nested too deep");
    for (size_t i = 0; i < cls->nfields; i++)
        if (!skip_field(c, r, &cls->fields[i], depth + 1))
            return false;
    return true;
}

/* A scalar field (a pool key, a boolean or an integer) into *v; other
 * fields are skipped and *v left as it was. */
static bool scalar(struct chunk *c, struct rd *r, const struct field *f, int64_t *v)
{
    const struct class *cls = f->cp ? NULL : class_by_id(c, f->type);
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
        if (!byte(r, &b))
            return false;
        x = b;
    } else if (!integer(r, bytes, &x)) {
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
    const struct class *frame = class_by_id(c, f->type);
    uint64_t n;
    if (!f->array || f->cp || !frame || frame->prim != P_OBJECT)
        return skip_field(c, r, f, 0);
    if (!count(r, &n))
        return false;
    uint32_t first = (uint32_t)c->nframes;
    for (uint64_t i = 0; i < n; i++) {
        int64_t method = 0, line = 0;
        for (size_t j = 0; j < frame->nfields; j++) {
            const struct field *ff = &frame->fields[j];
            bool ok = str_is(ff->name, "method")       ? scalar(c, r, ff, &method)
                      : str_is(ff->name, "lineNumber") ? scalar(c, r, ff, &line)
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
        if (!string(c, r, &s))
            return false;
        add_str(c, &c->strings, key, s);
        return true;
    }
    bool symbol = str_is(cls->name, "jdk.types.Symbol");
    bool state = str_is(cls->name, "jdk.types.ThreadState");
    bool klass = str_is(cls->name, "java.lang.Class");
    bool method = str_is(cls->name, "jdk.types.Method");
    bool stack = str_is(cls->name, "jdk.types.StackTrace");
    if (!symbol && !state && !klass && !method && !stack)
        return skip_value(c, r, cls->id, false, 0);
    int64_t type = 0, name = 0;
    for (size_t i = 0; i < cls->nfields; i++) {
        const struct field *f = &cls->fields[i];
        bool ok;
        if (((symbol && str_is(f->name, "string")) || (state && str_is(f->name, "name"))) &&
            !f->cp && !f->array) {
            ok = string(c, r, &s);
            if (ok)
                add_str(c, symbol ? &c->symbols : &c->states, key, s);
        } else if ((klass || method) && str_is(f->name, "name")) {
            ok = scalar(c, r, f, &name);
        } else if (method && str_is(f->name, "type")) {
            ok = scalar(c, r, f, &type);
        } else if (stack && str_is(f->name, "frames")) {
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
        integer(r, 8, &skip);
    if (!byte(r, &flush) || !count(r, &npools))
        return false;
    for (uint64_t i = 0; i < npools; i++) {
        if (!integer(r, 8, &type) || !count(r, &n))
            return false;
        const struct class *cls = class_by_id(c, type);
        if (!cls)
            return fail(r, "a constant pool of a class the metadata does not have");
        for (uint64_t j = 0; j < n; j++)
            if (!integer(r, 8, &key) || !pool_entry(c, r, cls, key))
                return false;
    }
    return true;
}

/* ---- events ---- */

static int kind_of(struct str name)
{
    static const char *const names[JFR_KINDS] = {
        [JFR_CPU] = "jdk.ExecutionSample",
        [JFR_ALLOC_IN_TLAB] = "jdk.ObjectAllocationInNewTLAB",
        [JFR_ALLOC_OUTSIDE] = "jdk.ObjectAllocationOutsideTLAB",
        [JFR_MONITOR] = "jdk.JavaMonitorEnter",
        [JFR_PARK] = "jdk.ThreadPark",
        [JFR_LIVE] = "profiler.LiveObject",
    };
    for (int k = 0; k < JFR_KINDS; k++)
        if (str_is(name, names[k]))
            return k;
    return -1;
}

static struct str symbol(const struct chunk *c, uint64_t key)
{
    uint32_t at;
    return key_map_get(&c->symbols, key, &at) ? c->strs[at] : (struct str){"", 0};
}

/* The frames of stack trace key, resolved, into *frames (grown). */
static uint32_t resolve(const struct chunk *c, uint64_t key, struct jfr_frame **frames,
                        size_t *cap)
{
    uint32_t at, m, k;
    if (!key_map_get(&c->stacks, key, &at))
        return 0;
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

/* One event of class cls: a sample when its kind is one profiles use. */
static bool event(struct chunk *c, struct rd *r, const struct class *cls, struct jfr_sample *s,
                  struct jfr_frame **frames, size_t *cap)
{
    int kind = kind_of(cls->name);
    int64_t stack = 0, value = 0, duration = 0, context = 0, state = 0;
    if (kind < 0)
        return false;
    for (size_t i = 0; i < cls->nfields; i++) {
        const struct field *f = &cls->fields[i];
        bool ok = str_is(f->name, "stackTrace")       ? scalar(c, r, f, &stack)
                  : str_is(f->name, "tlabSize")       ? scalar(c, r, f, &value)
                  : str_is(f->name, "allocationSize") ? scalar(c, r, f, &value)
                  : str_is(f->name, "duration")       ? scalar(c, r, f, &duration)
                  : str_is(f->name, "contextId")      ? scalar(c, r, f, &context)
                  : str_is(f->name, "state")          ? scalar(c, r, f, &state)
                                                      : skip_field(c, r, f, 0);
        if (!ok)
            return false;
    }
    uint32_t at;
    if (kind == JFR_CPU && key_map_get(&c->states, (uint64_t)state, &at) &&
        str_is(c->strs[at], "STATE_SLEEPING"))
        return false;   /* a thread asleep (async-profiler's wall mode) spends no CPU */
    if (kind == JFR_MONITOR || kind == JFR_PARK) {
        double nanos = c->ticks_per_second > 0 && duration > 0
                           ? (double)duration * 1e9 / (double)c->ticks_per_second
                           : 0;
        value = nanos < 9.2e18 ? (int64_t)nanos : INT64_MAX;
    }
    else if (kind == JFR_CPU || kind == JFR_LIVE)
        value = 0;
    *s = (struct jfr_sample){(enum jfr_kind)kind, NULL, 0, value, context};
    s->nframes = resolve(c, (uint64_t)stack, frames, cap);
    s->frames = *frames;
    return true;
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

/* Reads one chunk at r->p: pools, then events into fn. The number of
 * samples, or -1 with r's error set. */
static long read_chunk(struct rd *file, bool (*fn)(void *, const struct jfr_sample *), void *arg,
                       struct jfr_span *span)
{
    uint64_t magic = 0, version = 0, size = 0, cp_offset, meta_offset = 0, start = 0, duration = 0,
             ticks = 0, skip, flags = 0;
    struct chunk c = {.r = *file};
    c.r.base = file->p;
    c.r.compressed = false;
    if (!big_endian(&c.r, 4, &magic) || magic != 0x464c5200) {
        fail(file, "not a JFR chunk (no FLR magic)");
        return -1;
    }
    big_endian(&c.r, 4, &version);
    big_endian(&c.r, 8, &size);
    big_endian(&c.r, 8, &cp_offset);
    big_endian(&c.r, 8, &meta_offset);
    big_endian(&c.r, 8, &start);
    big_endian(&c.r, 8, &duration);
    big_endian(&c.r, 8, &skip);
    big_endian(&c.r, 8, &ticks);
    big_endian(&c.r, 4, &flags);
    if (c.r.err || version >> 16 != 2 || size < HEADER_SIZE ||
        size > (uint64_t)(file->end - file->p)) {
        fail(file, c.r.err ? c.r.err : version >> 16 != 2 ? "a JFR version other than 2"
                                                          : "a chunk size past the data");
        return -1;
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
    long samples = 0;
    struct jfr_frame *frames = NULL;
    size_t frames_cap = 0;
    if (read_metadata(&c, meta_offset)) {
        for (int pass = 0; pass < 2 && !c.r.err; pass++) {
            struct rd r = c.r, body;
            r.p = c.r.base + HEADER_SIZE;
            uint64_t type;
            while (r.p < r.end && record(&r, &body, &type)) {
                const struct class *cls = type > 1 ? class_by_id(&c, type) : NULL;
                struct jfr_sample s;
                if (pass == 0 && type == 1 && !read_pools(&c, &body))
                    r = body;   /* its error */
                else if (pass == 1 && cls && event(&c, &body, cls, &s, &frames, &frames_cap)) {
                    samples++;
                    if (!fn(arg, &s))
                        break;
                }
                if (body.err)
                    r = body;
            }
            if (r.err) {
                c.r.err = r.err;
                c.r.err_at = r.err_at;
            }
        }
    }
    free(frames);
    file->p = file->p + size;
    if (c.r.err) {
        file->err = c.r.err;
        file->err_at = (size_t)(c.r.base - file->base) + c.r.err_at;
    }
    chunk_free(&c);
    return file->err ? -1 : samples;
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
    long total = 0;
    while (file.p < file.end) {
        long n = read_chunk(&file, fn, arg, span);
        if (n < 0) {
            snprintf(why, whylen, "JFR: %s at byte %zu", file.err, file.err_at);
            return -1;
        }
        total += n;
    }
    return total;
}
