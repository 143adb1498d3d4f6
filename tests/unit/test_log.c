// SPDX-License-Identifier: Apache-2.0
/* Log lines: levels by name, and a place's lines let through once a second. */
#include "../../core/log.h"
#include "check.h"

TEST(levels_are_known_by_name)
{
    CHECK_INT(profd_log_parse_level("warn"), PROFD_LOG_WARN);
    CHECK_INT(profd_log_parse_level("debug"), PROFD_LOG_DEBUG);
    CHECK_INT(profd_log_parse_level("loud"), -1);
}

TEST(a_limited_place_says_once_a_second_how_many_it_held_back)
{
    struct profd_log_limit l = {0};
    unsigned held = 99;
    CHECK(profd_log_limit_pass(&l, &held));
    CHECK_INT(held, 0);
    CHECK(!profd_log_limit_pass(&l, &held));   /* within the second */
    CHECK(!profd_log_limit_pass(&l, &held));
    l.next_ns = 0;   /* as if the second had passed */
    CHECK(profd_log_limit_pass(&l, &held));
    CHECK_INT(held, 2);
    CHECK(!profd_log_limit_pass(&l, &held));
}

RUN_TESTS()
