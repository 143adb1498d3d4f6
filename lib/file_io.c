// SPDX-License-Identifier: Apache-2.0
#include "file_io.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int make_parents(char *path)
{
    for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
        *p = '\0';
        int rc = mkdir(path, 0755);
        *p = '/';
        if (rc != 0 && errno != EEXIST)
            return -1;
    }
    return 0;
}

int write_all(int fd, const void *data, size_t len)
{
    const char *at = data;
    while (len) {
        ssize_t n = write(fd, at, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = 0;
            return -1;
        }
        at += n;
        len -= (size_t)n;
    }
    return 0;
}

char *expand_home(const char *path)
{
    const char *home = getenv("HOME");
    bool tilde = !strncmp(path, "~/", 2);
    char *out;
    if (tilde && !home)
        return NULL;
    if (asprintf(&out, "%s%s", tilde ? home : "", path + (tilde ? 1 : 0)) < 0)
        abort();
    return out;
}
