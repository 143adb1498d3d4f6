// SPDX-License-Identifier: Apache-2.0
/* Series labels made what Prometheus-style stores (Pyroscope, Parca) take:
 * names of [a-zA-Z_][a-zA-Z0-9_]* (metric names may hold ':' too), and
 * values of valid UTF-8, which their protobuf decoding insists on. */
#ifndef PROFD_LIB_LABEL_VALID_H
#define PROFD_LIB_LABEL_VALID_H

#include <stdbool.h>
#include <stddef.h>

#include "profd/plugin.h"

/* Writes a valid label name for name into buf (max + 1 bytes), or with
 * colons a valid metric name, cut to max bytes: other characters become
 * '_', a leading digit gets one before it, an empty name is "_". True when
 * it had to change. */
bool label_valid_name(const char *name, bool colons, size_t max, char *buf);

/* Whether the len bytes of name are a valid label name (not a metric
 * name): what label_valid_name would leave as it is. */
bool label_name_is_valid(const char *name, size_t len);

/* Writes into buf (len + 1 bytes) the len bytes of name with each dot made
 * an underscore, as Pyroscope's distributor stores OpenTelemetry's
 * service.name as service_name. True when the result is a valid label
 * name. */
bool label_name_undotted(const char *name, size_t len, char *buf);

/* Sets name = value in out with the name made valid (not a metric name)
 * and the value valid UTF-8, each cut to its max bytes (the value between
 * characters), unless out has that name already or holds max_labels
 * labels; adds to *fixes one for each change and one for a label left out. */
void label_add_valid(const struct profd_host *host, struct profd_labels *out, const char *name,
                     const char *value, size_t max_name, size_t max_value, size_t max_labels,
                     size_t *fixes);

#endif
