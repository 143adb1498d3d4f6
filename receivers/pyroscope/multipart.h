// SPDX-License-Identifier: Apache-2.0
/* The multipart/form-data body Pyroscope's SDKs send to /ingest: fields
 * `profile`, optional `prev_profile` (a cumulative profile's previous
 * state) and optional `sample_type_config` (JSON). */
#ifndef PROFD_PYROSCOPE_MULTIPART_H
#define PROFD_PYROSCOPE_MULTIPART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profd/plugin.h"

/* One form field: its name and bytes, pointing into the body. */
struct form_field {
    const char *name;
    size_t name_len;
    const uint8_t *data;
    size_t len;
};

/*
 * Finds the field called name in a multipart body whose Content-Type is
 * content_type (which carries the boundary). Returns 1 and fills *out when
 * found, 0 when the body has no such field, -1 when the body is malformed
 * (why set).
 */
int multipart_field(const char *content_type, const uint8_t *body, size_t len, const char *name,
                    struct form_field *out, char *why, size_t whylen);

/*
 * The record of an SDK's multipart upload, added to b: the `profile`, and
 * when `prev_profile` came, its delta against it in the cumulative sample
 * types (those `sample_type_config` marks "cumulative": true, else alloc_*,
 * contentions and delay); then the config's "display-name" and "units"
 * rename the types. False with why set when a part is missing or is not
 * pprof (or inflates past max_decoded bytes), or the config is not a JSON
 * object.
 */
bool multipart_record(const struct profd_host *host, const char *content_type,
                      const uint8_t *body, size_t len, size_t max_decoded, struct profd_batch *b,
                      char *why, size_t whylen);

#endif
