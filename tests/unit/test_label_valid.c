// SPDX-License-Identifier: Apache-2.0
/* One label made what Prometheus-style stores take (lib/label_valid.c):
 * kept as it is when already valid, else fixed and each fix counted. */
#include "check.h"

#include "../../core/graph.h"
#include "../../lib/label_valid.c"

static const struct profd_host *host = &profd_host_services;

TEST(valid_labels_go_in_as_they_are_without_a_fix)
{
    struct profd_labels out = {0};
    size_t fixes = 0;
    label_add_valid(host, &out, "service_name", "caf\xc3\xa9", 12, 5, 30, &fixes);
    label_add_valid(host, &out, "_pod9", "", 5, 0, 30, &fixes);   /* each exactly at its max */
    CHECK_INT(fixes, 0);
    CHECK_STR(host->labels_get(&out, "service_name"), "caf\xc3\xa9");
    CHECK_STR(host->labels_get(&out, "_pod9"), "");
    host->labels_clear(&out);
}

TEST(each_change_a_fix)
{
    struct profd_labels out = {0};
    size_t fixes = 0;
    label_add_valid(host, &out, "k.v", "a\xff", SIZE_MAX, SIZE_MAX, 30, &fixes);   /* two */
    label_add_valid(host, &out, "9", "x", SIZE_MAX, SIZE_MAX, 30, &fixes);
    label_add_valid(host, &out, "", "y", SIZE_MAX, SIZE_MAX, 30, &fixes);
    label_add_valid(host, &out, "long_name", "long_value", 4, 4, 30, &fixes);   /* two cuts */
    CHECK_INT(fixes, 2 + 1 + 1 + 2);
    CHECK_STR(host->labels_get(&out, "k_v"), "a\xef\xbf\xbd");
    CHECK_STR(host->labels_get(&out, "_9"), "x");
    CHECK_STR(host->labels_get(&out, "_"), "y");
    CHECK_STR(host->labels_get(&out, "long"), "long");
    host->labels_clear(&out);
}

TEST(a_name_taken_or_one_label_too_many_is_left_out_as_a_fix)
{
    struct profd_labels out = {0};
    size_t fixes = 0;
    label_add_valid(host, &out, "k_v", "first", SIZE_MAX, SIZE_MAX, 2, &fixes);
    label_add_valid(host, &out, "k.v", "second", SIZE_MAX, SIZE_MAX, 2, &fixes);
    label_add_valid(host, &out, "k_v", "third", SIZE_MAX, SIZE_MAX, 2, &fixes);
    label_add_valid(host, &out, "b", "x", SIZE_MAX, SIZE_MAX, 2, &fixes);
    label_add_valid(host, &out, "c", "x", SIZE_MAX, SIZE_MAX, 2, &fixes);
    CHECK_INT(fixes, 1 + 1 + 1 + 1);   /* k.v: renamed and taken; k_v taken; c too many */
    CHECK_INT(out.n, 2);
    CHECK_STR(host->labels_get(&out, "k_v"), "first");
    CHECK(!host->labels_get(&out, "c"));
    host->labels_clear(&out);
}

TEST(metric_names_may_hold_colons)
{
    char buf[32];
    CHECK(!label_valid_name("job:rate5m", true, 31, buf));
    CHECK_STR(buf, "job:rate5m");
    CHECK(label_valid_name("job:rate5m", false, 31, buf));
    CHECK_STR(buf, "job_rate5m");
}

TEST(dots_become_underscores_as_pyroscope_stores_them)
{
    char buf[32];
    CHECK(label_name_undotted("service.name", 12, buf));
    CHECK_STR(buf, "service_name");
    CHECK(label_name_undotted(".a.", 3, buf));
    CHECK_STR(buf, "_a_");
    CHECK(label_name_undotted("env", 3, buf));
    CHECK_STR(buf, "env");
    CHECK(label_name_undotted("ok-not", 2, buf));   /* only len bytes are read */
    CHECK_STR(buf, "ok");
    CHECK(!label_name_undotted("bad-name", 8, buf));   /* only dots are mended */
    CHECK(!label_name_undotted("1st", 3, buf));
    CHECK(!label_name_undotted("a b", 3, buf));
    CHECK(!label_name_undotted("", 0, buf));
}

RUN_TESTS()
