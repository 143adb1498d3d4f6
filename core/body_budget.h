// SPDX-License-Identifier: Apache-2.0
/*
 * The bytes of request bodies a server holds at once, on all of its loops,
 * kept under a limit (a receiver's max_request_bytes_in_flight), so that
 * many clients sending large bodies together cannot take all the memory
 * there is: a request the limit has no room for is refused (503 / gRPC
 * UNAVAILABLE, which clients retry) rather than read.
 *
 * A body counts from PROFD_BODY_COUNTED_FROM bytes on: from its head for
 * what it announces (Content-Length, HTTP/2's content-length, a gRPC
 * message's length), and otherwise for what has come so far (chunk by
 * chunk), until its request is answered. Smaller bodies are left out: each
 * connection holds one at a time (an HTTP/2 one at most one a stream), which
 * is no more than the kernel buffers for a socket, and counting them would
 * cost every small push a shared atomic update.
 */
#ifndef PROFD_BODY_BUDGET_H
#define PROFD_BODY_BUDGET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#define PROFD_BODY_COUNTED_FROM ((size_t)64 << 10)

struct profd_body_budget {
    atomic_size_t held;   /* bytes counted now */
    size_t limit;         /* 0: no limit (held is still kept, for /metrics) */
};

/* Has a request's body count len bytes, where it counts *counted already
 * (0 at first): true when len is under PROFD_BODY_COUNTED_FROM or no more
 * than *counted (nothing changes), or when the rest fits under the limit
 * (*counted becomes len); false, nothing counted, when it does not fit.
 * Thread-safe. */
bool profd_body_budget_count(struct profd_body_budget *b, size_t *counted, size_t len);

/* Gives back what a request counted; *counted is 0 after (so a second
 * call gives back nothing). Thread-safe. */
void profd_body_budget_release(struct profd_body_budget *b, size_t *counted);

#endif
