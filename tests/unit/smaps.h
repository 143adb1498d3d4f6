// SPDX-License-Identifier: Apache-2.0
/* What the kernel says of one of this process's mappings, for tests of
 * memory given back or marked. */
#ifndef PROFD_TEST_SMAPS_H
#define PROFD_TEST_SMAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The number a field ("Rss", "THPeligible", ...) of /proc/self/smaps gives
 * the mapping holding addr (Rss and its like in KiB), or -1 when there is
 * no such mapping or field. */
static inline long smaps_field(const void *addr, const char *field)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    long value = -1;
    bool in = false;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof(line), f)) {
        unsigned long from, to;
        if (sscanf(line, "%lx-%lx ", &from, &to) == 2) {
            in = (uintptr_t)addr >= from && (uintptr_t)addr < to;
        } else if (in && !strncmp(line, field, n) && line[n] == ':') {
            value = strtol(line + n + 1, NULL, 10);
            break;
        }
    }
    if (f)
        fclose(f);
    return value;
}

#endif
