// SPDX-License-Identifier: Apache-2.0
/* Where a UTF-8 character starts and how long it is, by the table of
 * well-formed sequences, at its edges; letters' case changed as Go's
 * strings package changes it. */
#include "check.h"

#include "../../core/utf8.h"

TEST(well_formed_sequences_and_their_edges)
{
    static const struct {
        const char *bytes;
        size_t len, want;
    } cases[] = {
        {"a", 1, 1},
        {"\x7f", 1, 1},
        {"\xc3\xa9", 2, 2},           /* e acute */
        {"\xc2\x80", 2, 2},           /* U+0080, the first two-byte one */
        {"\xc1\xbf", 2, 0},           /* overlong U+007F */
        {"\xc3", 1, 0},               /* cut short */
        {"\xc3\x41", 2, 0},           /* no continuation */
        {"\xe0\xa0\x80", 3, 3},       /* U+0800 */
        {"\xe0\x9f\xbf", 3, 0},       /* overlong U+07FF */
        {"\xed\x9f\xbf", 3, 3},       /* U+D7FF */
        {"\xed\xa0\x80", 3, 0},       /* U+D800, a surrogate */
        {"\xef\xbf\xbd", 3, 3},       /* U+FFFD */
        {"\xe2\x82", 2, 0},           /* cut short */
        {"\xf0\x90\x80\x80", 4, 4},   /* U+10000 */
        {"\xf0\x8f\xbf\xbf", 4, 0},   /* overlong U+FFFF */
        {"\xf4\x8f\xbf\xbf", 4, 4},   /* U+10FFFF */
        {"\xf4\x90\x80\x80", 4, 0},   /* past U+10FFFF */
        {"\xf5\x80\x80\x80", 4, 0},
        {"\x80", 1, 0},               /* a continuation byte alone */
        {"\xff", 1, 0},
        {"\xe2\x82\xac" "x", 4, 3},   /* only the character's own bytes */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        size_t got = profd_utf8_char_len((const uint8_t *)cases[i].bytes, cases[i].len);
        if (got != cases[i].want)
            CHECK_FAIL_("case %zu: length %zu, want %zu", i, got, cases[i].want);
    }
}

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
