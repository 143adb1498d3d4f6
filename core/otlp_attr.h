// SPDX-License-Identifier: Apache-2.0
/*
 * OTLP attributes <-> the pprof model and series labels: the semantic
 * convention keys that carry pprof facts OTLP has no field for, resource
 * attributes as Prometheus-style series labels, and the profile's __name__.
 */
#ifndef PROFD_OTLP_ATTR_H
#define PROFD_OTLP_ATTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "otlp_dict.h"
#include "profd/model.h"

#define OTLP_ATTR_BUILD_ID_GNU "process.executable.build_id.gnu"
#define OTLP_ATTR_BUILD_ID_GO "process.executable.build_id.go"
#define OTLP_ATTR_BUILD_ID_HTLHASH "process.executable.build_id.htlhash"
#define OTLP_ATTR_HAS_FUNCTIONS "pprof.mapping.has_functions"
#define OTLP_ATTR_HAS_FILENAMES "pprof.mapping.has_filenames"
#define OTLP_ATTR_HAS_LINE_NUMBERS "pprof.mapping.has_line_numbers"
#define OTLP_ATTR_HAS_INLINE_FRAMES "pprof.mapping.has_inline_frames"
#define OTLP_ATTR_IS_FOLDED "pprof.location.is_folded"
#define OTLP_ATTR_COMMENT "pprof.profile.comment"
#define OTLP_ATTR_DROP_FRAMES "pprof.profile.drop_frames"
#define OTLP_ATTR_KEEP_FRAMES "pprof.profile.keep_frames"
#define OTLP_ATTR_DOC_URL "pprof.profile.doc_url"
#define OTLP_ATTR_DEFAULT_SAMPLE_TYPE "pprof.scope.default_sample_type"
#define OTLP_LABEL_TRACE_ID "trace_id"
#define OTLP_LABEL_SPAN_ID "span_id"

/* True when the bool attribute `key` among list is true. */
bool otlp_attrs_flag(const struct otlp_dict *d, struct otlp_list list, const char *key);
/* Sets m's build_id and has_* flags from its attributes. */
void otlp_attrs_to_mapping(const struct otlp_dict *d, struct otlp_list list,
                           struct profd_profile *p, struct profd_mapping *m);
/* Sets p's comments, drop_frames, keep_frames and doc_url from profile
 * attributes. */
void otlp_attrs_to_profile(const struct otlp_dict *d, struct otlp_list list,
                           struct profd_profile *p);
/* Adds the profile attributes that are not pprof facts as series labels. */
void otlp_attrs_to_series(const struct otlp_dict *d, struct otlp_list list,
                          struct profd_labels *labels);
/* Fills l from a sample attribute (key and unit already interned into p):
 * ints become numeric labels with the unit, everything else strings. False
 * for values a label cannot hold (arrays, maps). */
bool otlp_attr_to_label(const struct otlp_attr *a, struct profd_profile *p,
                        struct profd_sample_label *l, uint32_t key, uint32_t unit);
/* Writes trace_id and span_id labels (lowercase hex) for a link; returns how
 * many were written (0..2). */
uint32_t otlp_link_to_labels(const struct otlp_link *link, struct profd_profile *p,
                             struct profd_sample_label *labels);
/* Adds a Resource's attributes (encoded bytes) as series labels, names made
 * Prometheus-valid (service.name -> service_name). */
void otlp_resource_to_labels(const struct otlp_dict *d, const uint8_t *data, size_t len,
                             struct profd_labels *labels);
/* The pprof.scope.default_sample_type of an InstrumentationScope, or NULL. */
const char *otlp_scope_default_sample_type(const struct otlp_dict *d, const uint8_t *data,
                                           size_t len, size_t *out_len);
/* Sets __name__ from the record's sample types (process_cpu, memory, ...). */
void otlp_set_profile_name(struct profd_record *r);

/* Writes a series label name as its OpenTelemetry attribute key (service_name
 * -> service.name for the conventions' well-known keys; others unchanged). */
const char *otlp_label_to_attribute(const char *name);

#endif
