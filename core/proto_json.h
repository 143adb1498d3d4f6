// SPDX-License-Identifier: Apache-2.0
/*
 * Protobuf's JSON mapping as a transcoder between JSON and the wire format,
 * driven by tables of the messages' fields (json_schemas.c), so the protobuf
 * decoders and encoders stay the only translation code. The rules of
 * proto3 JSON and OTLP: lowerCamelCase keys (the proto names are accepted
 * too), 64-bit integers as decimal strings (numbers accepted), bytes as
 * base64 (hex for OTLP's trace, span and profile ids), enums as integers,
 * unknown keys ignored.
 */
#ifndef PROFD_PROTO_JSON_H
#define PROFD_PROTO_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profd/plugin.h"

enum pj_kind { PJ_I32, PJ_U32, PJ_I64, PJ_U64, PJ_FIXED64, PJ_BOOL, PJ_DOUBLE, PJ_STRING,
               PJ_BYTES, PJ_HEX, PJ_MSG };

struct pj_field;
struct pj_message {
    const struct pj_field *fields;   /* ends with a zeroed entry */
};

struct pj_field {
    const char *json, *proto;   /* lowerCamelCase and proto names */
    uint32_t number;
    enum pj_kind kind;
    bool repeated;
    const struct pj_message *msg;   /* PJ_MSG only */
};

/* The table of a message; NULL for a value outside the enum. */
const struct pj_message *profd_json_schema(enum profd_message which);

/* A message in JSON as protobuf bytes (malloc'd). 0, or -1 with err naming
 * the problem (the JSON position, or the field). */
int profd_json_to_proto(enum profd_message which, const char *json, size_t len, uint8_t **out,
                        size_t *out_len, char *err, size_t errlen);

/* A message in protobuf as JSON (malloc'd, NUL-terminated; *out_len without
 * the NUL). Fields it cannot read are left out. */
char *profd_proto_to_json(enum profd_message which, const uint8_t *data, size_t len,
                          size_t *out_len);

#endif
