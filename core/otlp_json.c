// SPDX-License-Identifier: Apache-2.0
/*
 * OTLP's JSON encoding, as a transcoder between JSON and the protobuf wire
 * format driven by a table of the messages' fields, so the protobuf decoder
 * and encoder stay the only translation code. OTLP's rules: lowerCamelCase
 * keys (the proto names are accepted too), 64-bit integers as decimal
 * strings (numbers accepted), traceId/spanId/profileId as hex, other bytes
 * as base64, enums as integers, unknown keys ignored.
 */
#include "otlp_json.h"

#include <jansson.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "pb.h"

enum kind { K_I32, K_U32, K_I64, K_U64, K_FIXED64, K_BOOL, K_DOUBLE, K_STRING, K_BYTES, K_HEX,
            K_MSG };

struct field;
struct message {
    const struct field *fields;
};

struct field {
    const char *json, *proto;   /* lowerCamelCase and proto names */
    uint32_t number;
    enum kind kind;
    bool repeated;
    const struct message *msg;
};

#define F(j, p, n, k) {j, p, n, k, false, NULL}
#define R(j, p, n, k) {j, p, n, k, true, NULL}
#define M(j, p, n, m) {j, p, n, K_MSG, false, &m}
#define RM(j, p, n, m) {j, p, n, K_MSG, true, &m}

static const struct message any_value, key_value;
static const struct field array_value_f[] = {RM("values", "values", 1, any_value), {0}};
static const struct message array_value = {array_value_f};
static const struct field kvlist_f[] = {RM("values", "values", 1, key_value), {0}};
static const struct message kvlist = {kvlist_f};
static const struct field any_value_f[] = {
    F("stringValue", "string_value", 1, K_STRING), F("boolValue", "bool_value", 2, K_BOOL),
    F("intValue", "int_value", 3, K_I64), F("doubleValue", "double_value", 4, K_DOUBLE),
    M("arrayValue", "array_value", 5, array_value), M("kvlistValue", "kvlist_value", 6, kvlist),
    F("bytesValue", "bytes_value", 7, K_BYTES),
    F("stringValueStrindex", "string_value_strindex", 8, K_I32), {0}};
static const struct message any_value = {any_value_f};
static const struct field key_value_f[] = {
    F("key", "key", 1, K_STRING), M("value", "value", 2, any_value),
    F("keyStrindex", "key_strindex", 3, K_I32), {0}};
static const struct message key_value = {key_value_f};
static const struct field entity_ref_f[] = {
    F("schemaUrl", "schema_url", 1, K_STRING), F("type", "type", 2, K_STRING),
    R("idKeys", "id_keys", 3, K_STRING), R("descriptionKeys", "description_keys", 4, K_STRING),
    {0}};
static const struct message entity_ref = {entity_ref_f};
static const struct field resource_f[] = {
    RM("attributes", "attributes", 1, key_value),
    F("droppedAttributesCount", "dropped_attributes_count", 2, K_U32),
    RM("entityRefs", "entity_refs", 3, entity_ref), {0}};
static const struct message resource = {resource_f};
static const struct field scope_f[] = {
    F("name", "name", 1, K_STRING), F("version", "version", 2, K_STRING),
    RM("attributes", "attributes", 3, key_value),
    F("droppedAttributesCount", "dropped_attributes_count", 4, K_U32), {0}};
static const struct message scope = {scope_f};
static const struct field value_type_f[] = {
    F("typeStrindex", "type_strindex", 1, K_I32), F("unitStrindex", "unit_strindex", 2, K_I32),
    {0}};
static const struct message value_type = {value_type_f};
static const struct field sample_f[] = {
    F("stackIndex", "stack_index", 1, K_I32),
    R("attributeIndices", "attribute_indices", 2, K_I32), F("linkIndex", "link_index", 3, K_I32),
    R("values", "values", 4, K_I64), R("timestampsUnixNano", "timestamps_unix_nano", 5, K_FIXED64),
    {0}};
static const struct message sample = {sample_f};
static const struct field profile_f[] = {
    M("sampleType", "sample_type", 1, value_type), RM("samples", "samples", 2, sample),
    F("timeUnixNano", "time_unix_nano", 3, K_FIXED64), F("durationNano", "duration_nano", 4, K_U64),
    M("periodType", "period_type", 5, value_type), F("period", "period", 6, K_I64),
    F("profileId", "profile_id", 7, K_HEX),
    F("droppedAttributesCount", "dropped_attributes_count", 8, K_U32),
    F("originalPayloadFormat", "original_payload_format", 9, K_STRING),
    F("originalPayload", "original_payload", 10, K_BYTES),
    R("attributeIndices", "attribute_indices", 11, K_I32), {0}};
static const struct message profile = {profile_f};
static const struct field scope_profiles_f[] = {
    M("scope", "scope", 1, scope), RM("profiles", "profiles", 2, profile),
    F("schemaUrl", "schema_url", 3, K_STRING), {0}};
