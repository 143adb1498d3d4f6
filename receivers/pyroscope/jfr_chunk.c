// SPDX-License-Identifier: Apache-2.0
/* A JFR chunk's reads (integers, strings, records) and its metadata: the
 * tree of elements whose "class" elements, with their "field" children,
 * say how every record is laid out. */
#include "jfr_chunk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/grow.h"
#include "../../lib/utf8_valid.h"

bool jfr_fail(struct rd *r, const char *what)
{
    if (!r->err) {
        r->err = what;
        r->err_at = (size_t)(r->p - r->base);
    }
    r->p = r->end;
    return false;
}

bool jfr_byte(struct rd *r, uint8_t *v)
{
    if (r->p >= r->end)
        return jfr_fail(r, "truncated");
    *v = *r->p++;
    return true;
}

bool jfr_big_endian(struct rd *r, int n, uint64_t *v)
{
    if (r->end - r->p < n)
        return jfr_fail(r, "truncated");
    uint64_t x = 0;
    for (int i = 0; i < n; i++)
        x = x << 8 | *r->p++;
    *v = x;
    return true;
}

/* An integer of n bytes when not compressed. */
bool jfr_integer(struct rd *r, int n, uint64_t *v)
{
    if (!r->compressed)
        return jfr_big_endian(r, n, v);
    uint64_t x = 0;
    for (int i = 0; i < 9; i++) {
        uint8_t b;
        if (!jfr_byte(r, &b))
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
bool jfr_count(struct rd *r, uint64_t *n)
{
    if (!jfr_integer(r, 4, n))
        return false;
    return *n <= (uint64_t)(r->end - r->p) || jfr_fail(r, "a count past the record's end");
}

bool jfr_str_is(struct str s, const char *c)
{
    return s.len == strlen(c) && !memcmp(s.p, c, s.len);
}

const struct class *jfr_class_by_id(const struct chunk *c, uint64_t id)
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
        if (jfr_str_is(name, names[i]))
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

/* A string field: null (empty here), empty, a key into the String pool,
 * UTF-8, UTF-16 chars or Latin-1, the last two made UTF-8. */
bool jfr_string(struct chunk *c, struct rd *r, struct str *out)
{
    uint8_t enc;
    uint64_t n, key;
    uint32_t at;
    *out = (struct str){"", 0};
    if (!jfr_byte(r, &enc))
        return false;
    switch (enc) {
    case 0:
    case 1:
        return true;
    case 2:
        if (jfr_integer(r, 8, &key) && key_map_get(&c->strings, key, &at))
            *out = c->strs[at];
        return !r->err;
    case 3:
    case 5:
        if (!jfr_count(r, &n))
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
                len += utf8_encode(r->p[i], s + len);
            *out = keep(c, s, len);
        }
        r->p += n;
        return true;
    case 4: {
        if (!jfr_count(r, &n))
            return false;
        char *s = must_malloc(3 * n + 1);
        size_t len = 0;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t ch;
            if (!jfr_integer(r, 2, &ch)) {
                free(s);
                return false;
            }
            len += utf8_encode((uint32_t)(ch & 0xffff), s + len);
        }
        *out = keep(c, s, len);
        return true;
    }
    default:
        return jfr_fail(r, "a string of an unknown encoding");
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
    if (!jfr_integer(r, 4, &i))
        return false;
    if (i >= c->nmeta_strings)
        return jfr_fail(r, "a metadata string index past the table");
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
    if (depth > JFR_MAX_DEPTH)
        return jfr_fail(r, "metadata nested too deep");
    if (!meta_string(c, r, &name) || !jfr_count(r, &nattrs))
        return false;
    for (uint64_t i = 0; i < nattrs; i++) {
        if (!meta_string(c, r, &key) || !meta_string(c, r, &value))
            return false;
        struct str *slot = jfr_str_is(key, "name")           ? &attr_name
                           : jfr_str_is(key, "id")           ? &id
                           : jfr_str_is(key, "class")        ? &type
                           : jfr_str_is(key, "constantPool") ? &cp
                           : jfr_str_is(key, "dimension")    ? &dim
                                                         : NULL;
        if (slot)
            *slot = value;
    }
    struct class *cls = owner;
    if (jfr_str_is(name, "class")) {
        uint64_t class_id;
        if (!decimal(id, &class_id))
            return jfr_fail(r, "a metadata class without a numeric id");
        c->classes = grow_array(c->classes, &c->classes_cap, c->nclasses + 1, sizeof(*c->classes));
        cls = &c->classes[c->nclasses++];
        *cls = (struct class){.id = class_id, .name = attr_name, .prim = prim_of(attr_name)};
    } else if (jfr_str_is(name, "field") && owner) {
        struct field f = {.name = attr_name, .cp = jfr_str_is(cp, "true"), .array = jfr_str_is(dim, "1")};
        if (!decimal(type, &f.type))
            return jfr_fail(r, "a metadata field without a numeric class");
        owner->fields = grow_array(owner->fields, &owner->cap, owner->nfields + 1, sizeof(f));
        owner->fields[owner->nfields++] = f;
    }
    if (!jfr_count(r, &nchildren))
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
bool jfr_record(struct rd *r, struct rd *body, uint64_t *type)
{
    const uint8_t *start = r->p;
    uint64_t size;
    if (!jfr_integer(r, 4, &size))
        return false;
    if (size < (uint64_t)(r->p - start) || size > (uint64_t)(r->end - start))
        return jfr_fail(r, "a record's size past its chunk");
    *body = *r;
    body->end = start + size;
    r->p = start + size;
    return jfr_integer(body, 8, type);
}

bool jfr_read_metadata(struct chunk *c, uint64_t offset)
{
    struct rd all = c->r, body;
    uint64_t type, skip, n;
    if (offset < JFR_HEADER_SIZE || offset >= (uint64_t)(c->r.end - c->r.base))
        return jfr_fail(&c->r, "the metadata offset is past the chunk");
    all.p = c->r.base + offset;
    if (!jfr_record(&all, &body, &type) || type != 0) {
        c->r.err = all.err ? all.err : "no metadata where the header says";
        c->r.err_at = offset;
        return false;
    }
    for (int i = 0; i < 3; i++)   /* start time, duration, metadata id */
        jfr_integer(&body, 8, &skip);
    if (!jfr_count(&body, &n)) {
        c->r.err = body.err;
        c->r.err_at = body.err_at;
        return false;
    }
    c->meta_strings = must_malloc(n * sizeof(*c->meta_strings));
    c->nmeta_strings = 0;
    for (uint64_t i = 0; i < n && jfr_string(c, &body, &c->meta_strings[i]); i++)
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

