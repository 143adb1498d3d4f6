// SPDX-License-Identifier: Apache-2.0
/*
 * Time ordering of records. perf writes each CPU's ring buffer in turn, so
 * a child's first sample can come before the FORK that made it. Records
 * are queued with their timestamp (copied, unless their bytes stay put, as
 * in a mapped file) and handed out in time order:
 * at each FINISHED_ROUND, everything up to the newest time seen before the
 * previous round is final, as perf itself reasons. Records without a time
 * go out at once. Memory is bounded: past max_bytes queued, the oldest half
 * goes out early.
 */
#ifndef PROFD_PERF_ORDER_H
#define PROFD_PERF_ORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf_file.h"

/* Receives each record in order; its body lives until the call returns. */
typedef void (*perf_deliver_fn)(void *arg, const struct perf_record *r);

struct perf_order;

/* A queue for records of f, handing them to deliver(arg, record). */
struct perf_order *perf_order_new(const struct perf_file *f, size_t max_bytes,
                                  perf_deliver_fn deliver, void *arg);
/* Queues r (or delivers it now when it has no time). stable: r's body
 * stays readable until it is delivered (a mapped file), so it is not
 * copied. */
void perf_order_add(struct perf_order *q, const struct perf_record *r, bool stable);
/* The lowest input offset of a stable record still queued, or UINT64_MAX:
 * the input below it may be dropped from memory. */
uint64_t perf_order_oldest_stable(const struct perf_order *q);
/* A FINISHED_ROUND record: delivers what can no longer be overtaken. */
void perf_order_round(struct perf_order *q);
/* Delivers everything queued, in time order (end of input). */
void perf_order_drain(struct perf_order *q);
void perf_order_free(struct perf_order *q);

#endif
