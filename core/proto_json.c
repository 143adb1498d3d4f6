// SPDX-License-Identifier: Apache-2.0
/* The transcoder of proto_json.h. */
#include "proto_json.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/hex.h"
#include "../lib/json_pull.h"
#include "alloc.h"
#include "base64.h"
#include "pb.h"

static uint32_t wire_of(const struct pj_field *f)
{
    switch (f->kind) {
    case PJ_FIXED64: case PJ_DOUBLE: return PB_I64;
    case PJ_STRING: case PJ_BYTES: case PJ_HEX: case PJ_MSG: return PB_LEN;
    default: return PB_VARINT;
    }
}

static bool packable(const struct pj_field *f)
{
    return f->repeated && wire_of(f) != PB_LEN;
}

/* --- JSON -> protobuf ----------------------------------------------------------------- */

struct to_pb {
    struct pb_writer w;
    struct json_pull *j;   /* the request, read as it is transcoded */
    char *err;
    size_t errlen;
};

__attribute__((format(printf, 2, 3))) static bool bad(struct to_pb *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->err, t->errlen, fmt, ap);
    va_end(ap);
    return false;
}

/* An integer from the JSON number or decimal string at the cursor. */
static bool json_int(struct json_pull *j, bool is_signed, uint64_t *out)
{
    int64_t v;
    if (json_pull_kind(j) == JSON_PULL_NUMBER) {
        if (!json_pull_integer(j, &v))
            return false;
        *out = (uint64_t)v;
        return true;
    }
    const char *s;
    size_t len;
    if (!json_pull_string(j, &s, &len) || !len)
        return false;
    char *end;
    *out = is_signed ? (uint64_t)strtoll(s, &end, 10) : strtoull(s, &end, 10);
    return *end == '\0' && (is_signed || s[0] != '-');
}

static bool json_hex(struct to_pb *t, const struct pj_field *f)
{
    const char *s;
    size_t n;
    if (!json_pull_string(t->j, &s, &n) || n % 2)
        return bad(t, "%s: not a hex string", f->json);
    uint8_t buf[64];
    if (n / 2 > sizeof(buf))
        return bad(t, "%s: longer than %zu bytes", f->json, sizeof(buf));
    for (size_t i = 0; i < n / 2; i++) {
        int x = hex_byte(s + 2 * i);
        if (x < 0)
            return bad(t, "%s: not a hex string", f->json);
        buf[i] = (uint8_t)x;
    }
    pb_put_bytes_always(&t->w, f->number, buf, n / 2);
    return true;
}

static bool json_base64(struct to_pb *t, const struct pj_field *f)
{
    const char *s;
    size_t n;
    if (!json_pull_string(t->j, &s, &n))
        return bad(t, "%s: not a base64 string", f->json);
    uint8_t *buf = profd_xmalloc(n / 4 * 3 + 2);
    ssize_t got = profd_base64_decode(buf, s, n);
    if (got < 0) {
        free(buf);
        return bad(t, "%s: not a base64 string", f->json);
    }
    pb_put_bytes_always(&t->w, f->number, buf, (size_t)got);
    free(buf);
    return true;
}

static bool message_to_pb(struct to_pb *t, const struct pj_message *m, int depth);

/* The double of the JSON number at the cursor, or of a string ("NaN",
 * "Infinity"). */
static bool json_double(struct json_pull *j, double *d)
{
    const char *s;
    if (json_pull_kind(j) == JSON_PULL_NUMBER)
        return json_pull_number(j, d);
    if (!json_pull_string(j, &s, NULL))
        return false;
    *d = strtod(s, NULL);
    return true;
}

