// SPDX-License-Identifier: Apache-2.0
#include "go_regex.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

/* What PCRE2 needs in place of Go's escape \c, in a class or out of one;
 * NULL when it reads \c as Go does. */
static const char *replacement(char c, bool in_class)
{
    switch (c) {
    case 's':   /* tab, newline, form feed, carriage return, space */
        return in_class ? "\\t\\n\\f\\r\\x20" : "[\\t\\n\\f\\r\\x20]";
    case 'S':   /* PCRE2's, and the vertical tab */
        return in_class ? "\\S\\x0b" : "[\\S\\x0b]";
    case 'v':
        return "\\x0b";
    default:
        return NULL;
    }
}

/* Bytes from p to its closing c, c included; 0 when there is none. */
static size_t through(const char *p, char c)
{
    const char *end = strchr(p, c);
    return end ? (size_t)(end + 1 - p) : 0;
}

/* The length of the quoted text at p ("\Q...\E", or to the end when no
 * \E comes). */
static size_t quoted(const char *p)
{
    const char *end = strstr(p + 2, "\\E");
    return end ? (size_t)(end + 2 - p) : strlen(p);
}

/* The length of a class's opening at p: "[" or "[^", with a "]" right
 * after, which is one of the class's characters. */
static size_t class_opening(const char *p)
{
    size_t n = 1;
    n += p[n] == '^';
    n += p[n] == ']';
    return n;
}

/* The length of a POSIX class at p in a class ("[:alpha:]"), or 0. */
static size_t posix_class(const char *p)
{
    const char *end = p[0] == '[' && p[1] == ':' ? strstr(p + 2, ":]") : NULL;
    return end ? (size_t)(end + 2 - p) : 0;
}

/* The length of the escape at p (p[0] is the backslash) when Go has it,
 * in a class or out of one; 0 when Go refuses it. */
static size_t go_escape(const char *p, bool in_class)
{
    unsigned char c = (unsigned char)p[1];
    if (c && c < 0x80 && !isalnum(c))
        return 2;   /* punctuation stands for itself */
    switch (c) {
    case '1': case '2': case '3': case '4': case '5': case '6': case '7':
        if (p[2] < '0' || p[2] > '7')
            return 0;   /* a backreference */
        __attribute__((fallthrough));   /* an octal code */
    case '0': {
        size_t n = 2;
        while (n < 4 && p[n] >= '0' && p[n] <= '7')
            n++;
        return n;
    }
    case 'x': case 'p': case 'P': {   /* \x{...} or two hex digits; \p{Name} or one letter */
        if (p[2] == '{') {
            size_t braced = through(p + 2, '}');
            return braced ? 2 + braced : 0;
        }
        if (c == 'x')
            return isxdigit((unsigned char)p[2]) && isxdigit((unsigned char)p[3]) ? 4 : 0;
        return isalpha((unsigned char)p[2]) ? 3 : 0;
    }
    case 'b': case 'B': case 'A': case 'z':
        return in_class ? 0 : 2;
    case 'a': case 'f': case 't': case 'n': case 'r': case 'v':
    case 'd': case 'D': case 's': case 'S': case 'w': case 'W':
        return 2;
    default:
        return 0;
    }
}

/* Whether the escape at p, in a class, is a class of characters itself
 * (\d, \w, \s, \pL, \p{Greek} and their negations); its length in *len. */
static bool class_escape(const char *p, size_t *len)
{
    size_t n = p[1] && strchr("dDwWsSpP", p[1]) ? go_escape(p, true) : 0;
    if (n)
        *len = n;
    return n > 0;
}

/* In a class, a - right after a class of characters (and not last) is a
 * character to Go, and a range PCRE2 refuses: it is written \- instead.
 * Whether it was. */
static bool dash_after_class(struct profd_text *o, const char **p)
{
    if ((*p)[0] != '-' || !(*p)[1] || (*p)[1] == ']')
        return false;
    profd_text_add(o, "\\-");
    (*p)++;
    return true;
}

