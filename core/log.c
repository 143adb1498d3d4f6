// SPDX-License-Identifier: Apache-2.0
#include "log.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../lib/clock.h"
#include "../lib/utf8_valid.h"

static enum profd_log_level min_level = PROFD_LOG_INFO;
static const char *const level_names[] = {"error", "warn", "info", "debug"};

void profd_log_set_level(enum profd_log_level level)
{
    min_level = level;
}

int profd_log_parse_level(const char *name)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(name, level_names[i]) == 0)
            return i;
    return -1;
}

void profd_log_escape(const char *msg, char *out, size_t outlen)
{
    size_t o = 0, len = strlen(msg);
    for (size_t i = 0; i < len;) {
        uint8_t c = (uint8_t)msg[i];
        size_t n = c < 0x20 || c == 0x7f ? 0 : utf8_char_len((const uint8_t *)msg + i, len - i);
        size_t need = n ? n : 4;
        if (o + need >= outlen)
            break;
        if (n)
            memcpy(out + o, msg + i, n);
        else
            snprintf(out + o, 5, "\\x%02x", c);
        o += need;
        i += n ? n : 1;
    }
    out[o] = '\0';
}

void profd_vlog(enum profd_log_level level, const char *component, const char *fmt, va_list ap)
{
    if (level > min_level)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char msg[2048], line[4096];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    profd_log_escape(msg, line, sizeof(line));
    /* One fprintf per line: stdio locks the stream, so lines never interleave. */
    fprintf(stderr, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %-5s %s: %s\n", tm.tm_year + 1900,
            tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
            level_names[level], component ? component : "profd", line);
}

void profd_log(enum profd_log_level level, const char *component, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    profd_vlog(level, component, fmt, ap);
    va_end(ap);
}

bool profd_log_limit_pass_at(struct profd_log_limit *l, int64_t now_ns, unsigned *held)
{
    int64_t window = atomic_load(&l->window_ns);
    if (now_ns - window >= 1000000000 &&
        atomic_compare_exchange_strong(&l->window_ns, &window, now_ns))
        atomic_store(&l->passed, 0);
    if (atomic_fetch_add(&l->passed, 1) >= (l->burst ? l->burst : 1)) {
        atomic_fetch_add(&l->held, 1);
        return false;
    }
    *held = atomic_exchange(&l->held, 0);
    return true;
}

bool profd_log_limit_pass(struct profd_log_limit *l, unsigned *held)
{
    return profd_log_limit_pass_at(l, monotonic_ns(), held);
}

void profd_log_limited(struct profd_log_limit *l, enum profd_log_level level,
                       const char *component, const char *held, const char *fmt, ...)
{
    unsigned n;
    if (level > min_level || !profd_log_limit_pass(l, &n))
        return;
    char msg[2048], more[128] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (n)
        snprintf(more, sizeof(more), " (%u more %s since the last such line)", n, held);
    profd_log(level, component, "%s%s", msg, more);
}
