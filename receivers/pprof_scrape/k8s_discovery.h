// SPDX-License-Identifier: Apache-2.0
/*
 * One kubernetes_sd_config of a job at work: its pods listed every
 * refresh_interval (the first list as the receiver starts) on the event
 * loop's libcurl, the lists read and made targets (k8s_sd.h) on the
 * receiver's own thread, and the receiver told when the targets changed.
 * A list that fails is logged and counted (profd_scrape_k8s_list_errors
 * {job}); the targets of the last list that worked stay.
 */
#ifndef PPROF_SCRAPE_K8S_DISCOVERY_H
#define PPROF_SCRAPE_K8S_DISCOVERY_H

#include <stddef.h>

#include "config.h"

struct k8s_discovery;

/*
 * A discovery for cfg, an entry of job_name's kubernetes_sd_configs (both
 * outlive it); changed(arg) runs on the loop's thread each time its
 * targets change. NULL, with why set, when there is no API to ask (no
 * api_server, not in a pod). Loop thread.
 */
struct k8s_discovery *k8s_discovery_new(const struct profd_host *h, struct profd_component *self,
                                        const char *job_name,
                                        const struct kubernetes_sd_config *cfg,
                                        void (*changed)(void *arg), void *arg, char *why,
                                        size_t whylen);

/* Starts the first list and the timer of the next ones. 0, or -1 when
 * the loop cannot take them. Loop thread. */
int k8s_discovery_start(struct k8s_discovery *d);

/* The target groups of the last list that worked; none before one did.
 * Valid until the next changed call. Loop thread. */
const struct profd_target_group *k8s_discovery_groups(const struct k8s_discovery *d, size_t *n);

/* Stops d's lists and frees it (accepts NULL). Its work on the
 * receiver's own thread must be over (the receiver's shutdown). */
void k8s_discovery_free(struct k8s_discovery *d);

#endif
