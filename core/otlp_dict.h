// SPDX-License-Identifier: Apache-2.0
/*
 * The ProfilesDictionary of an OTLP request, parsed once into flat tables
 * whose every index has been checked, so that translating the profiles that
 * share it needs no further bounds checks. Strings and bytes point into the
 * request buffer, which must outlive the dictionary.
 */
#ifndef PROFD_OTLP_DICT_H
#define PROFD_OTLP_DICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pb.h"
#include "profd/model.h"

enum otlp_value_kind {
    OTLP_V_NONE, OTLP_V_STRING, OTLP_V_BOOL, OTLP_V_INT, OTLP_V_DOUBLE, OTLP_V_BYTES,
    OTLP_V_ARRAY, OTLP_V_KVLIST, OTLP_V_STRINDEX,
};

/* One common.v1.AnyValue. Arrays and kvlists keep their encoded bytes. */
struct otlp_value {
    enum otlp_value_kind kind;
    const uint8_t *bytes;      /* STRING, BYTES, ARRAY, KVLIST */
    size_t len;
    int64_t i;                 /* INT, BOOL, STRINDEX */
    double d;
};

/* A run of indices in the dictionary's index pool. */
struct otlp_list {
    uint32_t start, count;
};

struct otlp_mapping {
    uint64_t memory_start, memory_limit, file_offset;
    uint32_t filename;
    struct otlp_list attrs;
};

struct otlp_line {
    uint32_t function;
    int64_t line, column;
};

struct otlp_location {
    uint64_t address;
    uint32_t mapping;
    uint32_t lines_start, nlines;   /* into otlp_dict.lines */
    struct otlp_list attrs;
};

struct otlp_function {
    uint32_t name, system_name, filename;
    int64_t start_line;
};

struct otlp_link {
    const uint8_t *trace_id, *span_id;
    uint32_t trace_len, span_len;
};

struct otlp_attr {
    uint32_t key, unit;
    struct otlp_value value;
};

struct otlp_stack {
    struct otlp_list locations;
};

struct otlp_dict {
    const uint8_t *base;            /* the request, for byte offsets */
    struct profd_str *strings;      /* point into the request */
    size_t nstrings, strings_cap;
    struct otlp_mapping *mappings;
    size_t nmappings, mappings_cap;
    struct otlp_location *locations;
    size_t nlocations, locations_cap;
    struct otlp_line *lines;
    size_t nlines, lines_cap;
    struct otlp_function *functions;
    size_t nfunctions, functions_cap;
    struct otlp_link *links;
    size_t nlinks, links_cap;
    struct otlp_attr *attrs;
    size_t nattrs, attrs_cap;
    struct otlp_stack *stacks;
    size_t nstacks, stacks_cap;
    uint32_t *pool;                 /* index lists of every entry */
    size_t npool, pool_cap;
};

/* Adds one encoded ProfilesDictionary occurrence (a request may repeat the
 * field; repeated tables concatenate). 0, or -1 with err set. */
int otlp_dict_add(struct otlp_dict *d, const uint8_t *base, const uint8_t *data, size_t len,
                  char *err, size_t errlen);
/* Checks every index between tables and resolves string_value_strindex
 * values; call once after the last otlp_dict_add. 0, or -1 with err set. */
int otlp_dict_check(struct otlp_dict *d, char *err, size_t errlen);
/* Frees the tables (not the request). Accepts a zeroed dict. */
void otlp_dict_free(struct otlp_dict *d);

/* Decodes one AnyValue; false with *why set when malformed. */
bool otlp_value_parse(const uint8_t *data, size_t len, struct otlp_value *v, const char **why);
/* Appends the values of a repeated int32 field (packed or not) to the pool
 * and extends *list; false when malformed. */
bool otlp_pool_append(struct otlp_dict *d, const struct pb_field *f, struct otlp_list *list);

#endif
