// SPDX-License-Identifier: Apache-2.0
/* The pprof_file receiver's set of files left in place. Compiled in from
 * the module sources. */
#include "check.h"

#include "../../lib/grow.c"
#include "../../lib/key_map.c"
#include "../../receivers/pprof_file/seen_files.c"

TEST(a_file_is_remembered_while_scans_meet_it)
{
    struct seen_files *s = seen_files_new();
    CHECK(!seen_files_meet(s, "a\n1.0\n10", 0));
    seen_files_add(s, "a\n1.0\n10");
    seen_files_add(s, "b\n1.0\n10");
    seen_files_add(s, "b\n1.0\n10");   /* once */
    CHECK_INT(seen_files_count(s), 2);
    seen_files_sweep(s);                /* both added in the scan that ended */
    CHECK_INT(seen_files_count(s), 2);
    CHECK(seen_files_meet(s, "a\n1.0\n10", 0));
    CHECK(!seen_files_meet(s, "a\n2.0\n10", 0));   /* changed: another identity */
    seen_files_sweep(s);                /* b was not met: removed or changed */
    CHECK_INT(seen_files_count(s), 1);
    CHECK(seen_files_meet(s, "a\n1.0\n10", 0));
    CHECK(!seen_files_meet(s, "b\n1.0\n10", 0));
    seen_files_free(s);
}

TEST(many_files_come_and_go_and_only_those_there_are_kept)
{
    struct seen_files *s = seen_files_new();
    char id[64];
    for (int round = 0; round < 20; round++) {
        for (int i = round * 1000; i < round * 1000 + 5000; i++) {   /* a window of 5,000 */
            snprintf(id, sizeof(id), "spool/%d.pb.gz\n1.0\n100", i);
            if (!seen_files_meet(s, id, 0))
                seen_files_add(s, id);
        }
        seen_files_sweep(s);
        CHECK_INT(seen_files_count(s), 5000);
    }
    snprintf(id, sizeof(id), "spool/%d.pb.gz\n1.0\n100", 19 * 1000);
    CHECK(seen_files_meet(s, id, 0));
    snprintf(id, sizeof(id), "spool/%d.pb.gz\n1.0\n100", 18 * 1000);
    CHECK(!seen_files_meet(s, id, 0));
    seen_files_free(s);
}

TEST(a_file_not_taken_is_passed_over_until_its_next_try)
{
    struct seen_files *s = seen_files_new();
    const char *id = "spool/a.pb.gz\n1.0\n10";
    int64_t waits[] = {1, 2, 4, 8, 10, 10};   /* doubling, at most 10 */
    for (int i = 0; i < 6; i++) {
        CHECK_INT(seen_files_hold(s, id, 100, 1, 10), waits[i]);
        CHECK(seen_files_meet(s, id, 100 + waits[i] - 1));
        CHECK(!seen_files_meet(s, id, 100 + waits[i]));   /* its time to be tried again */
    }
    seen_files_let_go(s, id);                  /* taken at last */
    CHECK(!seen_files_meet(s, id, 0));
    CHECK_INT(seen_files_hold(s, id, 100, 1, 10), 1);   /* from the first again */
    seen_files_add(s, id);                     /* kept: passed over for good */
    CHECK(seen_files_meet(s, id, INT64_MAX - 1));
    seen_files_sweep(s);
    seen_files_hold(s, "spool/b.pb.gz\n1.0\n10", 100, 1, 10);
    seen_files_sweep(s);                       /* b held, then met by no scan: a was not met */
    CHECK_INT(seen_files_count(s), 1);
    seen_files_sweep(s);                       /* b removed while it waited */
    CHECK_INT(seen_files_count(s), 0);
    seen_files_free(s);
}

RUN_TESTS()
