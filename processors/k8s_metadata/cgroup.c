// SPDX-License-Identifier: Apache-2.0
#include "cgroup.h"

#include <ctype.h>
#include <string.h>

/* Whether s[0..n) holds a run of exactly 64 hex digits: it into id. */
static bool hex64_in(const char *s, size_t n, char id[CONTAINER_ID_SIZE])
{
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && isxdigit((unsigned char)s[j]))
            j++;
        if (j - i == 64) {
            for (size_t k = 0; k < 64; k++)
                id[k] = (char)tolower((unsigned char)s[i + k]);
            id[64] = '\0';
            return true;
        }
        i = j + 1;
    }
    return false;
}

/* Whether s[0..n) holds "pod" and a UUID (its '-' written '_' or '-'): the
 * UUID, with '-', into uid. */
static bool pod_uid_in(const char *s, size_t n, char uid[POD_UID_SIZE])
{
    for (const char *p = s; (p = memmem(p, (size_t)(s + n - p), "pod", 3)); p += 3) {
        const char *u = p + 3;
        size_t left = (size_t)(s + n - u);
        bool ok = left >= 36 && (left == 36 || !isxdigit((unsigned char)u[36]));
        char found[POD_UID_SIZE];
        for (int k = 0; k < 36 && ok; k++) {
            bool dash = k == 8 || k == 13 || k == 18 || k == 23;
            ok = dash ? (u[k] == '-' || u[k] == '_') : isxdigit((unsigned char)u[k]);
            found[k] = dash ? '-' : (char)tolower((unsigned char)u[k]);
        }
        if (ok) {
            memcpy(uid, found, 36);
            uid[36] = '\0';
            return true;
        }
    }
    return false;
}

bool cgroup_container(const char *text, size_t len, char id[CONTAINER_ID_SIZE],
                      char pod_uid[POD_UID_SIZE])
{
    id[0] = pod_uid[0] = '\0';
    for (size_t start = 0; start < len;) {
        const char *nl = memchr(text + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - text) : len;
        const char *line = text + start;
        const char *c1 = memchr(line, ':', end - start);
        const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(text + end - c1 - 1)) : NULL;
        const char *path = c2 ? c2 + 1 : NULL;
        /* the path's components, innermost first */
        for (const char *comp_end = text + end; path && comp_end > path;) {
            const char *slash = comp_end;
            while (slash > path && slash[-1] != '/')
                slash--;
            size_t n = (size_t)(comp_end - slash);
            if (!id[0])
                hex64_in(slash, n, id);
            if (!pod_uid[0])
                pod_uid_in(slash, n, pod_uid);
            comp_end = slash > path ? slash - 1 : path;
        }
        start = end + 1;
    }
    return id[0] || pod_uid[0];
}
