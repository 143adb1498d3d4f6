// SPDX-License-Identifier: Apache-2.0
/* The daemon's own HTTP endpoint: /metrics (Prometheus text) and /healthz. */
#ifndef PROFD_TELEMETRY_H
#define PROFD_TELEMETRY_H

struct event_base;
struct profd_telemetry;

/* Extra lines appended to /metrics, produced by the caller (malloc'd). */
typedef char *(*profd_extra_metrics_fn)(void *arg);

/* Binds address ("host:port") on base. NULL with the reason logged. */
struct profd_telemetry *profd_telemetry_start(struct event_base *base, const char *address,
                                              profd_extra_metrics_fn extra, void *arg);
/* Closes the socket and frees. Accepts NULL. Main thread. */
void profd_telemetry_stop(struct profd_telemetry *t);

#endif