char *profd_go_regex_for_pcre2(const char *re)
{
    if (!strstr(re, "\\s") && !strstr(re, "\\S") && !strstr(re, "\\v") && !strchr(re, '-'))
        return NULL;
    struct profd_text o = {0};
    bool in_class = false, changed = false;
    for (const char *p = re; *p;) {
        size_t n = 1;
        if (p[0] == '\\' && p[1] == 'Q') {
            n = quoted(p);
        } else if (p[0] == '\\' && p[1]) {
            size_t len = 2;   /* an escape PCRE2 reads as Go does, or an escaped character */
            bool a_class = in_class && class_escape(p, &len);
            const char *with = replacement(p[1], in_class);
            if (with)
                profd_text_add(&o, with);
            else
                profd_text_put(&o, p, len);
            p += with ? 2 : len;
            changed |= with != NULL;
            changed |= a_class && dash_after_class(&o, &p);
            continue;
        } else if (!in_class && p[0] == '[') {
            in_class = true;
            n = class_opening(p);
        } else if (in_class && posix_class(p)) {
            n = posix_class(p);
            profd_text_put(&o, p, n);
            p += n;
            changed |= dash_after_class(&o, &p);
            continue;
        } else if (in_class && p[0] == ']') {
            in_class = false;
        }
        profd_text_put(&o, p, n);
        p += n;
    }
    if (!changed) {
        free(o.s);
        return NULL;
    }
    return o.s;
}

/* The length of the group opening "(?..." at p when Go has it: flags
 * ("(?i)", "(?i-s:"), a named group ("(?P<", and "(?<" as Go 1.22 reads
 * it), or "(?:"; 0 for the rest (lookaround, atomic, recursion, comment,
 * branch reset, ...). */
static size_t go_group(const char *p)
{
    const char *q = p + 2;
    if (q[0] == 'P' && q[1] == '<')
        return 4;
    if (q[0] == '<' && q[1] != '=' && q[1] != '!')
        return 3;
    while (*q && strchr("imsU-", *q))
        q++;
    if (*q == ':' || (*q == ')' && q > p + 2))
        return (size_t)(q + 1 - p);
    return 0;
}

/* The length of the repetition operator at p (*, +, ?, or a counted
 * {n}, {n,} or {n,m}), 0 when there is none (a { that is not a count is
 * a character), and in *count_ok whether its counts are ones Go takes
 * (at most 1000, n <= m). */
static size_t repetition(const char *p, bool *count_ok)
{
    *count_ok = true;
    if (*p == '*' || *p == '+' || *p == '?')
        return 1;
    if (*p != '{' || !isdigit((unsigned char)p[1]))
        return 0;
    char *end;
    long lo = strtol(p + 1, &end, 10), hi = lo;
    if (*end == ',') {
        hi = isdigit((unsigned char)end[1]) ? strtol(end + 1, &end, 10) : -1;
        if (hi < 0)
            end++;
    }
    if (*end != '}')
        return 0;
    *count_ok = lo <= 1000 && hi <= 1000 && (hi < 0 || lo <= hi);
    return (size_t)(end + 1 - p);
}

const char *profd_go_regex_unsupported(const char *re, size_t *offset)
{
    bool in_class = false, repeated = false;   /* the last item read was a repetition */
    for (const char *p = re; *p;) {
        size_t n = 1;
        bool count_ok, was_repeated = repeated;
        repeated = false;
        *offset = (size_t)(p - re);
        if (p[0] == '\\' && p[1] == 'Q' && !in_class) {
            n = quoted(p);
        } else if (p[0] == '\\') {
            if (!(n = go_escape(p, in_class)))
                return "an escape Go's regexp does not have (such as a backreference)";
        } else if (in_class) {
            if (!(n = posix_class(p)))
                n = 1;
            in_class = n > 1 || p[0] != ']';
        } else if (p[0] == '[') {
            in_class = true;
            n = class_opening(p);
        } else if (p[0] == '(' && p[1] == '?') {
            if (!(n = go_group(p)))
                return "a group Go's regexp does not have (lookaround, atomic, recursion, "
                       "comment)";
        } else if (p[0] == '(' && p[1] == '*') {
            return "a verb, which Go's regexp does not have";
        } else if ((n = repetition(p, &count_ok))) {
            if (was_repeated)
                return "a repetition of a repetition (possessive or nested), which Go's regexp "
                       "refuses";
            if (!count_ok)
                return "a repeat count Go's regexp refuses (over 1000, or min above max)";
            n += p[n] == '?';   /* lazy */
            repeated = true;
        } else {
            n = 1;
        }
        p += n;
    }
    return NULL;
}
