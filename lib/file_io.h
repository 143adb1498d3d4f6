// SPDX-License-Identifier: Apache-2.0
/* Small file helpers the modules share. */
#ifndef PROFD_FILE_IO_H
#define PROFD_FILE_IO_H

#include <stddef.h>

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

#endif
