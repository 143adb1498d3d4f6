// SPDX-License-Identifier: Apache-2.0
/*
 * One http_sd_config of a job at work, as Prometheus's HTTP service
 * discovery: its URL asked at start and every refresh_interval (an answer
 * may take that long at most) with the config's credentials, TLS and
 * proxy, "Accept: application/json" and
 * X-Prometheus-Refresh-Interval-Seconds; a 200 answer of type
 * application/json holding a list of target groups (file_sd's shape)
 * becomes the targets, each group's labels given __meta_url, and the
 * receiver is told when they are not what they were. Any other answer,
 * or none, is logged and counted (profd_scrape_http_sd_failures{job}), the
 * targets staying those last known.
 */
#ifndef PPROF_SCRAPE_HTTP_DISCOVERY_H
#define PPROF_SCRAPE_HTTP_DISCOVERY_H

#include "config.h"
#include "targets.h"

struct http_discovery;

/* A discovery for cfg, an entry of job_name's http_sd_configs (both
 * outlive it); changed(arg) runs on the loop's thread each time its
 * targets change. Loop thread. */
struct http_discovery *http_discovery_new(const struct profd_host *h, struct profd_component *self,
                                          const char *job_name, const struct http_sd_config *cfg,
                                          void (*changed)(void *arg), void *arg);

/* Asks the URL now and every refresh_interval from now. 0, or -1 when the
 * loop cannot take it. Loop thread. */
int http_discovery_start(struct http_discovery *d);

/* The target groups of the last good answer, with their hashes; none
 * before one came. Valid until the next changed call. Loop thread. */
struct found_groups http_discovery_found(const struct http_discovery *d);

/* Stops d (its request under way too) and frees it; accepts NULL. Loop
 * thread. */
void http_discovery_free(struct http_discovery *d);

/* Whether a Content-Type header's value is the JSON an http_sd answer
 * must be: application/json, with at most a UTF-8 charset, any case. */
bool http_sd_content_type_ok(const char *type);

#endif
