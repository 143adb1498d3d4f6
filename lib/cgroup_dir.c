// SPDX-License-Identifier: Apache-2.0
#include "cgroup_dir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_io.h"

#define PROC_FILE_MAX (1u << 20)

/* Whether the comma-separated list has the word. */
static bool list_has(const char *list, size_t len, const char *word)
{
    size_t wl = strlen(word);
    for (const char *p = list, *end = list + len; p < end;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        size_t n = comma ? (size_t)(comma - p) : (size_t)(end - p);
        if (n == wl && memcmp(p, word, wl) == 0)
            return true;
        p += n + 1;
    }
    return false;
}

/* mountinfo's octal escapes (\040 for a space) undone in place. */
static void unescape(char *s)
{
    char *out = s;
    for (char *p = s; *p; p++) {
        if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
            p[3] >= '0' && p[3] <= '7') {
            *out++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
            p += 3;
        } else {
            *out++ = *p;
        }
    }
    *out = '\0';
}

/* Splits line at spaces into at most max fields; how many. */
static size_t split_fields(char *line, char **fields, size_t max)
{
    size_t n = 0;
    for (char *save = NULL, *f = strtok_r(line, " ", &save); f && n < max;
         f = strtok_r(NULL, " ", &save))
        fields[n++] = f;
    return n;
}

/* Sets q->top to root plus the mount point of the first mount of the
 * controller (v1: fstype cgroup with the controller among its options; v2:
 * fstype cgroup2) and *hroot to the hierarchy path mounted there, a pointer
 * into mountinfo; false when mountinfo has none. */
static bool find_mount(char *mountinfo, const char *root, const char *controller,
                       struct cgroup_dir *q, char **hroot)
{
    char *next;
    for (char *line = mountinfo; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *f[64];
        size_t n = split_fields(line, f, 64), dash = 6;
        while (dash < n && strcmp(f[dash], "-"))
            dash++;
        if (dash + 3 >= n)
            continue;
        const char *fstype = f[dash + 1], *opts = f[dash + 3];
        bool match = q->v1 ? !strcmp(fstype, "cgroup") &&
                                 list_has(opts, strlen(opts), controller)
                           : !strcmp(fstype, "cgroup2");
        if (!match)
            continue;
        unescape(f[3]);
        unescape(f[4]);
        *hroot = f[3];
        return (size_t)snprintf(q->top, sizeof(q->top), "%s%s", root, f[4]) < sizeof(q->top);
    }
    return false;
}

/* The process's path in the controller's hierarchy, from
 * /proc/self/cgroup's text: v1's line naming the controller among its
 * controllers, v2's "0::" line; a pointer into text, NULL when it has no
 * such line. */
static const char *find_cgroup_path(char *text, const char *controller, bool v1)
{
    char *next;
    for (char *line = text; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        bool match = v1 ? list_has(c1 + 1, (size_t)(c2 - c1 - 1), controller)
                        : c1 == line + 1 && line[0] == '0' && c2 == c1 + 1;
        if (match)
            return c2 + 1;
    }
    return NULL;
}

bool cgroup_dir_locate(const char *root, const char *controller, bool v1, struct cgroup_dir *q)
{
    q->v1 = v1;
    char path[4096];
    size_t len;
    snprintf(path, sizeof(path), "%s/proc/self/mountinfo", root);
    char *mountinfo = read_small_file(path, PROC_FILE_MAX, &len);
    snprintf(path, sizeof(path), "%s/proc/self/cgroup", root);
    char *cgroups = read_small_file(path, PROC_FILE_MAX, &len);
    char *hroot = NULL;
    const char *cg = cgroups ? find_cgroup_path(cgroups, controller, v1) : NULL;
    bool ok = mountinfo && cg && find_mount(mountinfo, root, controller, q, &hroot);
    if (ok && strcmp(hroot, "/")) {   /* a container's view: its own cgroup mounted */
        size_t hl = strlen(hroot);
        ok = strncmp(cg, hroot, hl) == 0 && (cg[hl] == '/' || cg[hl] == '\0');
        cg += ok ? hl : 0;
    }
    if (ok)
        ok = (size_t)snprintf(q->dir, sizeof(q->dir), "%s%s", q->top,
                              strcmp(cg, "/") ? cg : "") < sizeof(q->dir);
    free(mountinfo);
    free(cgroups);
    return ok;
}

bool cgroup_dir_up(struct cgroup_dir *q)
{
    size_t top = strlen(q->top);
    char *slash = strrchr(q->dir, '/');
    if (strlen(q->dir) <= top || !slash || (size_t)(slash - q->dir) < top)
        return false;
    *slash = '\0';
    return true;
}