static const struct message scope_profiles = {scope_profiles_f};
static const struct field resource_profiles_f[] = {
    M("resource", "resource", 1, resource), RM("scopeProfiles", "scope_profiles", 2, scope_profiles),
    F("schemaUrl", "schema_url", 3, K_STRING), {0}};
static const struct message resource_profiles = {resource_profiles_f};
static const struct field mapping_f[] = {
    F("memoryStart", "memory_start", 1, K_U64), F("memoryLimit", "memory_limit", 2, K_U64),
    F("fileOffset", "file_offset", 3, K_U64), F("filenameStrindex", "filename_strindex", 4, K_I32),
    R("attributeIndices", "attribute_indices", 5, K_I32), {0}};
static const struct message mapping = {mapping_f};
static const struct field line_f[] = {
    F("functionIndex", "function_index", 1, K_I32), F("line", "line", 2, K_I64),
    F("column", "column", 3, K_I64), {0}};
static const struct message line = {line_f};
static const struct field location_f[] = {
    F("mappingIndex", "mapping_index", 1, K_I32), F("address", "address", 2, K_U64),
    RM("lines", "lines", 3, line), R("attributeIndices", "attribute_indices", 4, K_I32), {0}};
static const struct message location = {location_f};
static const struct field function_f[] = {
    F("nameStrindex", "name_strindex", 1, K_I32),
    F("systemNameStrindex", "system_name_strindex", 2, K_I32),
    F("filenameStrindex", "filename_strindex", 3, K_I32), F("startLine", "start_line", 4, K_I64),
    {0}};
static const struct message function = {function_f};
static const struct field link_f[] = {
    F("traceId", "trace_id", 1, K_HEX), F("spanId", "span_id", 2, K_HEX), {0}};
static const struct message link = {link_f};
static const struct field kvu_f[] = {
    F("keyStrindex", "key_strindex", 1, K_I32), M("value", "value", 2, any_value),
    F("unitStrindex", "unit_strindex", 3, K_I32), {0}};
static const struct message kvu = {kvu_f};
static const struct field stack_f[] = {
    R("locationIndices", "location_indices", 1, K_I32), {0}};
static const struct message stack = {stack_f};
static const struct field dictionary_f[] = {
    RM("mappingTable", "mapping_table", 1, mapping), RM("locationTable", "location_table", 2, location),
    RM("functionTable", "function_table", 3, function), RM("linkTable", "link_table", 4, link),
    R("stringTable", "string_table", 5, K_STRING),
    RM("attributeTable", "attribute_table", 6, kvu), RM("stackTable", "stack_table", 7, stack),
    {0}};
static const struct message dictionary = {dictionary_f};
static const struct field request_f[] = {
    RM("resourceProfiles", "resource_profiles", 1, resource_profiles),
    M("dictionary", "dictionary", 2, dictionary), {0}};
static const struct message request = {request_f};
static const struct field partial_f[] = {
    F("rejectedProfiles", "rejected_profiles", 1, K_I64),
    F("errorMessage", "error_message", 2, K_STRING), {0}};
static const struct message partial = {partial_f};
static const struct field response_f[] = {M("partialSuccess", "partial_success", 1, partial), {0}};
static const struct message response = {response_f};

static uint32_t wire_of(const struct field *f)
{
    switch (f->kind) {
    case K_FIXED64: case K_DOUBLE: return PB_I64;
    case K_STRING: case K_BYTES: case K_HEX: case K_MSG: return PB_LEN;
    default: return PB_VARINT;
    }
}

static bool packable(const struct field *f)
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

static bool json_hex(struct to_pb *t, const struct field *f, const json_t *v)
{
    const char *s = json_string_value(v);
    size_t n = s ? strlen(s) : 0;
    if (!s || n % 2)
        return bad(t, "%s: not a hex string", f->json);
    uint8_t buf[64];
    if (n / 2 > sizeof(buf))
        return bad(t, "%s: longer than %zu bytes", f->json, sizeof(buf));
    for (size_t i = 0; i < n / 2; i++) {
        unsigned x;
        if (sscanf(s + 2 * i, "%2x", &x) != 1)
            return bad(t, "%s: not a hex string", f->json);
        buf[i] = (uint8_t)x;
    }
    pb_put_bytes_always(&t->w, f->number, buf, n / 2);
    return true;
}

static bool json_base64(struct to_pb *t, const struct field *f, const json_t *v)
{
    const char *s = json_string_value(v);
    if (!s)
        return bad(t, "%s: not a base64 string", f->json);
    size_t n = strlen(s);
    uint8_t *buf = profd_xmalloc(n / 4 * 3 + 4);
    int got = n ? EVP_DecodeBlock(buf, (const unsigned char *)s, (int)n) : 0;
    if (got < 0 || n % 4) {
        free(buf);
        return bad(t, "%s: not a base64 string", f->json);
    }
    while (n && s[n - 1] == '=' && got > 0)   /* EVP_DecodeBlock counts padding as zeros */
        n--, got--;
    pb_put_bytes_always(&t->w, f->number, buf, (size_t)got);
    free(buf);
    return true;
}

static bool message_to_pb(struct to_pb *t, const struct message *m, const json_t *obj, int depth);

