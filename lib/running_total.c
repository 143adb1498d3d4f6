// SPDX-License-Identifier: Apache-2.0
#include "running_total.h"

void running_total_add(const struct profd_host *host, struct profd_component *self,
                       _Atomic size_t *total, size_t n, const char *name, const char *help)
{
    if (n)
        host->gauge_set(self, name, help, "", (double)(atomic_fetch_add(total, n) + n));
}
