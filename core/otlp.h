// SPDX-License-Identifier: Apache-2.0
/*
 * OTLP profiles (opentelemetry.proto.profiles.v1development, wire format of
 * opentelemetry-proto v1.10.0/v1.11.0) <-> records holding the pprof-shaped
 * profile model.
 *
 * Decoding makes one record per (resource, scope, profile), except that
 * consecutive profiles of one scope that are columns of one pprof profile
 * (same time, duration, period and profile attributes, and sample for sample
 * the same stack, attributes and link) become one record with one sample type
 * per profile: that is how a multi-column pprof profile travels in OTLP, and
 * how the encoder below splits one.
 *
 * pprof facts OTLP has no field for travel as the attributes of the
 * OpenTelemetry semantic conventions: pprof.profile.comment / drop_frames /
 * keep_frames / doc_url, pprof.mapping.has_*, pprof.location.is_folded,
 * pprof.scope.default_sample_type, and the mapping's build-id as
 * process.executable.build_id.gnu (hex) or .go (anything else).
 */
#ifndef PROFD_OTLP_H
#define PROFD_OTLP_H

#include <stddef.h>
#include <stdint.h>

#include "profd/model.h"

/* What became of the profiles of one request. */
struct profd_otlp_result {
    size_t records;            /* records added to the batch */
    size_t rejected;           /* OTLP profiles refused (partial success) */
    char message[256];         /* why the first refused profile was refused */
};

/*
 * Decodes an ExportProfilesServiceRequest and appends its records to b, with
 * series labels from the resource attributes (OpenTelemetry names turned into
 * Prometheus ones: service.name -> service_name; service_name defaults to
 * unknown_service), __name__ from the sample types unless the resource names
 * it, time and duration. A profile that refers to something the dictionary
 * lacks is refused alone and counted in res. Returns 0, or -1 with err naming
 * the problem and its byte offset when the request as a whole is malformed
 * (then b is left as it was). Requests of v1.9.0 and older are refused with a
 * message naming the version where their field numbers tell. A pprof
 * original_payload may inflate to max_decoded bytes (0: 1 GiB).
 */
int profd_otlp_decode(const uint8_t *data, size_t len, size_t max_decoded, struct profd_batch *b,
                      struct profd_otlp_result *res, char *err, size_t errlen);

/*
 * Encodes records as one ExportProfilesServiceRequest with one dictionary of
 * deduplicated tables: per record one ResourceProfiles (series labels as
 * resource attributes) holding one ScopeProfiles with one Profile per sample
 * type. A record whose payload cannot be decoded is left out and counted in
 * *skipped, with err naming the first such problem. *out is malloc'd.
 */
void profd_otlp_encode(struct profd_record *const *records, size_t n, uint8_t **out,
                       size_t *len, size_t *skipped, char *err, size_t errlen);

#endif
