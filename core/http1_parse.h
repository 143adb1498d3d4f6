// SPDX-License-Identifier: Apache-2.0
/*
 * The HTTP/1.1 request head (RFC 9112): request line and header fields,
 * parsed in place, and the size line of a chunk. Strict where leniency lets
 * two parties read one message differently (request smuggling): both
 * Content-Length and Transfer-Encoding, a repeated or malformed
 * Content-Length, a transfer coding other than chunked, folded header
 * lines, and whitespace before a field's colon are refused.
 */
#ifndef PROFD_HTTP1_PARSE_H
#define PROFD_HTTP1_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP1_MAX_FIELDS 100

struct http1_field {
    const char *name, *value;   /* NUL-terminated, inside the parsed buffer */
};

struct http1_head {
    const char *method, *target;   /* NUL-terminated, inside the parsed buffer */
    int minor;                     /* HTTP/1.<minor> */
    struct http1_field fields[HTTP1_MAX_FIELDS];
    size_t nfields;
    bool chunked;                  /* Transfer-Encoding: chunked */
    bool has_length;
    uint64_t content_length;
    bool keep_alive;               /* by version and Connection */
    bool expect_continue;          /* Expect: 100-continue */
};

/*
 * Parses the head in buf[0..len), which ends with the empty line's CRLF
 * (or LF), rewriting it in place (NULs after tokens). Returns 0, or the
 * HTTP status to refuse it with (400, 501 for an unknown transfer coding,
 * 505 for a version other than 1.x, 431 for too many fields) with why set.
 */
int http1_parse_head(char *buf, size_t len, struct http1_head *h, char *why, size_t whylen);

/* A field's value by name (case-insensitive), or NULL. */
const char *http1_field(const struct http1_head *h, const char *name);

/*
 * A chunk-size line ("1a3f[;ext]" CRLF) at line[0..len), len counting the
 * line without its CRLF: the size into *size, 0 on success; -1 when it is
 * not one.
 */
int http1_chunk_size(const char *line, size_t len, uint64_t *size);

#endif
