// SPDX-License-Identifier: Apache-2.0
/* Prometheus file_sd files: a YAML or JSON list of {targets: [...], labels: {...}}.
 * JSON is read as YAML, JSON's surrogate pair escapes made YAML's
 * (config/json_text.h). */
#ifndef PROFD_SD_FILE_H
#define PROFD_SD_FILE_H

#include <stddef.h>

#include "profd/plugin.h"

/* Reads path into *groups (n of them, malloc'd): JSON when its name ends in
 * .json, else YAML (JSON too, but for its surrogate pair escapes).
 * Returns 0, or -1 with err naming the file, line and column of the
 * problem. */
int profd_sd_file_read(const char *path, struct profd_target_group **groups, size_t *n, char *err,
                       size_t errlen);
/* The same from JSON text (NUL-terminated), as an http_sd endpoint
 * answers it; name (its URL) stands for the file in err. */
int profd_sd_parse(const char *name, const char *text, struct profd_target_group **groups,
                   size_t *n, char *err, size_t errlen);
/* Frees what profd_sd_file_read or profd_sd_parse returned. */
void profd_sd_groups_free(struct profd_target_group *groups, size_t n);

#endif
