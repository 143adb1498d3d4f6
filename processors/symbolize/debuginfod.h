// SPDX-License-Identifier: Apache-2.0
/*
 * Fetching binaries and debug files by build-id from debuginfod servers
 * (elfutils' libdebuginfod, loaded when servers are configured), off
 * unless configured. Files land in the client's cache directory, which
 * also remembers misses for a while.
 *
 * libdebuginfod takes its settings from the environment only, so
 * remote_debuginfo_new sets DEBUGINFOD_URLS, DEBUGINFOD_TIMEOUT and
 * DEBUGINFOD_CACHE_PATH for the whole process: one server list per daemon.
 * A fetch blocks its caller for at most the timeout per server.
 */
#ifndef PROFD_SYMBOLIZE_DEBUGINFOD_H
#define PROFD_SYMBOLIZE_DEBUGINFOD_H

#include <stddef.h>
#include <stdint.h>

struct remote_debuginfo;

/* A client of the servers urls[nurls], giving up on a server after
 * timeout_s seconds without progress; cache_dir "" keeps libdebuginfod's
 * default cache. NULL (err filled) when the client cannot be made. */
struct remote_debuginfo *remote_debuginfo_new(const char *const *urls, size_t nurls,
                                              int64_t timeout_s, const char *cache_dir,
                                              char *err, size_t errlen);
/* The local path of the executable with this build-id (lowercase hex),
 * fetched or from the cache: malloc'd, or NULL with err filled. */
char *remote_debuginfo_executable(struct remote_debuginfo *r, const char *build_id, char *err,
                                  size_t errlen);
/* The same for the separate debug file of a binary with this build-id
 * (raw bytes). Returns an open descriptor and sets *path (malloc'd), or a
 * negative errno. */
int remote_debuginfo_debug_file(struct remote_debuginfo *r, const unsigned char *build_id,
                                size_t len, char **path);
void remote_debuginfo_free(struct remote_debuginfo *r);

#endif
