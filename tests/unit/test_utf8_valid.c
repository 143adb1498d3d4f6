// SPDX-License-Identifier: Apache-2.0
/* Where a UTF-8 character starts and how long it is, by the table of
 * well-formed sequences, at its edges; copies made valid and cut between
 * characters. */
#include "check.h"

#include "../../lib/utf8_valid.h"

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
        size_t got = utf8_char_len((const uint8_t *)cases[i].bytes, cases[i].len);
        if (got != cases[i].want)
            CHECK_FAIL_("case %zu: length %zu, want %zu", i, got, cases[i].want);
    }
}

/* utf8_valid_copy's output and whether it changed anything. */
static bool copy(const char *s, size_t len, size_t max, char *out)
{
    bool changed;
    size_t n = utf8_valid_copy(s, len, max, out, &changed);
    CHECK_INT(n, strlen(out));
    return changed;
}

TEST(copies_made_valid_and_cut_between_characters)
{
    char out[16];
    CHECK(!copy("caf\xc3\xa9", 5, 8, out));
    CHECK_STR(out, "caf\xc3\xa9");
    CHECK(copy("a\xff\xfe" "b", 4, 15, out));   /* each stray byte U+FFFD */
    CHECK_STR(out, "a\xef\xbf\xbd\xef\xbf\xbd" "b");
    CHECK(copy("ab\xc3\xa9", 4, 3, out));       /* no half of the e acute */
    CHECK_STR(out, "ab");
    CHECK(!copy("ab\xc3\xa9", 4, 4, out));      /* fits exactly */
    CHECK(copy("a\xe2\x82", 3, 15, out));       /* a character cut short */
    CHECK_STR(out, "a\xef\xbf\xbd\xef\xbf\xbd");
    CHECK(copy("\x80", 1, 2, out));             /* U+FFFD does not fit */
    CHECK_STR(out, "");
    CHECK(!copy("", 0, 0, out));
    CHECK_STR(out, "");
}

TEST(valid_text_told_apart_eight_ascii_bytes_at_a_time)
{
    CHECK(utf8_is_valid("", 0));
    CHECK(utf8_is_valid("0123456789abcdef", 16));
    CHECK(utf8_is_valid("0123456789abc\xc3\xa9", 15));
    CHECK(!utf8_is_valid("0123456789abc\xc3", 14));      /* cut short at the end */
    CHECK(!utf8_is_valid("01234567\xff" "9abcdef", 16));   /* in the second word */
    CHECK(!utf8_is_valid("\xed\xa0\x80", 3));             /* a surrogate */
    CHECK(utf8_is_valid("a\0b", 3));                     /* NUL is a character */
}

/* Code points written at each length's edges read back as one character
 * of the same bytes. */
TEST(code_points_encoded)
{
    static const struct {
        uint32_t cp;
        const char *bytes;
    } cases[] = {
        {0x41, "A"},
        {0x7f, "\x7f"},
        {0x80, "\xc2\x80"},
        {0xe9, "\xc3\xa9"},
        {0x7ff, "\xdf\xbf"},
        {0x800, "\xe0\xa0\x80"},
        {0x20ac, "\xe2\x82\xac"},
        {0xffff, "\xef\xbf\xbf"},
        {0x10000, "\xf0\x90\x80\x80"},
        {0x1f600, "\xf0\x9f\x98\x80"},
        {0x10ffff, "\xf4\x8f\xbf\xbf"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        char out[5] = "";
        size_t n = utf8_encode(cases[i].cp, out);
        CHECK_INT(n, strlen(cases[i].bytes));
        CHECK(!memcmp(out, cases[i].bytes, n));
        CHECK_INT(utf8_char_len((const uint8_t *)out, n), n);
    }
}

RUN_TESTS()
