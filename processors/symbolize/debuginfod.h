// SPDX-License-Identifier: Apache-2.0
/*
 * Fetching binaries and debug files by build-id from debuginfod servers
 * (elfutils' libdebuginfod, loaded when servers are configured), off
 * unless configured. Files land in the client's cache directory, which
 * also remembers misses for a while.
 *
 * Fetches run in the background, on threads of their own, so a large
 * file never holds profiles up for longer than they choose to wait: the
 * first caller to ask for a file with time left before its deadline
 * waits for it until then, those after it not at all, until it is there (or failed: asked for again
 * after retry_ns). A fetch under way when the client is freed is given up.
 *
 * libdebuginfod takes its settings from the environment only, so
 * remote_debuginfo_new sets DEBUGINFOD_URLS, DEBUGINFOD_TIMEOUT and
 * DEBUGINFOD_CACHE_PATH for the whole process: one server list per daemon.
 */
#ifndef PROFD_SYMBOLIZE_DEBUGINFOD_H
#define PROFD_SYMBOLIZE_DEBUGINFOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct remote_debuginfo;

/* The most files fetched at once. */
#define REMOTE_DEBUGINFO_MAX_FETCHES 16

/* A client of the servers urls[nurls] fetching up to fetches files at once
 * (1 to REMOTE_DEBUGINFO_MAX_FETCHES), giving up on a server after
 * timeout_s seconds without progress; cache_dir "" keeps libdebuginfod's
 * default cache; retry_ns as above. NULL (err filled) when the client
 * cannot be made. */
struct remote_debuginfo *remote_debuginfo_new(const char *const *urls, size_t nurls,
                                              size_t fetches, int64_t timeout_s,
                                              const char *cache_dir, int64_t retry_ns, char *err,
                                              size_t errlen);
/* The local path of the executable with this build-id (lowercase hex),
 * waited for until deadline_ns (CLOCK_MONOTONIC) as above: malloc'd, or
 * NULL with err filled and *pending telling whether it is still being
 * fetched. */
char *remote_debuginfo_executable(struct remote_debuginfo *r, const char *build_id,
                                  int64_t deadline_ns, char *err, size_t errlen, bool *pending);
/* The same for the separate debug file of a binary with this build-id
 * (raw bytes), or for the dwz file of this build-id (what debuginfod
 * serves as its debuginfo). Returns an open descriptor and sets *path (malloc'd), or a
 * negative errno: -EAGAIN while it is being fetched. */
int remote_debuginfo_debug_file(struct remote_debuginfo *r, const unsigned char *build_id,
                                size_t len, int64_t deadline_ns, char **path);
/* Whether the fetch of the debug file (or dwz file) of this build-id
 * (lowercase hex), once asked for, has ended, found or not. */
bool remote_debuginfo_debug_file_settled(struct remote_debuginfo *r, const char *build_id);
/* Gives up the fetches under way, stops the threads, frees r (NULL: no-op). */
void remote_debuginfo_free(struct remote_debuginfo *r);

#endif
