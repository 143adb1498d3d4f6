// SPDX-License-Identifier: Apache-2.0
/*
 * The running daemon: the event loop, the current config generation and its
 * graph, signals (SIGINT/SIGTERM drain and exit, SIGHUP reloads), and the
 * telemetry endpoint.
 */
#ifndef PROFD_DAEMON_H
#define PROFD_DAEMON_H

#include <stdbool.h>

#include "../config/service.h"
#include "loader.h"

/* Loads a config file, or the given YAML text when path is NULL. Problems go
 * to d; NULL when there were any. */
struct profd_config *profd_daemon_load_config(const char *path, const char *text,
                                              struct profd_diag *d);

struct profd_run_options {
    const char *config_path;   /* NULL: config_text */
    const char *config_text;
    struct profd_loader *loader;
    bool oneshot;              /* a convert run: no telemetry, no reload */
    int log_level;             /* enum profd_log_level, or -1 for the config's */
};

/*
 * Runs until SIGINT/SIGTERM, or until every receiver reported its input done
 * (only one-shot receivers do), then drains and shuts down. Returns the process exit code: 0 on a clean run, 2
 * for a config that does not validate, 1 for anything else.
 */
int profd_daemon_run(const struct profd_run_options *o);

#endif
