// SPDX-License-Identifier: Apache-2.0
/* Log lines: levels by name, what a message quotes escaped, and a place's
 * lines let through a few a second. */
#include "../../core/log.h"
#include "check.h"

TEST(levels_are_known_by_name)
{
    CHECK_INT(profd_log_parse_level("warn"), PROFD_LOG_WARN);
    CHECK_INT(profd_log_parse_level("debug"), PROFD_LOG_DEBUG);
    CHECK_INT(profd_log_parse_level("loud"), -1);
}

TEST(control_bytes_and_stray_bytes_are_escaped_characters_kept)
{
    char out[64];
    profd_log_escape("line 1: \"\x1f\x8b\x08\"\nforged", out, sizeof(out));
    CHECK_STR(out, "line 1: \"\\x1f\\x8b\\x08\"\\x0aforged");
    profd_log_escape("caf\xc3\xa9 \x1b[2J\x7f", out, sizeof(out));   /* a terminal escape */
    CHECK_STR(out, "caf\xc3\xa9 \\x1b[2J\\x7f");
    char small[6];
    profd_log_escape("ab\ncd", small, sizeof(small));   /* \x0a does not fit: cut before it */
    CHECK_STR(small, "ab");
    profd_log_escape("", small, sizeof(small));
    CHECK_STR(small, "");
}

TEST(a_limited_place_says_once_a_second_how_many_it_held_back)
{
    struct profd_log_limit l = {0};
    unsigned held = 99;
    int64_t t = 5000000000;
    CHECK(profd_log_limit_pass_at(&l, t, &held));
    CHECK_INT(held, 0);
    CHECK(!profd_log_limit_pass_at(&l, t + 1, &held));   /* within the second */
    CHECK(!profd_log_limit_pass_at(&l, t + 999999999, &held));
    CHECK(profd_log_limit_pass_at(&l, t + 1000000000, &held));
    CHECK_INT(held, 2);
    CHECK(!profd_log_limit_pass_at(&l, t + 1000000001, &held));
}

TEST(a_burst_goes_whole_each_second)
{
    struct profd_log_limit l = {.burst = 3};
    unsigned held = 99;
    int64_t t = 7000000000;
    for (int i = 0; i < 3; i++) {
        CHECK(profd_log_limit_pass_at(&l, t + i, &held));
        CHECK_INT(held, 0);
    }
    for (int i = 0; i < 5; i++)
        CHECK(!profd_log_limit_pass_at(&l, t + 10 + i, &held));
    CHECK(profd_log_limit_pass_at(&l, t + 1500000000, &held));   /* a new second */
    CHECK_INT(held, 5);
    CHECK(profd_log_limit_pass_at(&l, t + 1500000001, &held));
    CHECK_INT(held, 0);
    CHECK(profd_log_limit_pass_at(&l, t + 1500000002, &held));
    CHECK(!profd_log_limit_pass_at(&l, t + 1500000003, &held));
}

RUN_TESTS()
