// SPDX-License-Identifier: Apache-2.0
/* Sub-commands other than running the daemon. Each returns an exit code. */
#ifndef PROFD_CLI_H
#define PROFD_CLI_H

#include <stdbool.h>

#include "loader.h"

/* `profd validate`: 0 when valid, 2 with every problem printed. */
int profd_cmd_validate(const char *config_path, struct profd_loader *l);
/* `profd components [--json]`: every module found, with its options. */
int profd_cmd_components(struct profd_loader *l, bool json);
/* `profd convert IN... -o OUT`: a one-shot pipeline through the modules. */
int profd_cmd_convert(int argc, char **argv, struct profd_loader *l);

#endif