/* One scalar or message value of field f. */
static bool value_to_pb(struct to_pb *t, const struct field *f, const json_t *v, int depth)
{
    uint64_t n;
    switch (f->kind) {
    case K_I32: case K_I64: case K_U32: case K_U64: case K_FIXED64:
        if (!json_int(v, f->kind == K_I32 || f->kind == K_I64, &n))
            return bad(t, "%s: not an integer", f->json);
        if (f->kind == K_I32)
            n = (uint64_t)(int64_t)(int32_t)n;   /* negative int32s take 10 bytes */
        if (f->kind == K_FIXED64) {
            pb_put_tag(&t->w, f->number, PB_I64);
            pb_writer_reserve(&t->w, 8);
            memcpy(t->w.buf + t->w.len, &n, 8);
            t->w.len += 8;
        } else {
            pb_put_tag(&t->w, f->number, PB_VARINT);
            pb_put_varint(&t->w, n);
        }
        return true;
    case K_BOOL:
        if (!json_is_boolean(v))
            return bad(t, "%s: not a boolean", f->json);
        pb_put_tag(&t->w, f->number, PB_VARINT);
        pb_put_varint(&t->w, json_is_true(v));
        return true;
    case K_DOUBLE: {
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
    case K_STRING:
        if (!json_is_string(v))
            return bad(t, "%s: not a string", f->json);
        pb_put_bytes_always(&t->w, f->number, json_string_value(v), json_string_length(v));
        return true;
    case K_BYTES:
        return json_base64(t, f, v);
    case K_HEX:
        return json_hex(t, f, v);
    case K_MSG: {
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

static bool message_to_pb(struct to_pb *t, const struct message *m, const json_t *obj, int depth)
{
    if (depth > 32)
        return bad(t, "nested too deeply");
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        const struct field *f = m->fields;
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

static int from_json(const struct message *m, const char *json, size_t len, uint8_t **out,
                     size_t *out_len, char *err, size_t errlen)
{
    json_error_t je;
    json_t *root = json_loadb(json, len, JSON_DECODE_ANY, &je);
    if (!root) {
        snprintf(err, errlen, "otlp: JSON: %s at line %d column %d", je.text, je.line, je.column);
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
        snprintf(err, errlen, "otlp: JSON: %s", why);
        free(t.w.buf);
        return -1;
    }
    *out = t.w.buf ? t.w.buf : profd_xmalloc(1);
    *out_len = t.w.len;
    return 0;
}

int profd_otlp_from_json(enum profd_otlp_message which, const char *json, size_t len,
                         uint8_t **out, size_t *out_len, char *err, size_t errlen)
{
    return from_json(which == PROFD_OTLP_REQUEST ? &request : &response, json, len, out, out_len,
                     err, errlen);
}

/* --- protobuf -> JSON ----------------------------------------------------------------- */

static json_t *message_to_json(const struct message *m, const uint8_t *data, size_t len,
                               int depth);

static json_t *scalar_json(const struct field *f, uint64_t v)
{
    char buf[32];
    switch (f->kind) {
    case K_I32: return json_integer((int32_t)v);
    case K_U32: return json_integer((uint32_t)v);
    case K_BOOL: return json_boolean(v != 0);
    case K_I64: snprintf(buf, sizeof(buf), "%lld", (long long)v); return json_string(buf);
    case K_DOUBLE: {
        double d;
        memcpy(&d, &v, 8);
        return json_real(d);
    }
    default: snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v); return json_string(buf);
    }
}

static json_t *bytes_json(const struct field *f, const uint8_t *data, size_t len, int depth)
{
    static const char hex[] = "0123456789abcdef";
    switch (f->kind) {
    case K_STRING:
        return json_stringn_nocheck((const char *)data, len);
    case K_HEX: {
        char *s = profd_xmalloc(2 * len + 1);
        for (size_t i = 0; i < len; i++) {
            s[2 * i] = hex[data[i] >> 4];
            s[2 * i + 1] = hex[data[i] & 15];
        }
        json_t *j = json_stringn(s, 2 * len);
        free(s);
        return j;
    }
    case K_BYTES: {
        char *s = profd_xmalloc(4 * ((len + 2) / 3) + 1);
        int n = EVP_EncodeBlock((unsigned char *)s, data, (int)len);
        json_t *j = json_stringn(s, (size_t)n);
        free(s);
        return j;
    }
    case K_MSG:
        return message_to_json(f->msg, data, len, depth + 1);
    default:
        return NULL;
    }
}

static void add_value(json_t *obj, const struct field *f, json_t *v)
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

static json_t *message_to_json(const struct message *m, const uint8_t *data, size_t len,
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
        const struct field *f = m->fields;
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

static char *to_json(const struct message *m, const uint8_t *data, size_t len, size_t *out_len)
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

char *profd_otlp_to_json(enum profd_otlp_message which, const uint8_t *data, size_t len,
                         size_t *out_len)
{
    return to_json(which == PROFD_OTLP_REQUEST ? &request : &response, data, len, out_len);
}
