// SPDX-License-Identifier: Apache-2.0
/*
 * A receiver's scan of its inputs on the receiver's own thread (host
 * run_aside), one at a time: a scan asked for while one runs runs once
 * that one ends (once, however many were asked for), so inputs that
 * arrived meanwhile are not missed and scans never pile up.
 */
#ifndef PROFD_ASIDE_SCAN_H
#define PROFD_ASIDE_SCAN_H

#include <stdbool.h>

#include "profd/plugin.h"

struct aside_scan {
    const struct profd_host *host;
    struct profd_component *self;
    void (*scan)(void *arg);    /* on the receiver's thread */
    void (*ended)(void *arg);   /* on the loop's thread, when no scan is due */
    void *arg;
    bool running, again;
};

/* Asks for a scan: now, or after the one running. Loop thread. */
void aside_scan_request(struct aside_scan *sc);

#endif
