// SPDX-License-Identifier: Apache-2.0
/* The checks of the receiver's config that need more than each option's
 * type: presets known, intervals, schemes, shards, job names used once,
 * kubernetes_sd_configs' roles, selectors and what a kubeconfig_file
 * rules out, and each client's credentials and TLS. */
#ifndef PPROF_SCRAPE_VALIDATE_H
#define PPROF_SCRAPE_VALIDATE_H

#include "profd/plugin.h"

/* Tells host's diagnostics d every problem of cfgp (a struct config);
 * PROFD_OK when there is none, else PROFD_ERR. */
int scrape_config_validate(const struct profd_host *host, struct profd_diag *d, const void *cfgp);

#endif
