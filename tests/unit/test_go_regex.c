// SPDX-License-Identifier: Apache-2.0
/* Go regex syntax next to PCRE2's: the escapes the two read differently,
 * in classes and out, what must pass through untouched, and where a
 * pattern leaves Go's syntax (the whole of that is compared with Go's own
 * regexp in test_relabel). */
#include "check.h"

#include "../../core/alloc.h"
#include "../../core/go_regex.h"

TEST(escapes_read_differently_are_rewritten)
{
    static const struct {
        const char *go, *pcre2;   /* pcre2 NULL: left as it is */
    } cases[] = {
        {"a.*b", NULL},
        {"\\d+\\w", NULL},
        {"\\s", "[\\t\\n\\f\\r\\x20]"},
        {"a\\Sb", "a[\\S\\x0b]b"},
        {"\\v", "\\x0b"},
        {"[\\s,]", "[\\t\\n\\f\\r\\x20,]"},
        {"[^\\S]", "[^\\S\\x0b]"},
        {"[]\\s]", "[]\\t\\n\\f\\r\\x20]"},        /* ] first is a member */
        {"[^]\\v]", "[^]\\x0b]"},
        {"[[:space:]\\s]", "[[:space:]\\t\\n\\f\\r\\x20]"},
        {"\\\\s", NULL},                             /* an escaped backslash, then s */
        {"\\Q\\s\\E\\s", "\\Q\\s\\E[\\t\\n\\f\\r\\x20]"},
        {"\\Q\\s", NULL},                            /* quoted to the end */
        {"[a]\\s", "[a][\\t\\n\\f\\r\\x20]"},      /* out of the class again */
        {"\\p{Greek}\\s", "\\p{Greek}[\\t\\n\\f\\r\\x20]"},
        {"[\\s-z]", "[\\t\\n\\f\\r\\x20\\-z]"},         /* a - after a class is a character */
        {"[\\d-z\\w-]", "[\\d\\-z\\w-]"},                 /* ... but last, it is one already */
        {"[[:digit:]-a]\\p{Lu}-", "[[:digit:]\\-a]\\p{Lu}-"},   /* out of a class, - is - */
        {"a-b[c-d]", NULL},
        {"[a\\p", NULL},
        {"[\\p{L-", NULL},                          /* a \p{ never closed is no class */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        char *got = profd_go_regex_for_pcre2(cases[i].go);
        if (!cases[i].pcre2 ? got != NULL : !got || strcmp(got, cases[i].pcre2) != 0)
            CHECK_FAIL_("case %zu '%s': got '%s', want '%s'", i, cases[i].go, got ? got : "(same)",
                        cases[i].pcre2 ? cases[i].pcre2 : "(same)");
        free(got);
    }
}

TEST(where_a_pattern_leaves_gos_syntax)
{
    static const struct {
        const char *re;
        int offset;   /* -1: within Go's syntax */
        const char *says;
    } cases[] = {
        {"ab(?=c)", 2, "lookaround"},
        {"(a)\\1", 3, "backreference"},
        {"x{2}+", 4, "repetition of a repetition"},
        {"[a\\h]", 2, "escape"},
        {"a{1,1001}", 1, "repeat count"},
        {"a\\xA", 1, "escape"},     /* Go's \x takes two digits; nothing read past the end */
        {"[\\p", 1, "escape"},
        {"\\x{41", 0, "escape"},
        {"(*ACCEPT)", 0, "verb"},
        {"\\Q(?=\\E(?i:a)*?[\\d\\]]{3}", -1, NULL},
        {"a{,5}+", -1, NULL},   /* {,5} is text to Go: + repeats the } */
        {"\\12\\x{2603}\\pN(?P<n>.)", -1, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        size_t at = 99;
        const char *says = profd_go_regex_unsupported(cases[i].re, &at);
        if (cases[i].offset < 0) {
            CHECK(says == NULL);
            continue;
        }
        CHECK(says != NULL);
        CHECK_INT(at, cases[i].offset);
        if (says)
            CHECK_CONTAINS(says, cases[i].says);
    }
}

RUN_TESTS()
