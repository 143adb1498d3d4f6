// SPDX-License-Identifier: Apache-2.0
#include "go_regex.h"

#include <stdbool.h>
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

char *profd_go_regex_for_pcre2(const char *re)
{
    if (!strstr(re, "\\s") && !strstr(re, "\\S") && !strstr(re, "\\v"))
        return NULL;
    struct profd_text o = {0};
    bool in_class = false;
    for (const char *p = re; *p;) {
        size_t n = 1;
        if (p[0] == '\\' && p[1] == 'Q') {   /* quoted text, through \E */
            const char *end = strstr(p + 2, "\\E");
            n = end ? (size_t)(end + 2 - p) : strlen(p);
        } else if (p[0] == '\\' && p[1]) {
            const char *with = replacement(p[1], in_class);
            if (with) {
                profd_text_add(&o, with);
                p += 2;
                continue;
            }
            n = 2;   /* an escape PCRE2 reads as Go does, or an escaped character */
        } else if (!in_class && p[0] == '[') {
            in_class = true;
            n += p[n] == '^';
            n += p[n] == ']';   /* a ] first is one of the class's characters */
        } else if (in_class && p[0] == '[' && p[1] == ':' && strstr(p + 2, ":]")) {
            n = (size_t)(strstr(p + 2, ":]") + 2 - p);   /* [:alpha:] */
        } else if (in_class && p[0] == ']') {
            in_class = false;
        }
        profd_text_put(&o, p, n);
        p += n;
    }
    return o.s;
}
