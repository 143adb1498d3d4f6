// SPDX-License-Identifier: Apache-2.0
/* The daemon's own HTTP endpoint: /metrics (Prometheus text), /healthz,
 * and its status, /status (HTML) and /status.json. */
#ifndef PROFD_TELEMETRY_H
#define PROFD_TELEMETRY_H

#include <stdbool.h>

struct event_base;
struct profd_telemetry;

/* What the caller makes for the endpoint, each malloc'd, called with
 * arg: lines appended to /metrics, and the status as HTML or JSON. */
struct profd_telemetry_pages {
    char *(*extra_metrics)(void *arg);
    char *(*status)(void *arg, bool html);
    void *arg;
};

/* Binds address ("host:port") on base, serving pages (which must outlive
 * it) besides the registry's metrics. NULL with the reason logged. */
struct profd_telemetry *profd_telemetry_start(struct event_base *base, const char *address,
                                              const struct profd_telemetry_pages *pages);
/* Closes the socket and frees. Accepts NULL. Main thread. */
void profd_telemetry_stop(struct profd_telemetry *t);

#endif
