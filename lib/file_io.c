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

char *read_small_file(const char *path, size_t max, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap || n > max)
            break;
        char *grown = realloc(buf, cap * 2 + 1);
        if (!grown) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
        cap *= 2;
    }
    bool failed = ferror(f) || n > max;
    fclose(f);
    if (!buf || failed) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

char *read_secret(const char *path)
{
    size_t len;
    char *text = read_small_file(path, 1 << 16, &len);
    if (text)
        text[strcspn(text, "\r\n")] = '\0';
    return text;
}

int64_t file_mtime_ns(const char *path)
{
    struct stat st;
    if (!path || stat(path, &st) != 0)
        return 0;
    return (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
}
