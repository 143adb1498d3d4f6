// SPDX-License-Identifier: Apache-2.0
/* A JSON document in memory read value by value, in order, with no tree
 * built: what it costs beside the document is the string at hand, however
 * large the document. Every value read or skipped is checked against RFC
 * 8259 (strings well-formed UTF-8 without NUL, nesting at most
 * JSON_PULL_MAX_DEPTH deep); the first error stops the reader, and
 * json_pull_error says what it was and where.
 *
 * A reader goes through containers with the caller's loops:
 *
 *     if (json_pull_object(j))
 *         while (json_pull_member(j, &key))
 *             ... read or skip the member's value ...
 *     if (json_pull_failed(j)) ...
 *
 * Each member's or element's value must be read or skipped before the next
 * is asked for. A mark taken at a value lets a reader come back to it. */
#ifndef PROFD_LIB_JSON_PULL_H
#define PROFD_LIB_JSON_PULL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_PULL_MAX_DEPTH 512

enum json_pull_kind {
    JSON_PULL_NONE,   /* no value here: the end, or not the start of one */
    JSON_PULL_OBJECT,
    JSON_PULL_ARRAY,
    JSON_PULL_STRING,
    JSON_PULL_NUMBER,
    JSON_PULL_TRUE,
    JSON_PULL_FALSE,
    JSON_PULL_NULL,
};

struct json_pull {
    const char *doc, *p, *end;
    unsigned depth;
    bool after_open;   /* the container just entered has given nothing yet */
    const char *error, *error_at;   /* the first error, NULL while none */
    char *text, *key;   /* the string and the member name at hand */
    size_t text_cap, key_cap;
};

/* A place in the document a reader can come back to. */
struct json_mark {
    const char *p;
    unsigned depth;
    bool after_open;
};

/* A reader of the len bytes at doc, which must outlive it. */
void json_pull_init(struct json_pull *j, const char *doc, size_t len);

/* Frees what j holds (not the document). */
void json_pull_free(struct json_pull *j);

/* The kind of the value at j's cursor, read from its first character
 * (the value itself is checked when it is read or skipped). */
enum json_pull_kind json_pull_kind(struct json_pull *j);

/* Enters the object at the cursor; false (an error) when it is none. */
bool json_pull_object(struct json_pull *j);

/* The next member of the object entered: true with *key its name and the
 * cursor at its value; false past the last member, which leaves the
 * object, or on an error. *key is valid until the member's value is read
 * or skipped (an object in it has names of its own): compare it first. */
bool json_pull_member(struct json_pull *j, const char **key);

/* Enters the array at the cursor; false (an error) when it is none. */
bool json_pull_array(struct json_pull *j);

/* The next element of the array entered: true with the cursor at it;
 * false past the last, which leaves the array, or on an error. */
bool json_pull_element(struct json_pull *j);

/* Reads the value at the cursor whatever it is; true when it was a string,
 * *s then its decoded bytes, NUL-terminated, valid until the next string
 * read (*len their count). */
bool json_pull_string(struct json_pull *j, const char **s, size_t *len);

/* Reads the value at the cursor whatever it is; true when it was a number
 * (*v its value, the nearest double). */
bool json_pull_number(struct json_pull *j, double *v);

/* Reads the value at the cursor whatever it is; true when it was a number
 * written as an integer (no fraction or exponent) that int64_t holds. */
bool json_pull_integer(struct json_pull *j, int64_t *v);

/* Reads past the value at the cursor, checking it; false on an error. */
bool json_pull_skip(struct json_pull *j);

/* Whether only white space is left after the value read; an error when
 * anything else is. */
bool json_pull_end(struct json_pull *j);

/* Whether j has met an error. */
bool json_pull_failed(const struct json_pull *j);

/* The error as "what at line L, column C" (bytes, from 1) into out. */
void json_pull_error(const struct json_pull *j, char *out, size_t outlen);

/* The cursor, for json_pull_seek. */
struct json_mark json_pull_mark(const struct json_pull *j);

/* Puts the cursor back at m, a mark of the same document. */
void json_pull_seek(struct json_pull *j, struct json_mark m);

#endif