/* One scalar or message value of field f, the one at the cursor. */
static bool value_to_pb(struct to_pb *t, const struct pj_field *f, int depth)
{
    struct json_pull *j = t->j;
    enum json_pull_kind kind = json_pull_kind(j);
    const char *s;
    size_t len;
    uint64_t n;
    switch (f->kind) {
    case PJ_I32: case PJ_I64: case PJ_U32: case PJ_U64: case PJ_FIXED64:
        if (!json_int(j, f->kind == PJ_I32 || f->kind == PJ_I64, &n))
            return bad(t, "%s: not an integer", f->json);
        if (f->kind == PJ_I32)
            n = (uint64_t)(int64_t)(int32_t)n;   /* negative int32s take 10 bytes */
        if (f->kind == PJ_FIXED64) {
            pb_put_tag(&t->w, f->number, PB_I64);
            pb_writer_reserve(&t->w, 8);
            memcpy(t->w.buf + t->w.len, &n, 8);
            t->w.len += 8;
        } else {
            pb_put_tag(&t->w, f->number, PB_VARINT);
            pb_put_varint(&t->w, n);
        }
        return true;
    case PJ_BOOL:
        if (kind != JSON_PULL_TRUE && kind != JSON_PULL_FALSE)
            return bad(t, "%s: not a boolean", f->json);
        json_pull_skip(j);
        pb_put_tag(&t->w, f->number, PB_VARINT);
        pb_put_varint(&t->w, kind == JSON_PULL_TRUE);
        return true;
    case PJ_DOUBLE: {
        double d;
        if (!json_double(j, &d))
            return bad(t, "%s: not a number", f->json);
        pb_put_tag(&t->w, f->number, PB_I64);
        pb_writer_reserve(&t->w, 8);
        memcpy(t->w.buf + t->w.len, &d, 8);
        t->w.len += 8;
        return true;
    }
    case PJ_STRING:
        if (!json_pull_string(j, &s, &len))
            return bad(t, "%s: not a string", f->json);
        pb_put_bytes_always(&t->w, f->number, s, len);
        return true;
    case PJ_BYTES:
        return json_base64(t, f);
    case PJ_HEX:
        return json_hex(t, f);
    case PJ_MSG: {
        if (kind != JSON_PULL_OBJECT)
            return bad(t, "%s: not an object", f->json);
        size_t mark = pb_begin(&t->w, f->number);
        if (!json_pull_object(j) || !message_to_pb(t, f->msg, depth + 1))
            return false;
        pb_end(&t->w, mark);
        return true;
    }
    }
    return false;
}

/* The members of the object entered, as message m's fields. */
static bool message_to_pb(struct to_pb *t, const struct pj_message *m, int depth)
{
    if (depth > 32)
        return bad(t, "nested too deeply");
    struct json_pull *j = t->j;
    const char *key;
    while (json_pull_member(j, &key)) {
        const struct pj_field *f = m->fields;
        while (f->json && strcmp(key, f->json) && strcmp(key, f->proto))
            f++;
        if (!f->json || json_pull_kind(j) == JSON_PULL_NULL) {
            json_pull_skip(j);   /* unknown keys are ignored */
            continue;
        }
        if (!f->repeated) {
            if (!value_to_pb(t, f, depth))
                return false;
            continue;
        }
        if (json_pull_kind(j) != JSON_PULL_ARRAY)
            return bad(t, "%s: not an array", f->json);
        json_pull_array(j);
        while (json_pull_element(j))
            if (!value_to_pb(t, f, depth))
                return false;
    }
    return !json_pull_failed(j);
}

/* Transcodes the request as it is read, with no tree of it: what it costs
 * beside its own bytes is the protobuf made. */
static int from_json(const struct pj_message *m, const char *json, size_t len, uint8_t **out,
                     size_t *out_len, char *err, size_t errlen)
{
    struct json_pull j;
    json_pull_init(&j, json, len);
    char why[256] = "";
    struct to_pb t = {.j = &j, .err = why, .errlen = sizeof(why)};
    bool ok;
    if (json_pull_kind(&j) == JSON_PULL_OBJECT)
        ok = json_pull_object(&j) && message_to_pb(&t, m, 0) && json_pull_end(&j);
    else
        ok = json_pull_skip(&j) && json_pull_end(&j) &&
             bad(&t, "the request is not a JSON object");
    if (json_pull_failed(&j))
        json_pull_error(&j, why, sizeof(why));
    json_pull_free(&j);
    if (!ok) {
        snprintf(err, errlen, "JSON: %s", why);
        free(t.w.buf);
        return -1;
    }
    *out = t.w.buf ? t.w.buf : profd_xmalloc(1);
    *out_len = t.w.len;
    return 0;
}

int profd_json_to_proto(enum profd_message which, const char *json, size_t len, uint8_t **out,
                        size_t *out_len, char *err, size_t errlen)
{
    return from_json(profd_json_schema(which), json, len, out, out_len, err, errlen);
}

