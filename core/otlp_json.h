// SPDX-License-Identifier: Apache-2.0
/* OTLP/JSON <-> the protobuf wire format of the profiles service's messages
 * (enum profd_otlp_message in plugin.h). */
#ifndef PROFD_OTLP_JSON_H
#define PROFD_OTLP_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "profd/plugin.h"

/* A message in OTLP JSON as protobuf bytes (malloc'd). 0, or -1 with err
 * naming the problem (the JSON position, or the field). */
int profd_otlp_from_json(enum profd_otlp_message which, const char *json, size_t len,
                         uint8_t **out, size_t *out_len, char *err, size_t errlen);

/* A message in protobuf as OTLP JSON (malloc'd, NUL-terminated; *out_len
 * without the NUL). Fields it cannot read are left out. */
char *profd_otlp_to_json(enum profd_otlp_message which, const uint8_t *data, size_t len,
                         size_t *out_len);

#endif
