// SPDX-License-Identifier: Apache-2.0
/* Headers a client sends with every request besides its own, as
 * Prometheus's http_headers give them: by name, values written in the
 * config, secrets (the same; Prometheus hides them on its config page),
 * and files read at every request, their content's surrounding white
 * space trimmed. Names the client sets itself, or that change the
 * connection, are refused, as Prometheus refuses them. */
#ifndef PROFD_LIB_HTTP_HEADERS_H
#define PROFD_LIB_HTTP_HEADERS_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>

#include "profd/options.h"
#include "profd/plugin.h"

/* One header's values, all sent, in this order. */
struct http_header {
    struct profd_str_list values, secrets, files;
};

static const struct profd_option http_header_fields[] = {
    {"values", PROFD_OPT_STRING_LIST, offsetof(struct http_header, values), NULL,
     "values as written"},
    {"secrets", PROFD_OPT_STRING_LIST, offsetof(struct http_header, secrets), NULL,
     "values as written, as values are (Prometheus hides these on its config page)"},
    {"files", PROFD_OPT_STRING_LIST, offsetof(struct http_header, files), NULL,
     "files each holding a value, read at every request (white space around it trimmed)"},
    {0},
};

static const struct profd_option http_header_value[] = {
    {"<name>", PROFD_OPT_OBJECT, 0, NULL, "the header of that name", http_header_fields},
    {0},
};

/* The option entry of a struct profd_map of struct http_header, member of
 * type, named http_headers. */
#define HTTP_HEADERS_OPTION(type, member)                                                      \
    {"http_headers", PROFD_OPT_MAP, offsetof(type, member), NULL,                              \
     "headers sent with every request, by name, as Prometheus's http_headers (none that "     \
     "profd sets itself)",                                                                     \
     http_header_value, sizeof(struct http_header)}

/* Whether headers (a map of struct http_header) may be sent: each name an
 * HTTP token, given once whatever its case, not one Prometheus refuses
 * (Authorization, Host, User-Agent, Accept-Encoding, Content-*,
 * Connection and the like); each value given in the config free of line
 * breaks. PROFD_OK, else PROFD_ERR with the first problem reported
 * through host->diag, prefix before it. */
int http_headers_validate(const struct profd_host *host, struct profd_diag *d,
                          const struct profd_map *headers, const char *prefix);

/* What is wrong with the name of header i of m, a map of headers of any
 * value type: not an HTTP token, or given before whatever its case; NULL
 * when nothing is. */
const char *http_header_name_problem(const struct profd_map *m, size_t i);

/* Whether a value of l holds a line break, which would end its header. */
bool http_header_values_broken(const struct profd_str_list *l);

/* Appends the line of header name with value (len bytes) to *list. */
void http_header_append(struct curl_slist **list, const char *name, const char *value,
                        size_t len);

/* Appends a "Name: value" line to *list for every value of headers, in
 * the order written, each file read now. False, with err saying which
 * file could not be read or held a line break, when one did not make a
 * value: *list then holds the lines before it. */
bool http_headers_append(const struct profd_map *headers, struct curl_slist **list, char *err,
                         size_t errlen);

#endif
