// SPDX-License-Identifier: Apache-2.0
/* Labels that say how a record travels rather than what it is, which a
 * store that has no use for them is not sent as labels or attributes:
 * __tenant_id__ (sent as the X-Scope-OrgID header, tenant_id.h) and
 * __delta__ (Pyroscope's mark that a profile's cumulative columns hold
 * deltas already, which only a Pyroscope server reads). */
#ifndef PROFD_LIB_TRANSPORT_LABELS_H
#define PROFD_LIB_TRANSPORT_LABELS_H

#include <stdbool.h>
#include <string.h>

#include "tenant_id.h"

/* The label of Pyroscope's delta mark. */
#define DELTA_LABEL "__delta__"

/* Whether the label name is one of those. */
static inline bool transport_label(const char *name)
{
    return !strcmp(name, TENANT_LABEL) || !strcmp(name, DELTA_LABEL);
}

#endif
