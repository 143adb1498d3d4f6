// SPDX-License-Identifier: Apache-2.0
/* Letters' case changed as Go's strings package changes it. */
#include "check.h"

#include "../../core/utf8.h"

TEST(case_changes_as_go_makes_them)
{
    static const struct {
        const char *in;
        bool upper;
        const char *want;
    } cases[] = {
        {"", false, ""},
        {"MiXeD 1-2", false, "mixed 1-2"},
        {"MiXeD 1-2", true, "MIXED 1-2"},
        {"\xc3\x89" "cole", false, "\xc3\xa9" "cole"},   /* E acute */
        {"stra\xc3\x9f" "e", true, "STRA\xc3\x9f" "E"},   /* sharp s: no one-letter upper */
        {"\xf0\x90\x90\x80", false, "\xf0\x90\x90\xa8"},   /* four bytes: Deseret */
        {"A\xff" "b", false, "a\xef\xbf\xbd" "b"},   /* a stray byte: U+FFFD */
        {"\xff", true, "\xef\xbf\xbd"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        struct profd_text t = {0};
        profd_utf8_change_case(cases[i].in, strlen(cases[i].in), cases[i].upper, &t);
        CHECK(t.s != NULL);
        if (t.s && strcmp(t.s, cases[i].want) != 0)
            CHECK_FAIL_("case %zu: '%s', want '%s'", i, t.s, cases[i].want);
        free(t.s);
    }
}

RUN_TESTS()
