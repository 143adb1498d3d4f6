// SPDX-License-Identifier: Apache-2.0
/* Go regex syntax made PCRE2's: the escapes the two read differently,
 * in classes and out, and what must pass through untouched. */
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
        {"\\\\s", "\\\\s"},                        /* an escaped backslash, then s */
        {"\\Q\\s\\E\\s", "\\Q\\s\\E[\\t\\n\\f\\r\\x20]"},
        {"\\Q\\s", "\\Q\\s"},                      /* quoted to the end */
        {"[a]\\s", "[a][\\t\\n\\f\\r\\x20]"},      /* out of the class again */
        {"\\p{Greek}\\s", "\\p{Greek}[\\t\\n\\f\\r\\x20]"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        char *got = profd_go_regex_for_pcre2(cases[i].go);
        if (!cases[i].pcre2 ? got != NULL : !got || strcmp(got, cases[i].pcre2) != 0)
            CHECK_FAIL_("case %zu '%s': got '%s', want '%s'", i, cases[i].go, got ? got : "(same)",
                        cases[i].pcre2 ? cases[i].pcre2 : "(same)");
        free(got);
    }
}

RUN_TESTS()
