// SPDX-License-Identifier: Apache-2.0
#include "template.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct out {
    char *buf;
    size_t len, cap;
};

static void put(struct out *o, const char *s, size_t n)
{
    if (o->len + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 128;
        while (cap < o->len + n + 1)
            cap *= 2;
        char *nb = realloc(o->buf, cap);
        if (!nb)
            abort();
        o->buf = nb;
        o->cap = cap;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    o->buf[o->len] = '\0';
}

/* A label value made safe as one path component. */
static void put_component(struct out *o, const char *v)
{
    if (!v || !*v) {
        put(o, "unknown", 7);
        return;
    }
    if (v[0] == '.')
        put(o, "_", 1);
    for (; *v; v++) {
        char c = *v;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_' || c == '.' || c == '=' || c == '+' || c == ',' || c == '@';
        put(o, ok ? &c : "_", 1);
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

char *pprof_file_template_expand(const char *tmpl, const struct profd_record *r, int64_t now_ns)
{
    struct out o = {0};
    int64_t t = r->time_nanos ? r->time_nanos : now_ns;
    time_t secs = (time_t)(t / 1000000000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    put(&o, "", 0);
    for (const char *p = tmpl; *p;) {
        if (*p != '{') {
            size_t n = strcspn(p, "{");
            put(&o, p, n);
            p += n;
            continue;
        }
        const char *end = strchr(p, '}');
        char name[128];
        size_t n = (size_t)(end - p - 1) < sizeof(name) - 1 ? (size_t)(end - p - 1) : sizeof(name) - 1;
        memcpy(name, p + 1, n);
        name[n] = '\0';
        p = end + 1;
        char tmp[64];
        if (!strcmp(name, "time")) {
            size_t k = strftime(tmp, sizeof(tmp), "%Y%m%dT%H%M%S", &tm);
            snprintf(tmp + k, sizeof(tmp) - k, ".%03dZ", (int)((t / 1000000) % 1000));
            put(&o, tmp, strlen(tmp));
        } else if (!strcmp(name, "date")) {
            strftime(tmp, sizeof(tmp), "%Y-%m-%d", &tm);
            put(&o, tmp, strlen(tmp));
        } else if (!strcmp(name, "unix_nanos")) {
            snprintf(tmp, sizeof(tmp), "%lld", (long long)t);
            put(&o, tmp, strlen(tmp));
        } else {
            const char *v = NULL;
            for (size_t i = 0; i < r->labels.n && !v; i++)
                if (!strcmp(r->labels.items[i].name, name))
                    v = r->labels.items[i].value;
            put_component(&o, v);
        }
    }
    return o.buf;
}
