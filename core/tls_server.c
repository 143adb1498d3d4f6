// SPDX-License-Identifier: Apache-2.0
#include "tls_server.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "loader.h"

#define LIBRARY "profd-tls.so"

static pthread_once_t loaded = PTHREAD_ONCE_INIT;
static const struct profd_tls_server_ops *ops;
static char load_error[2 * PATH_MAX + 128];

/* Loads LIBRARY from next to the executable, else from ../lib/profd. */
static void load(void)
{
    char dir[PATH_MAX];
    if (!profd_executable_dir(dir)) {
        snprintf(load_error, sizeof(load_error), "TLS: cannot find the executable's directory");
        return;
    }
    char beside[PATH_MAX + 32], installed[PATH_MAX + 32];
    snprintf(beside, sizeof(beside), "%s/" LIBRARY, dir);
    snprintf(installed, sizeof(installed), "%s/../lib/profd/" LIBRARY, dir);
    const char *path = access(beside, F_OK) == 0 ? beside : installed;
    if (access(path, F_OK) != 0) {
        snprintf(load_error, sizeof(load_error),
                 "TLS: " LIBRARY " is neither beside the executable in %s nor in %s/../lib/profd",
                 dir, dir);
        return;
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(load_error, sizeof(load_error), "TLS: %s", dlerror());
        return;
    }
    ops = dlsym(h, PROFD_TLS_SERVER_OPS);
    if (!ops) {
        snprintf(load_error, sizeof(load_error), "TLS: %s has no %s", path, PROFD_TLS_SERVER_OPS);
        dlclose(h);
    }
}

const struct profd_tls_server_ops *profd_tls_server(char *err, size_t errlen)
{
    pthread_once(&loaded, load);
    if (!ops)
        snprintf(err, errlen, "%s", load_error);
    return ops;
}
