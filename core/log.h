// SPDX-License-Identifier: Apache-2.0
/* Structured log lines on stderr: time, level, component id, message. */
#ifndef PROFD_LOG_H
#define PROFD_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "profd/plugin.h"

/* Lines below this level are suppressed. Set once at start-up. */
void profd_log_set_level(enum profd_log_level level);
/* Parses "error|warn|info|debug"; returns -1 when unknown. */
int profd_log_parse_level(const char *name);
/* Writes one line; component may be NULL for the daemon itself. Thread-safe.
 * What the message quotes of a client's input cannot forge lines or move
 * a terminal: it is written as profd_log_escape makes it. */
void profd_log(enum profd_log_level level, const char *component, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void profd_vlog(enum profd_log_level level, const char *component, const char *fmt, va_list ap);
/* msg into out (outlen > 0 bytes) as one printable line: control bytes
 * (newlines among them) and bytes that start no UTF-8 character as \xNN,
 * the rest as it is; cut between characters where out is too small. */
void profd_log_escape(const char *msg, char *out, size_t outlen);

/* One place's lines let through at most burst a second (once when burst is
 * 0). Zeroed to start, burst set before the first line. */
struct profd_log_limit {
    unsigned burst;
    _Atomic int64_t window_ns;  /* CLOCK_MONOTONIC: when the current second began */
    _Atomic unsigned passed;    /* lines that went in it */
    _Atomic unsigned held;      /* lines held back since the last that went */
};
/* Whether a line from l may go now; when it may, *held is how many were
 * held back since the last one that went. Thread-safe. */
bool profd_log_limit_pass(struct profd_log_limit *l, unsigned *held);
/* The same at now_ns on CLOCK_MONOTONIC. */
bool profd_log_limit_pass_at(struct profd_log_limit *l, int64_t now_ns, unsigned *held);
/* Writes one line when l lets it through, ending it with " (N more HELD
 * since the last such line)" when N were held back. */
void profd_log_limited(struct profd_log_limit *l, enum profd_log_level level,
                       const char *component, const char *held, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif
