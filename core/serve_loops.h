// SPDX-License-Identifier: Apache-2.0
/*
 * Event loops on threads of their own that the daemon's servers share with
 * its main loop: a server accepts on the main loop and hands each new
 * connection to the loop with the fewest open (rpc_server.c), so that serving
 * requests, which one thread alone cannot keep up with, uses every CPU.
 * What a loop owns (connections, their buffers) is touched on its thread
 * alone; other threads reach it through jobs posted to the loop, run there
 * in the order posted.
 */
#ifndef PROFD_SERVE_LOOPS_H
#define PROFD_SERVE_LOOPS_H

struct event_base;
struct profd_serve_loops;

/* One loop a CPU the process may use (its affinity and CPU quota,
 * lib/cpus.h) beside the main loop's, at most PROFD_SERVE_LOOPS_MAX; 0
 * on a single CPU. */
#define PROFD_SERVE_LOOPS_MAX 7
unsigned profd_serve_loops_wanted(void);

/* n loops (threads started when profd_serve_loops_base is first asked);
 * NULL for n == 0. */
struct profd_serve_loops *profd_serve_loops_new(unsigned n);
/* How many loops l has (0 for NULL). */
unsigned profd_serve_loops_count(const struct profd_serve_loops *l);
/* Loop i's event base, its thread started with the others' if they were
 * not yet; NULL when the threads cannot be started (then none is). Main
 * thread. */
struct event_base *profd_serve_loops_base(struct profd_serve_loops *l, unsigned i);
/* Runs fn(arg) on loop i's thread after the jobs posted before it. Any
 * thread, once profd_serve_loops_base said the loops run. */
void profd_serve_loops_post(struct profd_serve_loops *l, unsigned i, void (*fn)(void *arg),
                            void *arg);
/* The same, and returns once fn has run. Never from loop i's own thread. */
void profd_serve_loops_call(struct profd_serve_loops *l, unsigned i, void (*fn)(void *arg),
                            void *arg);
/* Stops the loops once the jobs posted have run, and frees l: everything
 * on them (every server's part) must have been taken off first. Accepts
 * NULL. Main thread. */
void profd_serve_loops_free(struct profd_serve_loops *l);

/* An event base as the daemon makes each of its loops: with epoll,
 * changes to a descriptor's events within one loop iteration are coalesced
 * into one epoll_ctl (a server request turns reading off and writing on and
 * back several times); profd never dup()s a watched descriptor, which is
 * what that mode cannot follow. NULL when none can be made. */
struct event_base *profd_event_base_new(void);

#endif
