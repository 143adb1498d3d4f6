// SPDX-License-Identifier: Apache-2.0
/*
 * Module loader: finds <kind>_<type>.so in the search path, dlopens it with
 * RTLD_NOW|RTLD_LOCAL, and checks the descriptor's ABI version and size.
 * Search order: --modules directories, PROFD_MODULE_PATH (colon-separated),
 * then modules/ and ../lib/profd/modules next to the binary.
 */
#ifndef PROFD_LOADER_H
#define PROFD_LOADER_H

#include <stdbool.h>
#include <stddef.h>

#include "profd/plugin.h"

struct profd_loader;

/* extra_dirs (may be NULL) are searched first. Not thread-safe. */
struct profd_loader *profd_loader_create(const char *const *extra_dirs, size_t nextra);
/* dlcloses every module. */
void profd_loader_destroy(struct profd_loader *l);
/* The descriptor of kind/type, loading it on first use. NULL with err naming
 * every path tried, or the ABI problem. Modules stay loaded until destroy. */
const struct profd_plugin *profd_loader_get(struct profd_loader *l, enum profd_kind kind,
                                            const char *type, char *err, size_t errlen);
/* Makes a descriptor linked into the binary available under its kind and
 * type, ahead of the search path. Returns 0, or -1 when its ABI is wrong. */
int profd_loader_register(struct profd_loader *l, const struct profd_plugin *p, char *err,
                          size_t errlen);
/* Loads every module found in the search path (a kind and type found in
 * several directories, or by several paths, once: the first, as
 * profd_loader_get takes it); returns how many loaded and reports each
 * failure through warn(). */
size_t profd_loader_load_all(struct profd_loader *l, void (*warn)(const char *msg));
/* The i-th loaded descriptor, NULL past the end. */
const struct profd_plugin *profd_loader_at(const struct profd_loader *l, size_t i);
/* The directory of the running executable in dir (PATH_MAX bytes), where
 * profd's own files are found (beside it in a build, ../lib/profd from it
 * once installed); false when it cannot be told. */
bool profd_executable_dir(char *dir);
/* Checks a descriptor's ABI fields; 0, or -1 with err filled. */
int profd_loader_check(const struct profd_plugin *p, const char *path, char *err, size_t errlen);

#endif
