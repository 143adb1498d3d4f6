// SPDX-License-Identifier: Apache-2.0
#include "../../lib/hex.h"
#include "check.h"

TEST(digits_of_either_case)
{
    CHECK_INT(hex_digit('0'), 0);
    CHECK_INT(hex_digit('9'), 9);
    CHECK_INT(hex_digit('a'), 10);
    CHECK_INT(hex_digit('F'), 15);
    CHECK_INT(hex_digit('g'), -1);
    CHECK_INT(hex_digit('G'), -1);
    CHECK_INT(hex_digit('/'), -1);
    CHECK_INT(hex_digit(':'), -1);
    CHECK_INT(hex_digit('\0'), -1);
}

TEST(bytes_need_two_digits)
{
    CHECK_INT(hex_byte("7B"), 0x7b);
    CHECK_INT(hex_byte("ff"), 0xff);
    CHECK_INT(hex_byte("00x"), 0);
    CHECK_INT(hex_byte("7"), -1);    /* the NUL ends it */
    CHECK_INT(hex_byte(""), -1);
    CHECK_INT(hex_byte("-1"), -1);   /* no sign, no space, no 0x, as scanf would take */
    CHECK_INT(hex_byte(" a"), -1);
    CHECK_INT(hex_byte("zz"), -1);
}

RUN_TESTS()
