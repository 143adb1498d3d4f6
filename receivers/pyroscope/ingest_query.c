// SPDX-License-Identifier: Apache-2.0
#include "ingest_query.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../lib/hex.h"

#define NANOS 1000000000LL

long ingest_query_param(const char *query, const char *name, char *out, size_t n)
{
    size_t nlen = strlen(name);
    for (const char *p = query; p && *p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL) {
        if (strncmp(p, name, nlen) || p[nlen] != '=')
            continue;
        size_t o = 0;
        for (const char *c = p + nlen + 1; *c && *c != '&'; c++, o++) {
            int v = *c == '%' ? hex_byte(c + 1) : -1;
            char decoded = v >= 0 ? (char)v : *c == '+' ? ' ' : *c;
            if (v >= 0)
                c += 2;
            if (o + 1 < n)
                out[o] = decoded;
        }
        out[o + 1 < n ? o : n - 1] = '\0';
        return (long)o;
    }
    return -1;
}

/* The value of the n decimal digits at s. */
static int digits_value(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++)
        v = v * 10 + (s[i] - '0');
    return v;
}

/* Eight digits that make a date: its UTC midnight in *seconds. */
static bool date_of(const char *s, int64_t *seconds)
{
    struct tm tm = {0};
    tm.tm_year = digits_value(s, 4) - 1900;
    tm.tm_mon = digits_value(s + 4, 2) - 1;
    tm.tm_mday = digits_value(s + 6, 2);
    if (tm.tm_year <= 0 || tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1)
        return false;
    int mon = tm.tm_mon, mday = tm.tm_mday;
    time_t t = timegm(&tm);   /* normalizes: the 30th of February comes back as March */
    if (tm.tm_mon != mon || tm.tm_mday != mday)
        return false;
    *seconds = (int64_t)t;
    return true;
}

/* Digits only: a date, or Unix time in units their count says. */
static bool digits_time(const char *s, int64_t *out)
{
    size_t len = strlen(s);
    int64_t seconds;
    if (len == 8 && date_of(s, &seconds))
        return !__builtin_mul_overflow(seconds, NANOS, out);
    unsigned long long v = strtoull(s, NULL, 10);   /* ULLONG_MAX past its range */
    if (v > INT64_MAX)
        return false;
    int64_t scale = len == 19 ? 1 : len == 16 ? 1000 : len == 13 ? 1000000 : NANOS;
    return !__builtin_mul_overflow((int64_t)v, scale, out);
}

/* Seconds in a unit, by its first letters; 0 when unknown. */
static int64_t unit_seconds(const char *u)
{
    if (*u == 's')
        return 1;
    if (*u == 'M' || (u[0] == 'm' && u[1] == 'o' && u[2] == 'n'))   /* mon, not min */
        return 30 * 86400;
    switch (*u) {
    case 'm': return 60;   /* min, or m */
    case 'h': return 3600;
    case 'd': return 86400;
    case 'w': return 7 * 86400;
    case 'y': return 365 * 86400;
    default: return 0;
    }
}

/* now moved by the offset after the first '+' or '-' of s. */
static bool offset_time(const char *s, int64_t now, int64_t *out)
{
    const char *sign = strchr(s, '+');
    if (!sign)
        sign = strchr(s, '-');
    int64_t seconds = 0;
    for (const char *p = sign ? sign + 1 : ""; *p;) {
        char *end = (char *)p;
        unsigned long long n = isdigit((unsigned char)*p) ? strtoull(p, &end, 10) : 0;
        char unit[8] = "";
        size_t ulen = 0;
        for (p = end; *p && !isdigit((unsigned char)*p); p++)
            if (ulen + 1 < sizeof(unit))
                unit[ulen++] = *p;
        int64_t add;
        if (n > INT64_MAX || __builtin_mul_overflow((int64_t)n, unit_seconds(unit), &add) ||
            __builtin_add_overflow(seconds, add, &seconds))
            return false;
    }
    int64_t moved;
    if (__builtin_mul_overflow(seconds, NANOS, &moved))
        return false;
    return !__builtin_add_overflow(now, sign && *sign == '-' ? -moved : moved, out);
}

bool ingest_time(const char *query, const char *name, int64_t now, int64_t *out)
{
    char raw[64], s[64];
    *out = now;
    if (ingest_query_param(query, name, raw, sizeof(raw)) < 0)
        return true;
    size_t n = 0;
    for (const char *c = raw; *c; c++)
        if (*c != '_' && *c != ',' && !isspace((unsigned char)*c))
            s[n++] = *c;
    s[n] = '\0';
    if (!n)
        return true;
    if (strspn(s, "0123456789") == n)
        return digits_time(s, out);
    return offset_time(s, now, out);
}

int64_t ingest_cpu_period(const char *query)
{
    char v[32];
    long long rate = 0;
    char *end = v;
    if (ingest_query_param(query, "sampleRate", v, sizeof(v)) >= 0)
        rate = strtoll(v, &end, 10);
    return *end || rate <= 0 ? NANOS / 100 : NANOS / rate;
}

void ingest_units(const char *query, char *out, size_t n)
{
    static const char *const known[] = {"samples", "objects", "goroutines", "bytes",
                                        "lock_nanoseconds", "lock_samples"};
    char v[32];
    const char *units = "samples";
    if (ingest_query_param(query, "units", v, sizeof(v)) >= 0)
        for (size_t i = 0; i < sizeof(known) / sizeof(*known); i++)
            if (!strcmp(v, known[i]))
                units = known[i];
    strncpy(out, units, n - 1);
    out[n - 1] = '\0';
}
