// SPDX-License-Identifier: Apache-2.0
/* The growing string: appended bytes, strings and formatted text, across
 * the growth of its buffer. */
#include "check.h"

#include "../../core/text.h"

TEST(appends_stay_one_terminated_string)
{
    struct profd_text t = {0};
    profd_text_add(&t, "");
    CHECK(t.s && t.len == 0 && t.s[0] == '\0');
    profd_text_put(&t, "abcdef", 3);
    profd_text_add(&t, "-");
    profd_text_printf(&t, "%d:%s", 42, "x");
    CHECK_STR(t.s, "abc-42:x");
    CHECK(t.len == strlen(t.s));
    free(t.s);
}

TEST(formatted_text_longer_than_the_buffer)
{
    struct profd_text t = {0};
    char big[5000];
    memset(big, 'z', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    for (int i = 0; i < 3; i++)
        profd_text_printf(&t, "[%s]", big);
    CHECK(t.len == 3 * (sizeof(big) + 1));
    CHECK(t.s[0] == '[' && t.s[sizeof(big)] == ']' && t.s[t.len] == '\0');
    CHECK(t.cap > t.len);
    free(t.s);
}

RUN_TESTS()
