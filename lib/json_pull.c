// SPDX-License-Identifier: Apache-2.0
#include "json_pull.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8_valid.h"

void json_pull_init(struct json_pull *j, const char *doc, size_t len)
{
    *j = (struct json_pull){.doc = doc, .p = doc, .end = doc + len};
}

void json_pull_free(struct json_pull *j)
{
    free(j->text);
    free(j->key);
    j->text = j->key = NULL;
    j->text_cap = j->key_cap = 0;
}

/* Records what as j's error at the cursor, unless one came first; false. */
static bool pull_fail(struct json_pull *j, const char *what)
{
    if (!j->error) {
        j->error = what;
        j->error_at = j->p;
    }
    return false;
}

static bool pull_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static void pull_skip_space(struct json_pull *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
        j->p++;
}

enum json_pull_kind json_pull_kind(struct json_pull *j)
{
    pull_skip_space(j);
    if (j->error || j->p == j->end)
        return JSON_PULL_NONE;
    switch (*j->p) {
    case '{':
        return JSON_PULL_OBJECT;
    case '[':
        return JSON_PULL_ARRAY;
    case '"':
        return JSON_PULL_STRING;
    case 't':
        return JSON_PULL_TRUE;
    case 'f':
        return JSON_PULL_FALSE;
    case 'n':
        return JSON_PULL_NULL;
    default:
        return *j->p == '-' || pull_is_digit(*j->p) ? JSON_PULL_NUMBER : JSON_PULL_NONE;
    }
}

/* Enters the container opened by open at the cursor. */
static bool pull_enter(struct json_pull *j, char open)
{
    pull_skip_space(j);
    if (j->error)
        return false;
    if (j->p == j->end || *j->p != open)
        return pull_fail(j, open == '{' ? "expected an object" : "expected an array");
    if (j->depth == JSON_PULL_MAX_DEPTH)
        return pull_fail(j, "nested too deep");
    j->p++;
    j->depth++;
    j->after_open = true;
    return true;
}

bool json_pull_object(struct json_pull *j)
{
    return pull_enter(j, '{');
}

bool json_pull_array(struct json_pull *j)
{
    return pull_enter(j, '[');
}

/* Moves to the next item of the container entered, which close ends: true
 * at it; false past the last (the container left) or on an error. */
