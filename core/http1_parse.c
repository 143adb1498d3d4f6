// SPDX-License-Identifier: Apache-2.0
#include "http1_parse.h"

#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

__attribute__((format(printf, 4, 5))) static int refuse(int status, char *why, size_t whylen,
                                                        const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
    return status;
}

/* RFC 9110 token characters. */
static bool is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Splits off the line at *p (ending in LF, CR before it dropped): returns
 * it NUL-terminated and moves *p past it; NULL at end. */
static char *next_line(char **p, char *end)
{
    if (*p >= end)
        return NULL;
    char *line = *p, *lf = memchr(line, '\n', (size_t)(end - line));
    if (!lf)
        lf = end - 1;   /* the caller's buffer ends with a line end */
    *p = lf + 1;
    if (lf > line && lf[-1] == '\r')
        lf--;
    *lf = '\0';
    return line;
}

static int request_line(char *line, struct http1_head *h, char *why, size_t whylen)
{
    char *sp1 = strchr(line, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    if (!sp1 || !sp2 || sp1 == line || sp2 == sp1 + 1 || strchr(sp2 + 1, ' '))
        return refuse(400, why, whylen, "malformed request line");
    *sp1 = *sp2 = '\0';
    for (const char *m = line; *m; m++)
        if (!is_tchar((unsigned char)*m))
            return refuse(400, why, whylen, "malformed method");
    const char *v = sp2 + 1;
    if (strncmp(v, "HTTP/1.", 7) || v[7] < '0' || v[7] > '9' || v[8])
        return refuse(505, why, whylen, "version \"%.20s\" is not HTTP/1.x", v);
    h->method = line;
    h->target = sp1 + 1;
    h->minor = v[7] - '0';
    return 0;
}

/* Trims optional whitespace around a field value in place. */
static char *trim(char *v)
{
    while (*v == ' ' || *v == '\t')
        v++;
    size_t n = strlen(v);
    while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
        v[--n] = '\0';
    return v;
}

/* Whether a comma-separated list value holds token (case-insensitive). */
static bool list_has(const char *value, const char *token)
{
    size_t n = strlen(token);
    for (const char *p = value; *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        size_t len = strcspn(p, ",");
        size_t trimmed = len;
        while (trimmed && (p[trimmed - 1] == ' ' || p[trimmed - 1] == '\t'))
            trimmed--;
        if (trimmed == n && !strncasecmp(p, token, n))
            return true;
        p += len;
    }
    return false;
}

/* What the framing fields say, checked. */
static int framing(struct http1_head *h, char *why, size_t whylen)
{
    int lengths = 0;
    for (size_t i = 0; i < h->nfields; i++) {
        const struct http1_field *f = &h->fields[i];
        if (!strcasecmp(f->name, "Content-Length")) {
            if (!*f->value || strspn(f->value, "0123456789") != strlen(f->value) ||
                strlen(f->value) > 19 || lengths++)
                return refuse(400, why, whylen, "bad or repeated Content-Length");
            h->content_length = strtoull(f->value, NULL, 10);
            h->has_length = true;
        } else if (!strcasecmp(f->name, "Transfer-Encoding")) {
            if (h->chunked || strcasecmp(f->value, "chunked"))
                return refuse(501, why, whylen, "Transfer-Encoding \"%.40s\" is not supported "
                              "(chunked)", f->value);
            h->chunked = true;
        }
    }
    if (h->chunked && h->has_length)
        return refuse(400, why, whylen, "both Content-Length and Transfer-Encoding");
    return 0;
}

int http1_parse_head(char *buf, size_t len, struct http1_head *h, char *why, size_t whylen)
{
    memset(h, 0, sizeof(*h));
    char *p = buf, *end = buf + len;
    char *line = next_line(&p, end);
    while (line && !*line)   /* empty lines before a request are allowed */
        line = next_line(&p, end);
    if (!line)
        return refuse(400, why, whylen, "empty request");
    int rc = request_line(line, h, why, whylen);
    if (rc)
        return rc;
    while ((line = next_line(&p, end)) && *line) {
        if (*line == ' ' || *line == '\t')
            return refuse(400, why, whylen, "folded header line");
        char *colon = strchr(line, ':');
        if (!colon || colon == line)
            return refuse(400, why, whylen, "malformed header line");
        *colon = '\0';
        for (const char *n = line; *n; n++)
            if (!is_tchar((unsigned char)*n))
                return refuse(400, why, whylen, "malformed header name");
        if (h->nfields == HTTP1_MAX_FIELDS)
            return refuse(431, why, whylen, "more than %d header fields", HTTP1_MAX_FIELDS);
        h->fields[h->nfields++] = (struct http1_field){line, trim(colon + 1)};
    }
    rc = framing(h, why, whylen);
    if (rc)
        return rc;
    const char *connection = http1_field(h, "Connection");
    h->keep_alive = h->minor >= 1 ? !(connection && list_has(connection, "close"))
                                  : connection && list_has(connection, "keep-alive");
    const char *expect = http1_field(h, "Expect");
    h->expect_continue = h->minor >= 1 && expect && !strcasecmp(expect, "100-continue");
    return 0;
}

const char *http1_field(const struct http1_head *h, const char *name)
{
    for (size_t i = 0; i < h->nfields; i++)
        if (!strcasecmp(h->fields[i].name, name))
            return h->fields[i].value;
    return NULL;
}

int http1_chunk_size(const char *line, size_t len, uint64_t *size)
{
    uint64_t v = 0;
    size_t i = 0;
    for (; i < len; i++) {
        char c = line[i];
        int d = c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f'
                                                   ? (c | 0x20) - 'a' + 10 : -1;
        if (d < 0)
            break;
        if (i == 15)   /* 2^60 and more: no body is that long */
            return -1;
        v = v << 4 | (uint64_t)d;
    }
    if (i == 0 || (i < len && line[i] != ';' && line[i] != ' ' && line[i] != '\t'))
        return -1;
    *size = v;
    return 0;
}
