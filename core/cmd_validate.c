// SPDX-License-Identifier: Apache-2.0
#include <stdio.h>

#include "cli.h"
#include "daemon.h"
#include "graph.h"

int profd_cmd_validate(const char *config_path, struct profd_loader *l)
{
    struct profd_diag d = {0};
    struct profd_config *c = profd_daemon_load_config(config_path, profd_default_config, &d);
    struct profd_graph *g = c ? profd_graph_prepare(c, l, &d) : NULL;   /* module options too */
    int rc = d.n ? 2 : 0;
    if (rc)
        profd_diag_print(&d, stderr);
    else
        printf("%s: configuration is valid\n", config_path ? config_path : "default config");
    profd_graph_destroy(g);
    profd_config_free(c);
    profd_diag_free(&d);
    return rc;
}
