// SPDX-License-Identifier: Apache-2.0
/* The transcoder of proto_json.h. */
#include "proto_json.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/hex.h"
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

/* An integer from a JSON number or decimal string. */
static bool json_int(const json_t *v, bool is_signed, uint64_t *out)
{
    if (json_is_integer(v)) {
        *out = (uint64_t)json_integer_value(v);
        return true;
    }
    if (!json_is_string(v) || !json_string_length(v))
        return false;
    const char *s = json_string_value(v);
    char *end;
    *out = is_signed ? (uint64_t)strtoll(s, &end, 10) : strtoull(s, &end, 10);
    return *end == '\0' && (is_signed || s[0] != '-');
}

static bool json_hex(struct to_pb *t, const struct pj_field *f, const json_t *v)
{
    const char *s = json_string_value(v);
    size_t n = s ? strlen(s) : 0;
    if (!s || n % 2)
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

static bool json_base64(struct to_pb *t, const struct pj_field *f, const json_t *v)
{
    const char *s = json_string_value(v);
    if (!s)
        return bad(t, "%s: not a base64 string", f->json);
    size_t n = strlen(s);
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

static bool message_to_pb(struct to_pb *t, const struct pj_message *m, const json_t *obj, int depth);

/* One scalar or message value of field f. */
static bool value_to_pb(struct to_pb *t, const struct pj_field *f, const json_t *v, int depth)
{
    uint64_t n;
    switch (f->kind) {
    case PJ_I32: case PJ_I64: case PJ_U32: case PJ_U64: case PJ_FIXED64:
        if (!json_int(v, f->kind == PJ_I32 || f->kind == PJ_I64, &n))
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
        if (!json_is_boolean(v))
            return bad(t, "%s: not a boolean", f->json);
        pb_put_tag(&t->w, f->number, PB_VARINT);
        pb_put_varint(&t->w, json_is_true(v));
        return true;
    case PJ_DOUBLE: {
        double d;
        if (json_is_number(v))
            d = json_number_value(v);
        else if (json_is_string(v))
            d = strtod(json_string_value(v), NULL);   /* "NaN", "Infinity" */
        else
            return bad(t, "%s: not a number", f->json);
        pb_put_tag(&t->w, f->number, PB_I64);
        pb_writer_reserve(&t->w, 8);
        memcpy(t->w.buf + t->w.len, &d, 8);
        t->w.len += 8;
        return true;
    }
    case PJ_STRING:
        if (!json_is_string(v))
            return bad(t, "%s: not a string", f->json);
        pb_put_bytes_always(&t->w, f->number, json_string_value(v), json_string_length(v));
        return true;
    case PJ_BYTES:
        return json_base64(t, f, v);
    case PJ_HEX:
        return json_hex(t, f, v);
    case PJ_MSG: {
        if (!json_is_object(v))
            return bad(t, "%s: not an object", f->json);
        size_t mark = pb_begin(&t->w, f->number);
        if (!message_to_pb(t, f->msg, v, depth + 1))
            return false;
        pb_end(&t->w, mark);
        return true;
    }
    }
    return false;
}

static bool message_to_pb(struct to_pb *t, const struct pj_message *m, const json_t *obj, int depth)
{
    if (depth > 32)
        return bad(t, "nested too deeply");
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        const struct pj_field *f = m->fields;
        while (f->json && strcmp(key, f->json) && strcmp(key, f->proto))
            f++;
        if (!f->json || json_is_null(v))
            continue;   /* unknown keys are ignored */
        if (!f->repeated) {
            if (!value_to_pb(t, f, v, depth))
                return false;
            continue;
        }
        if (!json_is_array(v))
            return bad(t, "%s: not an array", f->json);
        size_t i;
        const json_t *item;
        json_array_foreach(v, i, item)
            if (!value_to_pb(t, f, item, depth))
                return false;
    }
    return true;
}

static int from_json(const struct pj_message *m, const char *json, size_t len, uint8_t **out,
                     size_t *out_len, char *err, size_t errlen)
{
    json_error_t je;
    json_t *root = json_loadb(json, len, JSON_DECODE_ANY, &je);
    if (!root) {
        snprintf(err, errlen, "JSON: %s at line %d column %d", je.text, je.line, je.column);
        return -1;
    }
    struct to_pb t = {.err = err, .errlen = errlen};
    char why[256] = "";
    t.err = why;
    t.errlen = sizeof(why);
    bool ok = json_is_object(root) ? message_to_pb(&t, m, root, 0)
                                   : bad(&t, "the request is not a JSON object");
    json_decref(root);
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
