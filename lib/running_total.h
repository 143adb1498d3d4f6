// SPDX-License-Identifier: Apache-2.0
/* A module's own count that only grows (label fixes, profiles a backend
 * refused), published as a gauge of the component through the host. */
#ifndef PROFD_LIB_RUNNING_TOTAL_H
#define PROFD_LIB_RUNNING_TOTAL_H

#include <stdatomic.h>
#include <stddef.h>

#include "profd/plugin.h"

/* Adds n to *total and, unless n is 0, sets self's gauge name (with its
 * help) to the new total. Any thread. */
void running_total_add(const struct profd_host *host, struct profd_component *self,
                       _Atomic size_t *total, size_t n, const char *name, const char *help);

#endif
