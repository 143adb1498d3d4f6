// SPDX-License-Identifier: Apache-2.0
/*
 * A listening socket's guard against running out of descriptors or
 * memory. accept() then fails (EMFILE, ENFILE, ENOBUFS, ENOMEM) and the
 * connection stays queued, so the loop would be woken for it at once, again
 * and again: a busy CPU and a line of log for every try. Guarded, the
 * listener stops accepting for 10 ms, doubling to 1 s while it keeps
 * failing (connections queue in the kernel's backlog meanwhile), says so
 * once a second at most, and counts the pauses on /metrics
 * (profd_server_accept_pauses). Other accept() errors are said the same
 * way, and accepting goes on.
 */
#ifndef PROFD_ACCEPT_GUARD_H
#define PROFD_ACCEPT_GUARD_H

#include <event2/listener.h>

struct profd_accept_guard;

/* Guards l (whose error callback it takes), on base, the loop l runs on;
 * component and address name it in the log and on /metrics. Loop thread. */
struct profd_accept_guard *profd_accept_guard_new(struct evconnlistener *l,
                                                  struct event_base *base,
                                                  const char *component, const char *address);
/* Ends the guard, before its listener is freed (accepts NULL). Loop thread. */
void profd_accept_guard_free(struct profd_accept_guard *g);

#endif
