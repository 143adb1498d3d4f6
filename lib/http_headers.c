// SPDX-License-Identifier: Apache-2.0
#include "http_headers.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "file_io.h"
#include "grow.h"

/* The longest header file read. */
#define HEADER_FILE_MAX (64 * 1024)

/* What Prometheus refuses to set (those its client or the transport
 * sets, or that change the connection), and what changes the connection
 * in HTTP/1.1 besides. */
static const char *const reserved[] = {
    "authorization", "host", "content-encoding", "content-length", "content-type",
    "user-agent", "connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
    "www-authenticate", "accept-encoding", "x-prometheus-remote-write-version",
    "x-prometheus-remote-read-version", "x-prometheus-scrape-timeout-seconds", "x-amz-date",
    "x-amz-security-token", "x-amz-content-sha256", "te", "transfer-encoding", "upgrade",
};

/* Whether name is an HTTP token (RFC 9110's tchar, one or more). */
static bool is_token(const char *name)
{
    for (const char *c = name; *c; c++)
        if (!isalnum((unsigned char)*c) && !strchr("!#$%&'*+-.^_`|~", *c))
            return false;
    return *name != '\0';
}

static bool is_reserved(const char *name)
{
    for (size_t i = 0; i < sizeof(reserved) / sizeof(*reserved); i++)
        if (strcasecmp(name, reserved[i]) == 0)
            return true;
    return false;
}

bool http_header_values_broken(const struct profd_str_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (strpbrk(l->items[i], "\r\n"))
            return true;
    return false;
}

const char *http_header_name_problem(const struct profd_map *m, size_t i)
{
    if (!is_token(m->keys[i]))
        return "not a header name";
    for (size_t j = 0; j < i; j++)
        if (strcasecmp(m->keys[i], m->keys[j]) == 0)
            return "given twice";
    return NULL;
}

int http_headers_validate(const struct profd_host *host, struct profd_diag *d,
                          const struct profd_map *headers, const char *prefix)
{
    const struct http_header *h = headers->values;
    for (size_t i = 0; i < headers->n; i++) {
        const char *name = headers->keys[i], *why = http_header_name_problem(headers, i);
        if (!why && is_reserved(name))
            why = "one profd sets itself, or that changes the connection: not allowed";
        else if (!why && (http_header_values_broken(&h[i].values) ||
                          http_header_values_broken(&h[i].secrets)))
            why = "a value holds a line break";
        if (why) {
            host->diag(d, &h[i], "%shttp_headers: '%s': %s", prefix, name, why);
            return PROFD_ERR;
        }
    }
    return PROFD_OK;
}

/* "Name;" for an empty value, as curl would otherwise take "Name:" to
 * mean "do not send". */
void http_header_append(struct curl_slist **list, const char *name, const char *value,
                        size_t len)
{
    char *line = len == 0 ? must_asprintf("%s;", name)
                          : must_asprintf("%s: %.*s", name, (int)len, value);
    *list = curl_slist_append(*list, line);
    free(line);
}

/* Appends the line of name with the content of the file at path, white
 * space around it trimmed. */
static bool append_file(struct curl_slist **list, const char *name, const char *path,
                        char *err, size_t errlen)
{
    size_t len;
    char *text = read_small_file(path, HEADER_FILE_MAX, &len);
    if (!text) {
        snprintf(err, errlen, "http_headers: '%s': cannot read %s", name, path);
        return false;
    }
    const char *start = text, *end = text + len;
    while (start < end && isspace((unsigned char)*start))
        start++;
    while (end > start && isspace((unsigned char)end[-1]))
        end--;
    bool one_line = !memchr(start, '\n', (size_t)(end - start)) &&
                    !memchr(start, '\r', (size_t)(end - start)) &&
                    !memchr(start, '\0', (size_t)(end - start));
    if (one_line)
        http_header_append(list, name, start, (size_t)(end - start));
    else
        snprintf(err, errlen, "http_headers: '%s': %s holds more than one line", name, path);
    free(text);
    return one_line;
}

bool http_headers_append(const struct profd_map *headers, struct curl_slist **list, char *err,
                         size_t errlen)
{
    const struct http_header *h = headers->values;
    for (size_t i = 0; i < headers->n; i++) {
        const char *name = headers->keys[i];
        for (size_t k = 0; k < h[i].values.n; k++)
            http_header_append(list, name, h[i].values.items[k], strlen(h[i].values.items[k]));
        for (size_t k = 0; k < h[i].secrets.n; k++)
            http_header_append(list, name, h[i].secrets.items[k], strlen(h[i].secrets.items[k]));
        for (size_t k = 0; k < h[i].files.n; k++)
            if (!append_file(list, name, h[i].files.items[k], err, errlen))
                return false;
    }
    return true;
}
