// SPDX-License-Identifier: Apache-2.0
#include "own_vdso.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static pthread_once_t made = PTHREAD_ONCE_INIT;
static int vdso_fd = -1;
static char vdso_path[32];

/* The start and end of the [vdso] line of /proc/self/maps; false when
 * there is none. */
static bool vdso_bounds(unsigned long *start, unsigned long *end)
{
    FILE *maps = fopen("/proc/self/maps", "re");
    char line[512];
    bool found = false;
    while (maps && !found && fgets(line, sizeof(line), maps))
        found = strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", start, end) == 2 && *end > *start;
    if (maps)
        fclose(maps);
    return found;
}

static void copy_own_vdso(void)
{
    unsigned long start, end;
    if (!vdso_bounds(&start, &end))
        return;
    int fd = memfd_create("vdso", MFD_CLOEXEC);
    if (fd < 0)
        return;
    if (write(fd, (const void *)start, end - start) != (ssize_t)(end - start)) {
        close(fd);
        return;
    }
    vdso_fd = fd;
    snprintf(vdso_path, sizeof(vdso_path), "/proc/self/fd/%d", fd);
}

const char *own_vdso_path(void)
{
    pthread_once(&made, copy_own_vdso);
    return vdso_fd >= 0 ? vdso_path : NULL;
}

/* Closes the copy when the module holding this file is unloaded. */
__attribute__((destructor)) static void close_own_vdso(void)
{
    if (vdso_fd >= 0)
        close(vdso_fd);
}
