// SPDX-License-Identifier: Apache-2.0
#include "debuginfod.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* libdebuginfod, loaded only when servers are configured (it brings
 * libcurl and TLS libraries along). */
struct remote_debuginfo {
    void *library;
    debuginfod_client *(*begin)(void);
    int (*find_executable)(debuginfod_client *, const unsigned char *, int, char **);
    int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
    void (*end)(debuginfod_client *);
    debuginfod_client *client;
};

/* Loads the library into r. False with err filled when it is missing. */
static bool load(struct remote_debuginfo *r, char *err, size_t errlen)
{
    if (!(r->library = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL))) {
        snprintf(err, errlen, "debuginfod_urls is set but %s cannot be loaded (Debian package "
                 "libdebuginfod1): %s", DEBUGINFOD_SONAME, dlerror());
        return false;
    }
    *(void **)&r->begin = dlsym(r->library, "debuginfod_begin");
    *(void **)&r->find_executable = dlsym(r->library, "debuginfod_find_executable");
    *(void **)&r->find_debuginfo = dlsym(r->library, "debuginfod_find_debuginfo");
    *(void **)&r->end = dlsym(r->library, "debuginfod_end");
    if (r->begin && r->find_executable && r->find_debuginfo && r->end)
        return true;
    snprintf(err, errlen, "%s lacks the client functions", DEBUGINFOD_SONAME);
    return false;
}

struct remote_debuginfo *remote_debuginfo_new(const char *const *urls, size_t nurls,
                                              int64_t timeout_s, const char *cache_dir,
                                              char *err, size_t errlen)
{
    size_t len = 1;
    for (size_t i = 0; i < nurls; i++)
        len += strlen(urls[i]) + 1;
    char *joined = calloc(1, len);
    if (!joined)
        abort();
    for (size_t i = 0; i < nurls; i++) {
        strcat(joined, i ? " " : "");
        strcat(joined, urls[i]);
    }
    char timeout[32];
    snprintf(timeout, sizeof(timeout), "%lld", (long long)(timeout_s > 0 ? timeout_s : 1));
    int rc = setenv(DEBUGINFOD_URLS_ENV_VAR, joined, 1) | setenv(DEBUGINFOD_TIMEOUT_ENV_VAR, timeout, 1) |
             (cache_dir && *cache_dir ? setenv(DEBUGINFOD_CACHE_PATH_ENV_VAR, cache_dir, 1) : 0);
    free(joined);
    struct remote_debuginfo *r = calloc(1, sizeof(*r));
    if (!r)
        abort();
    if (!load(r, err, errlen)) {
        remote_debuginfo_free(r);
        return NULL;
    }
    if (rc != 0 || !(r->client = r->begin())) {
        snprintf(err, errlen, "cannot start a debuginfod client");
        remote_debuginfo_free(r);
        return NULL;
    }
    return r;
}

char *remote_debuginfo_executable(struct remote_debuginfo *r, const char *build_id, char *err,
                                  size_t errlen)
{
    char *path = NULL;
    int fd = r->find_executable(r->client, (const unsigned char *)build_id, 0, &path);
    if (fd < 0) {
        snprintf(err, errlen, "debuginfod: %s", strerror(-fd));
        return NULL;
    }
    close(fd);
    return path;
}

int remote_debuginfo_debug_file(struct remote_debuginfo *r, const unsigned char *build_id,
                                size_t len, char **path)
{
    return r->find_debuginfo(r->client, build_id, (int)len, path);
}

void remote_debuginfo_free(struct remote_debuginfo *r)
{
    if (!r)
        return;
    if (r->client)
        r->end(r->client);
    if (r->library)
        dlclose(r->library);
    free(r);
}
