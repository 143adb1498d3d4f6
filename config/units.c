// SPDX-License-Identifier: Apache-2.0
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct unit {
    const char *name;
    double scale;
};

/* Longest names first so "ms" wins over "m". */
static const struct unit duration_units[] = {
    {"ns", 1}, {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9},
    {"h", 3600e9}, {NULL, 0},
};

static const struct unit size_units[] = {
    {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
    {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
    {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0},
    {"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"B", 1}, {NULL, 0},
};

static const struct unit *match_unit(const struct unit *units, const char *s, bool exact_end)
{
    const struct unit *best = NULL;
    size_t best_len = 0;
    for (const struct unit *u = units; u->name; u++) {
        size_t n = strlen(u->name);
        if (strncmp(s, u->name, n) == 0 && n > best_len && (!exact_end || s[n] == '\0')) {
            best = u;
            best_len = n;
        }
    }
    return best;
}

bool profd_parse_duration(const char *s, int64_t *ns)
{
    if (strcmp(s, "0") == 0) {
        *ns = 0;
        return true;
    }
    double total = 0;
    bool any = false;
    while (*s) {
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (end == s || errno || v < 0 || *s == '+' || *s == '-')
            return false;
        const struct unit *u = match_unit(duration_units, end, false);
        if (!u)
            return false;
        total += v * u->scale;
        s = end + strlen(u->name);
        any = true;
    }
    if (!any || total > 9.2e18)
        return false;
    *ns = (int64_t)llround(total);
    return true;
}

bool profd_parse_size(const char *s, uint64_t *bytes)
{
    char *end;
    errno = 0;
    if (!*s || *s == '-' || *s == '+')
        return false;
    double v = strtod(s, &end);
    if (end == s || errno || v < 0)
        return false;
    double scale = 1;
    if (*end) {
        const struct unit *u = match_unit(size_units, end, true);
        if (!u)
            return false;
        scale = u->scale;
    }
    double total = v * scale;
    if (total > 1.8e19 || total != floor(total))
        return false;
    *bytes = (uint64_t)total;
    return true;
}

bool profd_parse_int(const char *s, int64_t *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (!*s || *end || errno)
        return false;
    *v = x;
    return true;
}

bool profd_parse_bool(const char *s, bool *v)
{
    static const char *const yes[] = {"true", "yes", "on"}, *const no[] = {"false", "no", "off"};
    for (int i = 0; i < 3; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *v = true;
            return true;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *v = false;
            return true;
        }
    }
    return false;
}