/* --- protobuf -> JSON ----------------------------------------------------------------- */

static json_t *message_to_json(const struct pj_message *m, const uint8_t *data, size_t len,
                               int depth);

static json_t *scalar_json(const struct pj_field *f, uint64_t v)
{
    char buf[32];
    switch (f->kind) {
    case PJ_I32: return json_integer((int32_t)v);
    case PJ_U32: return json_integer((uint32_t)v);
    case PJ_BOOL: return json_boolean(v != 0);
    case PJ_I64: snprintf(buf, sizeof(buf), "%lld", (long long)v); return json_string(buf);
    case PJ_DOUBLE: {
        double d;
        memcpy(&d, &v, 8);
        return json_real(d);
    }
    default: snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v); return json_string(buf);
    }
}

static json_t *bytes_json(const struct pj_field *f, const uint8_t *data, size_t len, int depth)
{
    static const char hex[] = "0123456789abcdef";
    switch (f->kind) {
    case PJ_STRING:
        return json_stringn_nocheck((const char *)data, len);
    case PJ_HEX: {
        char *s = profd_xmalloc(2 * len + 1);
        for (size_t i = 0; i < len; i++) {
            s[2 * i] = hex[data[i] >> 4];
            s[2 * i + 1] = hex[data[i] & 15];
        }
        json_t *j = json_stringn(s, 2 * len);
        free(s);
        return j;
    }
    case PJ_BYTES: {
        char *s = profd_xmalloc(profd_base64_length(len) + 1);
        json_t *j = json_stringn(s, profd_base64_encode(s, data, len));
        free(s);
        return j;
    }
    case PJ_MSG:
        return message_to_json(f->msg, data, len, depth + 1);
    default:
        return NULL;
    }
}

static void add_value(json_t *obj, const struct pj_field *f, json_t *v)
{
    if (!v)
        return;
    if (!f->repeated) {
        json_object_set_new_nocheck(obj, f->json, v);
        return;
    }
    json_t *arr = json_object_get(obj, f->json);
    if (!arr) {
        arr = json_array();
        json_object_set_new_nocheck(obj, f->json, arr);
    }
    json_array_append_new(arr, v);
}

static json_t *message_to_json(const struct pj_message *m, const uint8_t *data, size_t len,
                               int depth)
{
    json_t *obj = json_object();
    if (depth > 32)
        return obj;
    struct pb_reader r;
    pb_reader_init(&r, data, data, len);
    struct pb_field pf = {0};
    const char *why;
    while (pb_next(&r, &pf, &why) > 0) {
        const struct pj_field *f = m->fields;
        while (f->json && f->number != pf.number)
            f++;
        if (!f->json)
            continue;
        if (pf.wire == PB_LEN && packable(f)) {   /* a packed list */
            struct pb_reader lr;
            pb_reader_init(&lr, pf.data, pf.data, pf.len);
            while (lr.p < lr.end) {
                uint64_t v = 0;
                if (wire_of(f) == PB_I64) {
                    if (lr.end - lr.p < 8)
                        break;
                    memcpy(&v, lr.p, 8);
                    lr.p += 8;
                } else if (!pb_varint(&lr, &v)) {
                    break;
                }
                add_value(obj, f, scalar_json(f, v));
            }
        } else if (pf.wire == wire_of(f)) {
            add_value(obj, f, pf.wire == PB_LEN ? bytes_json(f, pf.data, pf.len, depth)
                                                : scalar_json(f, pf.value));
        }
    }
    return obj;
}

static char *to_json(const struct pj_message *m, const uint8_t *data, size_t len, size_t *out_len)
{
    if (!data)   /* an empty message may come as no buffer at all */
        data = (const uint8_t *)"";
    json_t *obj = message_to_json(m, data, len, 0);
    char *s = json_dumps(obj, JSON_COMPACT);
    json_decref(obj);
    if (!s)
        profd_out_of_memory(len);
    *out_len = strlen(s);
    return s;
}

char *profd_proto_to_json(enum profd_message which, const uint8_t *data, size_t len,
                          size_t *out_len)
{
    return to_json(profd_json_schema(which), data, len, out_len);
}