static bool pull_next_item(struct json_pull *j, char close)
{
    pull_skip_space(j);
    if (j->error)
        return false;
    if (j->p == j->end)
        return pull_fail(j, "unexpected end of the document");
    if (*j->p == close) {
        j->p++;
        j->depth--;
        j->after_open = false;
        return false;
    }
    if (!j->after_open) {
        if (*j->p != ',')
            return pull_fail(j, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
        j->p++;
        pull_skip_space(j);
    }
    j->after_open = false;
    return true;
}

bool json_pull_element(struct json_pull *j)
{
    return pull_next_item(j, ']');
}

/* Makes *buf (*cap bytes) hold at least need; aborts when memory runs out,
 * as the daemon's allocations do. */
static void pull_reserve(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return;
    size_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    char *grown = realloc(*buf, n);
    if (!grown)
        abort();
    *buf = grown;
    *cap = n;
}

/* Appends the n bytes at s to *buf (NULL: checking only) at *len. */
static void pull_put(char **buf, size_t *cap, size_t *len, const char *s, size_t n)
{
    if (!buf)
        return;
    pull_reserve(buf, cap, *len + n + 1);
    memcpy(*buf + *len, s, n);
    *len += n;
}

/* The four hex digits at s (s + 4 <= end), or -1. */
static long pull_hex4(const char *s)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        int d = pull_is_digit(c) ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                      : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* The code point of the \u escape at *p (one or a surrogate pair), *p
 * moved past it; -1 when it is not one, 0 for U+0000. */
static long pull_unicode_escape(const char **p, const char *end)
{
    const char *s = *p;
    long cp = end - s >= 6 ? pull_hex4(s + 2) : -1;
    if (cp < 0 || (cp >= 0xdc00 && cp <= 0xdfff))
        return -1;
    s += 6;
    if (cp >= 0xd800 && cp <= 0xdbff) {
        long low = end - s >= 6 && s[0] == '\\' && s[1] == 'u' ? pull_hex4(s + 2) : -1;
        if (low < 0xdc00 || low > 0xdfff)
            return -1;
        cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
        s += 6;
    }
    *p = s;
    return cp;
}

/* The escape at *p (a backslash) decoded into out; its length, 0 when it
 * is not one JSON allows in a string. */
static size_t pull_escape(const char **p, const char *end, char out[4])
{
    const char *s = *p;
    if (end - s < 2)
        return 0;
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *simple = s[1] ? strchr(from, s[1]) : NULL;
    if (simple) {
        out[0] = to[simple - from];
        *p = s + 2;
        return 1;
    }
    long cp = s[1] == 'u' ? pull_unicode_escape(p, end) : -1;
    return cp > 0 ? utf8_encode((uint32_t)cp, out) : 0;
}

/* Reads the string at the cursor into *buf (NULL: checks it only),
 * NUL-terminated, *len its length. */
static bool pull_read_string(struct json_pull *j, char **buf, size_t *cap, size_t *len)
{
    const char *p = j->p + 1, *end = j->end;
    size_t n = 0;
    for (;;) {
        const char *run = p;
        while (p < end && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20 &&
               (unsigned char)*p < 0x80)
            p++;
        pull_put(buf, cap, &n, run, (size_t)(p - run));
        if (p == end) {
            j->p = p;
            return pull_fail(j, "a string without its closing quote");
        }
        if (*p == '"')
            break;
        j->p = p;
        if ((unsigned char)*p < 0x20)
            return pull_fail(j, "a control character in a string");
        if (*p == '\\') {
            char out[4];
            size_t k = pull_escape(&p, end, out);
            if (!k)
                return pull_fail(j, "an escape JSON does not have, or \\u0000, in a string");
            pull_put(buf, cap, &n, out, k);
        } else {
            size_t k = utf8_char_len((const uint8_t *)p, (size_t)(end - p));
            if (!k)
                return pull_fail(j, "a string that is not UTF-8");
            pull_put(buf, cap, &n, p, k);
            p += k;
        }
    }
    j->p = p + 1;
    if (buf) {
        pull_reserve(buf, cap, n + 1);
        (*buf)[n] = '\0';
        *len = n;
    }
    return true;
}

/* Reads the number at the cursor, checked against JSON's grammar: its text
 * at *start, *len bytes; *integer when it has no fraction or exponent. */
static bool pull_scan_number(struct json_pull *j, const char **start, size_t *len, bool *integer)
{
    const char *p = j->p, *end = j->end;
    p += p < end && *p == '-';
    if (p == end || !pull_is_digit(*p))
        return pull_fail(j, "expected a value");
    if (*p == '0')
        p++;
    else
        while (p < end && pull_is_digit(*p))
            p++;
    *integer = true;
    if (p < end && *p == '.') {
        *integer = false;
        if (++p == end || !pull_is_digit(*p)) {
            j->p = p;
            return pull_fail(j, "expected a digit after a decimal point");
        }
        while (p < end && pull_is_digit(*p))
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        *integer = false;
        p++;
        p += p < end && (*p == '+' || *p == '-');
        if (p == end || !pull_is_digit(*p)) {
            j->p = p;
            return pull_fail(j, "expected a digit in an exponent");
        }
        while (p < end && pull_is_digit(*p))
            p++;
    }
    *start = j->p;
    *len = (size_t)(p - j->p);
    j->p = p;
    return true;
}

/* The integer written in the len bytes at s (digits after an optional
 * minus) into *v; false when int64_t does not hold it. */
static bool pull_integer_value(const char *s, size_t len, int64_t *v)
{
    bool negative = *s == '-';
    uint64_t u = 0;
    for (size_t i = negative; i < len; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (u > (UINT64_MAX - d) / 10)
            return false;
        u = u * 10 + d;
    }
    if (u > (uint64_t)INT64_MAX + negative)
        return false;
    *v = negative ? (int64_t)(0 - u) : (int64_t)u;
    return true;
}

static bool pull_literal(struct json_pull *j, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n))
        return pull_fail(j, "expected a value");
    j->p += n;
    return true;
}

