// SPDX-License-Identifier: Apache-2.0
#include "status.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for a tag, a length and a message of up to 256 bytes, twice. */
#define MAX_BODY 600

static size_t put_varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

static size_t put_string(uint8_t *out, unsigned field, const char *s)
{
    size_t len = strlen(s), n = put_varint(out, (uint64_t)field << 3 | 2);
    n += put_varint(out + n, len);
    memcpy(out + n, s, len);
    return n + len;
}

/* {"code":N,"message":"..."} with the message escaped for JSON. */
static void status_json(struct profd_rpc_response *res, int code)
{
    res->content_type = "application/json";
    res->body = malloc(64 + 6 * sizeof(res->message));
    if (!res->body)
        return;
    char *o = (char *)res->body;
    o += sprintf(o, "{\"code\":%d,\"message\":\"", code);
    for (const unsigned char *p = (const unsigned char *)res->message; *p; p++) {
        if (*p == '"' || *p == '\\')
            *o++ = '\\', *o++ = (char)*p;
        else if (*p < 0x20)
            o += sprintf(o, "\\u%04x", *p);
        else
            *o++ = (char)*p;
    }
    o += sprintf(o, "\"}");
    res->len = (size_t)(o - (char *)res->body);
}

void status_error(struct profd_rpc_response *res, enum answer_format format, int code,
                  int http_status)
{
    if (format == ANSWER_GRPC) {
        res->grpc_status = code;
        return;
    }
    res->http_status = http_status;
    if (format == ANSWER_JSON)
        return status_json(res, code);
    res->content_type = "application/x-protobuf";
    res->body = malloc(MAX_BODY);
    if (!res->body)
        return;
    size_t n = put_varint(res->body, 1 << 3);
    n += put_varint(res->body + n, (uint64_t)code);
    res->len = n + put_string(res->body + n, 2, res->message);
}

void export_response(struct profd_rpc_response *res, size_t rejected, const char *message)
{
    if (!rejected)
        return;
    uint8_t inner[MAX_BODY / 2];
    size_t n = put_varint(inner, 1 << 3);
    n += put_varint(inner + n, rejected);
    n += put_string(inner + n, 2, message);
    res->body = malloc(MAX_BODY);
    if (!res->body)
        return;
    size_t m = put_varint(res->body, 1 << 3 | 2);
    m += put_varint(res->body + m, n);
    memcpy(res->body + m, inner, n);
    res->len = m + n;
}
