// SPDX-License-Identifier: Apache-2.0
#include "tick.h"

struct event *tick_start(const struct profd_host *host, struct profd_component *self,
                         int64_t every_ns, event_callback_fn fn, void *arg)
{
    struct event *ev = event_new(host->event_base(self), -1, EV_PERSIST, fn, arg);
    struct timeval tv = {every_ns / 1000000000, every_ns % 1000000000 / 1000};
    if (ev && evtimer_add(ev, &tv) != 0) {
        event_free(ev);
        ev = NULL;
    }
    return ev;
}

void tick_stop(struct event **tick)
{
    if (*tick)
        event_free(*tick);
    *tick = NULL;
}