bool json_pull_member(struct json_pull *j, const char **key)
{
    if (!pull_next_item(j, '}'))
        return false;
    size_t len;
    if (j->p == j->end || *j->p != '"')
        return pull_fail(j, "expected a member name in quotes");
    if (!pull_read_string(j, &j->key, &j->key_cap, &len))
        return false;
    pull_skip_space(j);
    if (j->p == j->end || *j->p != ':')
        return pull_fail(j, "expected ':' after a member name");
    j->p++;
    *key = j->key;
    return true;
}

bool json_pull_skip(struct json_pull *j)
{
    const char *text;
    size_t len;
    bool integer;
    switch (json_pull_kind(j)) {
    case JSON_PULL_OBJECT:
        if (!json_pull_object(j))
            return false;
        while (json_pull_member(j, &text))
            if (!json_pull_skip(j))
                return false;
        return !j->error;
    case JSON_PULL_ARRAY:
        if (!json_pull_array(j))
            return false;
        while (json_pull_element(j))
            if (!json_pull_skip(j))
                return false;
        return !j->error;
    case JSON_PULL_STRING:
        return pull_read_string(j, NULL, NULL, NULL);
    case JSON_PULL_NUMBER:
        return pull_scan_number(j, &text, &len, &integer);
    case JSON_PULL_TRUE:
        return pull_literal(j, "true");
    case JSON_PULL_FALSE:
        return pull_literal(j, "false");
    case JSON_PULL_NULL:
        return pull_literal(j, "null");
    case JSON_PULL_NONE:
        break;
    }
    return pull_fail(j, j->p == j->end ? "unexpected end of the document" : "expected a value");
}

bool json_pull_string(struct json_pull *j, const char **s, size_t *len)
{
    if (json_pull_kind(j) != JSON_PULL_STRING) {
        json_pull_skip(j);
        return false;
    }
    size_t n;
    if (!pull_read_string(j, &j->text, &j->text_cap, &n))
        return false;
    *s = j->text;
    if (len)
        *len = n;
    return true;
}

/* Reads the value at the cursor as scan_number does; false, the value read
 * past, when it is not a number. */
static bool pull_read_number(struct json_pull *j, const char **text, size_t *len, bool *integer)
{
    if (json_pull_kind(j) != JSON_PULL_NUMBER) {
        json_pull_skip(j);
        return false;
    }
    return pull_scan_number(j, text, len, integer);
}

bool json_pull_number(struct json_pull *j, double *v)
{
    const char *text;
    size_t len;
    bool integer;
    if (!pull_read_number(j, &text, &len, &integer))
        return false;
    char small[64], *copy = small;
    size_t cap = sizeof(small);
    if (len >= cap) {   /* digits past a double's precision: rare */
        copy = NULL;
        cap = 0;
        pull_reserve(&copy, &cap, len + 1);
    }
    memcpy(copy, text, len);
    copy[len] = '\0';
    *v = strtod(copy, NULL);
    if (copy != small)
        free(copy);
    return true;
}

bool json_pull_integer(struct json_pull *j, int64_t *v)
{
    const char *text;
    size_t len;
    bool integer;
    return pull_read_number(j, &text, &len, &integer) && integer &&
           pull_integer_value(text, len, v);
}

bool json_pull_end(struct json_pull *j)
{
    pull_skip_space(j);
    if (j->error)
        return false;
    return j->p == j->end || pull_fail(j, "more after the end of the document");
}

bool json_pull_failed(const struct json_pull *j)
{
    return j->error != NULL;
}

void json_pull_error(const struct json_pull *j, char *out, size_t outlen)
{
    if (!j->error) {
        snprintf(out, outlen, "no error");
        return;
    }
    size_t line = 1;
    const char *line_start = j->doc, *nl;
    while ((nl = memchr(line_start, '\n', (size_t)(j->error_at - line_start)))) {
        line++;
        line_start = nl + 1;
    }
    snprintf(out, outlen, "%s at line %zu, column %zu", j->error, line,
             (size_t)(j->error_at - line_start) + 1);
}

struct json_mark json_pull_mark(const struct json_pull *j)
{
    return (struct json_mark){j->p, j->depth, j->after_open};
}

void json_pull_seek(struct json_pull *j, struct json_mark m)
{
    j->p = m.p;
    j->depth = m.depth;
    j->after_open = m.after_open;
}
