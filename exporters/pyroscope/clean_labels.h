// SPDX-License-Identifier: Apache-2.0
/* Series labels made acceptable to Pyroscope's validation, so that one bad
 * label never makes the server drop the whole profile. */
#ifndef PROFD_PYROSCOPE_CLEAN_LABELS_H
#define PROFD_PYROSCOPE_CLEAN_LABELS_H

#include <stddef.h>

#include "profd/plugin.h"

#define PYROSCOPE_MAX_LABELS 30
#define PYROSCOPE_MAX_NAME 1024
#define PYROSCOPE_MAX_VALUE 2048

/* The __name__ in gives, else the one external gives; NULL: neither has one. */
const char *pyroscope_series_name(const struct profd_host *host, const struct profd_labels *in,
                                  const struct profd_str_map *external);

/*
 * Fills out (empty on entry) from in plus external (set where in lacks
 * them), less __tenant_id__ (that travels as X-Scope-OrgID): names made
 * Prometheus-valid (other characters become '_', a leading digit gets one
 * before it), values made valid UTF-8 (each stray byte U+FFFD), later
 * duplicates dropped, names and values cut to Pyroscope's lengths (values
 * between characters), and at most 30 labels (__name__, service_name and
 * __delta__, which says whether the server makes deltas of the profile's
 * cumulative columns, kept first).
 * __name__, which Pyroscope requires, is made a valid metric name, and is
 * fallback_name when neither in nor external has one (NULL: none).
 * Returns how many fixes that took.
 */
size_t pyroscope_clean_labels(const struct profd_host *host, const struct profd_labels *in,
                              const struct profd_str_map *external, const char *fallback_name,
                              struct profd_labels *out);

#endif
