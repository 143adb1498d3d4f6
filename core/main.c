// SPDX-License-Identifier: Apache-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../config/service.h"
#include "alloc.h"
#include "cli.h"
#include "daemon.h"
#include "gzip.h"
#include "log.h"
#include "metrics.h"

#ifndef PROFD_VERSION
#define PROFD_VERSION "dev"
#endif

/* jemalloc's settings (read by it at its start, before main; MALLOC_CONF in
 * the environment adds to them): memory freed is given back to the system
 * about a second later by a background thread of its own, so an idle daemon
 * holds no more than it uses; blocks of 256 KiB and more (profiles, their
 * tables, debug sections) at once, so that a table outgrown does not stay
 * resident beside the one that replaced it; two arenas, so a producer
 * thread's allocations and a consumer's frees meet in few of them. Unused
 * where another allocator serves (sanitizer builds). */
const char *malloc_conf =
    "background_thread:true,max_background_threads:1,dirty_decay_ms:1000,muzzy_decay_ms:0,"
    "oversize_threshold:262144,narenas:2";

static int usage(int code)
{
    fprintf(code ? stderr : stdout,
            "usage: profd [run] [--config FILE] [--modules DIR]... [--log-level LEVEL]\n"
            "       profd validate [--config FILE] [--modules DIR]...\n"
            "       profd components [--json] [--modules DIR]...\n"
            "       profd convert IN... -o OUT [--modules DIR]...   (see profd convert --help)\n"
            "       profd version\n"
            "With no --config, profd runs its default config: pprof files dropped into\n"
            "./spool are written to ./profiles.\n");
    return code;
}

int main(int argc, char **argv)
{
    /* Network fetches of debug info happen only where a config asks for
     * them (symbolize's debuginfod_urls): elfutils, loaded with the modules,
     * would otherwise query the servers this variable names on its own. */
    unsetenv("DEBUGINFOD_URLS");
    const char *cmd = "run", *config = NULL;
    const char **dirs = profd_xcalloc((size_t)argc + 1, sizeof(*dirs));
    char **rest = profd_xcalloc((size_t)argc + 1, sizeof(*rest));
    size_t ndirs = 0;
    int nrest = 0, log_level = -1;
    bool json = false, help = false;
    int i = 1;
    if (argc > 1 && argv[1][0] != '-')
        cmd = argv[i++];
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "--config") && i + 1 < argc)
            config = argv[++i];
        else if (!strcmp(argv[i], "--modules") && i + 1 < argc)
            dirs[ndirs++] = argv[++i];
        else if (!strcmp(argv[i], "--log-level") && i + 1 < argc)
            log_level = profd_log_parse_level(argv[++i]);
        else if (!strcmp(argv[i], "--json"))
            json = true;
        else if ((!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) && strcmp(cmd, "convert"))
            help = true;   /* convert's own options are its usage's */
        else
            rest[nrest++] = argv[i];
    }
    if (help) {
        free(dirs);
        free(rest);
        return usage(0);
    }
    struct profd_loader *loader = profd_loader_create(dirs, ndirs);
    int rc;
    if (!strcmp(cmd, "version")) {
        printf("profd %s (plugin ABI %d)\n", PROFD_VERSION, PROFD_ABI_VERSION);
        rc = 0;
    } else if (!strcmp(cmd, "validate") && !nrest) {
        rc = profd_cmd_validate(config, loader);
    } else if (!strcmp(cmd, "components") && !nrest) {
        rc = profd_cmd_components(loader, json);
    } else if (!strcmp(cmd, "convert")) {
        rc = profd_cmd_convert(nrest, rest, loader);
    } else if (!strcmp(cmd, "run") && !nrest) {
        struct profd_run_options o = {.config_path = config, .config_text = profd_default_config,
                                      .loader = loader, .log_level = log_level};
        rc = profd_daemon_run(&o);
    } else {
        rc = usage(2);
    }
    profd_loader_destroy(loader);
    profd_metrics_free_all();
    profd_gzip_thread_cleanup();
    free(dirs);
    free(rest);
    return rc;
}
