// SPDX-License-Identifier: Apache-2.0
/* file_sd files and http_sd answers (core/sd_file.c): target groups read
 * from YAML or JSON, a file named .json read as JSON (a surrogate pair
 * escape, which YAML has none of, taken), a problem said with its file,
 * line and column. */
#include <stdio.h>
#include <unistd.h>

#include "check.h"

#include "../../core/labels.h"
#include "../../core/sd_file.h"

static const char surrogates[] =
    "[{\"targets\": [\"a:1\", \"b:2\"], \"labels\": {\"team\": \"web\\ud83d\\ude00\"}}]";

/* Writes text to a new file in dir named name; its path in path. */
static void write_file(const char *dir, const char *name, const char *text, char *path,
                       size_t len)
{
    snprintf(path, len, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

TEST(a_json_file_and_an_answer_take_surrogate_pairs)
{
    char dir[] = "/tmp/profd-test-sd-XXXXXX", path[256], err[256];
    CHECK(mkdtemp(dir) != NULL);
    write_file(dir, "t.json", surrogates, path, sizeof(path));
    struct profd_target_group *groups;
    size_t n;
    CHECK_INT(profd_sd_file_read(path, &groups, &n, err, sizeof(err)), 0);
    CHECK_INT(n, 1);
    CHECK_INT(n ? groups[0].targets.n : 0, 2);
    CHECK_STR(n ? profd_labels_get(&groups[0].labels, "team") : "", "web\xf0\x9f\x98\x80");
    profd_sd_groups_free(groups, n);
    unlink(path);

    CHECK_INT(profd_sd_parse("the answer", surrogates, &groups, &n, err, sizeof(err)), 0);
    CHECK_STR(n ? profd_labels_get(&groups[0].labels, "team") : "", "web\xf0\x9f\x98\x80");
    profd_sd_groups_free(groups, n);

    write_file(dir, "t.yaml", surrogates, path, sizeof(path));   /* YAML: no such escape */
    CHECK_INT(profd_sd_file_read(path, &groups, &n, err, sizeof(err)), -1);
    CHECK(strstr(err, "t.yaml:1:") && strstr(err, "escape"));
    unlink(path);
    rmdir(dir);
}

TEST(a_group_that_is_not_one_is_said_where)
{
    struct profd_target_group *groups;
    size_t n;
    char err[256];
    CHECK_INT(profd_sd_parse("the answer", "[{\"targets\": \"a:1\"}]", &groups, &n, err,
                             sizeof(err)),
              -1);
    CHECK_STR(err, "the answer:1:14: targets must be a list");
}

RUN_TESTS()
