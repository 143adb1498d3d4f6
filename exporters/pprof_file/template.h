// SPDX-License-Identifier: Apache-2.0
/*
 * Output path templates: literal text with {variables}. {time} (UTC,
 * 20261122T041912.123Z), {date} (2026-11-22), {unix_nanos}, and any series
 * label by name, made safe as one path component ("unknown" when absent)
 * of at most TEMPLATE_MAX_LABEL_BYTES (a longer value cut, with a hash of
 * it at the end).
 */
#ifndef PPROF_FILE_TEMPLATE_H
#define PPROF_FILE_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profd/model.h"

/* The most bytes one label's value takes in a path: two such and the
 * rest of a name fit in the 255 bytes file systems allow a name. */
#define TEMPLATE_MAX_LABEL_BYTES 120

/* True when tmpl is well formed; otherwise *err says why. */
bool pprof_file_template_check(const char *tmpl, const char **err);
/* Writes into out (cap bytes) the path for record r, relative to the output
 * directory, from a template pprof_file_template_check took. The record's
 * time is used, or now_ns when it has none. Returns its length, or SIZE_MAX
 * when it does not fit (out is then not a string). */
size_t pprof_file_template_expand(const char *tmpl, const struct profd_record *r, int64_t now_ns,
                                  char *out, size_t cap);

#endif
