// SPDX-License-Identifier: Apache-2.0
#include "aside_scan.h"

static void run(void *arg)
{
    struct aside_scan *sc = arg;
    sc->scan(sc->arg);
}

static void ran(void *arg)
{
    struct aside_scan *sc = arg;
    sc->running = false;
    if (sc->again)
        aside_scan_request(sc);
    else if (sc->ended)
        sc->ended(sc->arg);
}

void aside_scan_request(struct aside_scan *sc)
{
    if (sc->running) {
        sc->again = true;
        return;
    }
    sc->running = true;
    sc->again = false;
    sc->host->run_aside(sc->self, run, ran, sc);
}
