// SPDX-License-Identifier: Apache-2.0
#include "template.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../../lib/hash.h"

/* A bounded string being written: buf has cap bytes, room for len
 * characters and the NUL; full once something did not fit. */
struct out {
    char *buf;
    size_t len, cap;
    bool full;
};

static void put(struct out *o, const char *s, size_t n)
{
    if (o->full || n >= o->cap - o->len) {
        o->full = true;
        return;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

/* v in decimal, at least width digits (zeros in front). */
static void put_decimal(struct out *o, int64_t v, int width)
{
    char digits[24];
    int i = sizeof(digits);
    uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
    do {
        digits[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u || (int)sizeof(digits) - i < width);
    if (v < 0)
        digits[--i] = '-';
    put(o, digits + i, sizeof(digits) - i);
}

/* The end of a label value cut to fit: '~' and its hash in hex. */
#define HASH_TAIL 17

/* A label value made safe as one path component, and short enough that
 * two fit in a file name: a longer one keeps its first bytes and ends in a
 * hash of the whole value, so values that differ stay apart. */
static void put_component(struct out *o, const char *v)
{
    if (!v || !*v) {
        put(o, "unknown", 7);
        return;
    }
    bool dot = v[0] == '.';   /* no hidden file, nor "..": a '_' before it */
    size_t len = strlen(v), keep = len, room = TEMPLATE_MAX_LABEL_BYTES - dot;
    char tail[HASH_TAIL + 1];   /* '~' and 16 hex digits of the value's hash */
    if (len > room)
        keep = room - HASH_TAIL;
    if (dot)
        put(o, "_", 1);
    for (size_t i = 0; i < keep; i++) {
        char c = v[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_' || c == '.' || c == '=' || c == '+' || c == ',' || c == '@';
        put(o, ok ? &c : "_", 1);
    }
    if (keep < len) {
        snprintf(tail, sizeof(tail), "~%016llx", (unsigned long long)hash_bytes(v, len));
        put(o, tail, HASH_TAIL);
    }
}

bool pprof_file_template_check(const char *tmpl, const char **err)
{
    for (const char *p = tmpl; *p; p++) {
        if (*p == '}') {
            *err = "unmatched '}'";
            return false;
        }
        if (*p != '{')
            continue;
        const char *end = strchr(p, '}');
        if (!end || end == p + 1) {
            *err = "'{' without a variable name and '}'";
            return false;
        }
        p = end;
    }
    if (tmpl[0] == '/' || strstr(tmpl, "../") || !strcmp(tmpl, "..") ||
        (strlen(tmpl) >= 3 && !strcmp(tmpl + strlen(tmpl) - 3, "/.."))) {
        *err = "must be a relative path that stays inside the directory";
        return false;
    }
    if (!*tmpl || tmpl[strlen(tmpl) - 1] == '/') {
        *err = "must end in a file name";
        return false;
    }
    return true;
}

size_t pprof_file_template_expand(const char *tmpl, const struct profd_record *r, int64_t now_ns,
                                  char *out, size_t cap)
{
    struct out o = {out, 0, cap, cap == 0};
    int64_t t = r->time_nanos ? r->time_nanos : now_ns;
    int64_t secs = t / 1000000000, nanos = t % 1000000000;
    if (nanos < 0) {   /* before 1970: the second before, and the nanoseconds after it */
        secs--;
        nanos += 1000000000;
    }
    struct tm tm;
    bool have_tm = false;   /* the calendar time, made for the first {time} or {date} */
    for (const char *p = tmpl; *p;) {
        if (*p != '{') {
            size_t n = strcspn(p, "{");
            put(&o, p, n);
            p += n;
            continue;
        }
        const char *name = p + 1, *end = strchr(p, '}');
        size_t n = (size_t)(end - name);
        p = end + 1;
        bool is_time = n == 4 && !memcmp(name, "time", 4);
        bool is_date = n == 4 && !memcmp(name, "date", 4);
        if ((is_time || is_date) && !have_tm) {
            time_t calendar_secs = (time_t)secs;
            gmtime_r(&calendar_secs, &tm);
            have_tm = true;
        }
        char tmp[64];
        if (is_time) {
            put(&o, tmp, strftime(tmp, sizeof(tmp), "%Y%m%dT%H%M%S.", &tm));
            put_decimal(&o, nanos / 1000000, 3);
            put(&o, "Z", 1);
        } else if (is_date) {
            put(&o, tmp, strftime(tmp, sizeof(tmp), "%Y-%m-%d", &tm));
        } else if (n == 10 && !memcmp(name, "unix_nanos", 10)) {
            put_decimal(&o, t, 1);
        } else {
            const char *v = NULL;
            for (size_t i = 0; i < r->labels.n && !v; i++)
                if (!strncmp(r->labels.items[i].name, name, n) && !r->labels.items[i].name[n])
                    v = r->labels.items[i].value;
            put_component(&o, v);
        }
    }
    if (o.full)
        return SIZE_MAX;
    out[o.len] = '\0';
    return o.len;
}
