// SPDX-License-Identifier: Apache-2.0
/* Small file helpers the modules share. */
#ifndef PROFD_FILE_IO_H
#define PROFD_FILE_IO_H

#include <stddef.h>
#include <stdint.h>

/* mkdir -p for the directories of path (not its last component: pass a
 * path ending in '/' to make the directory itself). path is modified while
 * it runs and restored. 0, or -1 with errno set. */
int make_parents(char *path);

/* Writes all len bytes, retrying short writes and EINTR. 0, or -1 with
 * errno set (0 errno on a write of nothing). */
int write_all(int fd, const void *data, size_t len);

/* A malloc'd copy of path with a leading "~/" made $HOME's; NULL when
 * it has one and HOME is not set. */
char *expand_home(const char *path);

/* The file at path whole, malloc'd and NUL-terminated, its length in
 * *len; NULL when it cannot be read or holds more than max bytes. */
char *read_small_file(const char *path, size_t max, size_t *len);

/* The first line of the file at path (a token, a password), without its
 * line end, malloc'd; NULL when it cannot be read or holds over 64 KiB. */
char *read_secret(const char *path);

/* The modification time of the file at path in ns, to tell when a secret
 * changed; 0 when path is NULL or names no file. */
int64_t file_mtime_ns(const char *path);

#endif
