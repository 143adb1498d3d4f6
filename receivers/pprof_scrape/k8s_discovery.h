// SPDX-License-Identifier: Apache-2.0
/*
 * One kubernetes_sd_config of a job at work: the objects of each of its
 * URLs (k8s_sd.h: those of its role's kind, and the services, pods and
 * nodes whose labels its targets have) kept by a k8s_watch (listed, then
 * watched), the targets made (k8s_groups) once every list came back and
 * again 100 ms after the objects changed, but no sooner after
 * the last time than four times as long as that (with the receiver's
 * scrape list) took, and the receiver told when they are not what they
 * were. A list or watch
 * that fails is logged and counted (profd_scrape_k8s_errors{job}); the
 * targets meanwhile are those last known.
 */
#ifndef PPROF_SCRAPE_K8S_DISCOVERY_H
#define PPROF_SCRAPE_K8S_DISCOVERY_H

#include <stddef.h>

#include "config.h"
#include "targets.h"

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

/* Starts listing. 0, or -1 when the loop cannot take it. Loop thread. */
int k8s_discovery_start(struct k8s_discovery *d);

/* The target groups last made, with their hashes; none before the first
 * list came back. Valid until the next changed call. Loop thread. */
struct found_groups k8s_discovery_found(const struct k8s_discovery *d);

/* Stops d's lists and watches and frees it (accepts NULL). Its work on
 * the receiver's own thread must be over (the receiver's shutdown). */
void k8s_discovery_free(struct k8s_discovery *d);

#endif
