// SPDX-License-Identifier: Apache-2.0
/* A module's periodic timer on the daemon's event loop. */
#ifndef PROFD_LIB_TICK_H
#define PROFD_LIB_TICK_H

#include <event2/event.h>
#include <stdint.h>

#include "profd/plugin.h"

/* Calls fn(-1, EV_TIMEOUT, arg) on the loop's thread every every_ns, from
 * every_ns from now; NULL when the timer cannot be made. Loop thread. */
struct event *tick_start(const struct profd_host *host, struct profd_component *self,
                         int64_t every_ns, event_callback_fn fn, void *arg);

/* Stops and frees *tick (accepts NULL), leaving it NULL. Loop thread. */
void tick_stop(struct event **tick);

#endif
