// SPDX-License-Identifier: Apache-2.0
/* The pprof_file modules' inner parts: path templates and open
 * directories (retention: test_pprof_file_retention.c). Compiled in from
 * the module sources. */
#include "check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../core/record.h"
#include "../../exporters/pprof_file/dir_cache.c"
#include "../../exporters/pprof_file/template.c"

TEST(template_expands_labels_and_time)
{
    struct profd_batch *b = profd_batch_new();
    struct profd_record *r = profd_record_add(b, NULL, 0, PROFD_ENC_PPROF_RAW);
    profd_record_set_label(r, "__name__", "memory");
    profd_record_set_label(r, "service_name", "../etc/pass wd");
    r->time_nanos = 1795318655109668079LL;   /* 2026-11-21T...: a fixed instant */
    char p[128];
    const char *both = "{__name__}/{service_name}/{time}-{missing}.pb.gz";
    CHECK_INT(pprof_file_template_expand(both, r, 0, p, sizeof(p)), 57);
    CHECK_STR(p, "memory/_.._etc_pass_wd/20261122T033735.109Z-unknown.pb.gz");
    CHECK(pprof_file_template_expand("{date}/{unix_nanos}", r, 0, p, sizeof(p)) != SIZE_MAX);
    CHECK_STR(p, "2026-11-22/1795318655109668079");
    r->time_nanos = 0;   /* no time of its own: now is used */
    CHECK(pprof_file_template_expand("{unix_nanos}", r, 42, p, sizeof(p)) != SIZE_MAX);
    CHECK_STR(p, "42");
    r->time_nanos = -1500000000LL;   /* before 1970: a sign, and the time's milliseconds */
    CHECK(pprof_file_template_expand("{unix_nanos}_{time}", r, 0, p, sizeof(p)) != SIZE_MAX);
    CHECK_STR(p, "-1500000000_19691231T235958.500Z");
    /* a name that does not fit, by one byte or many, is refused whole */
    CHECK(pprof_file_template_expand("{__name__}", r, 0, p, 6) == SIZE_MAX);
    CHECK_INT(pprof_file_template_expand("{__name__}", r, 0, p, 7), 6);
    CHECK(pprof_file_template_expand("x{service_name}", r, 0, p, 8) == SIZE_MAX);
    profd_batch_unref(b);
}

TEST(template_cuts_a_long_label_keeping_values_apart)
{
    struct profd_batch *b = profd_batch_new();
    struct profd_record *r = profd_record_add(b, NULL, 0, PROFD_ENC_PPROF_RAW);
    char v[301], p[512], q[512];
    memset(v, 'v', 300);
    v[300] = '\0';
    profd_record_set_label(r, "k", v);
    CHECK_INT(pprof_file_template_expand("{k}", r, 0, p, sizeof(p)), TEMPLATE_MAX_LABEL_BYTES);
    CHECK(!strncmp(p, v, TEMPLATE_MAX_LABEL_BYTES - 17));
    CHECK_INT(p[TEMPLATE_MAX_LABEL_BYTES - 17], '~');
    v[299] = 'w';   /* the same first bytes, another value: another name */
    profd_record_set_label(r, "k", v);
    CHECK_INT(pprof_file_template_expand("{k}", r, 0, q, sizeof(q)), TEMPLATE_MAX_LABEL_BYTES);
    CHECK(strcmp(p, q) != 0);
    v[0] = '.';   /* with the '_' before a dot, no longer either */
    profd_record_set_label(r, "k", v);
    CHECK_INT(pprof_file_template_expand("{k}", r, 0, p, sizeof(p)), TEMPLATE_MAX_LABEL_BYTES);
    CHECK(!strncmp(p, "_.vv", 4));
    v[TEMPLATE_MAX_LABEL_BYTES] = '\0';   /* the longest kept whole */
    v[0] = 'v';
    profd_record_set_label(r, "k", v);
    CHECK_INT(pprof_file_template_expand("{k}", r, 0, p, sizeof(p)), TEMPLATE_MAX_LABEL_BYTES);
    CHECK_STR(p, v);
    profd_batch_unref(b);
}

TEST(template_check_refuses_escapes_and_bad_braces)
{
    const char *err;
    CHECK(pprof_file_template_check("{a}/{b}.pb.gz", &err));
    CHECK(!pprof_file_template_check("/abs.pb", &err));
    CHECK(!pprof_file_template_check("a/../../b.pb", &err));
    CHECK(!pprof_file_template_check("..", &err));
    CHECK(!pprof_file_template_check("dir/", &err));
    CHECK(!pprof_file_template_check("{open.pb", &err));
    CHECK(!pprof_file_template_check("close}.pb", &err));
    CHECK(!pprof_file_template_check("{}.pb", &err));
}

static bool descriptor_open(int fd)
{
    return fcntl(fd, F_GETFD) != -1;
}

TEST(dir_cache_shares_an_open_directory_until_it_is_found_gone)
{
    char root[] = "/tmp/profd-dirs-XXXXXX", dir[64];
    CHECK(mkdtemp(root) != NULL);
    snprintf(dir, sizeof(dir), "%s/d", root);
    struct dir_cache *c = dir_cache_new();
    int fd1, fd2, fd3;
    errno = 0;
    CHECK(dir_cache_get(c, dir, &fd1) == NULL);
    CHECK_INT(errno, ENOENT);

    CHECK_INT(mkdir(dir, 0755), 0);
    struct dir_entry *e1 = dir_cache_get(c, dir, &fd1), *e2 = dir_cache_get(c, dir, &fd2);
    CHECK(e1 != NULL && e1 == e2 && fd1 == fd2);
    int f = openat(fd1, "x", O_WRONLY | O_CREAT, 0644);   /* names resolve in dir */
    CHECK(f >= 0);
    close(f);
    char x[96];
    snprintf(x, sizeof(x), "%s/x", dir);
    CHECK_INT(access(x, F_OK), 0);

    /* Found gone by one holder: the other keeps its descriptor until it
     * gives it back, and the next get opens the directory anew. */
    dir_cache_forget(c, e2);
    CHECK(descriptor_open(fd1));
    struct dir_entry *e3 = dir_cache_get(c, dir, &fd3);
    CHECK(e3 != NULL && e3 != e1 && fd3 != fd1);
    dir_cache_put(c, e1);
    CHECK(!descriptor_open(fd1));

    /* Removed and made again: the kept descriptor is of the removed one,
     * where no name can be made. */
    CHECK_INT(unlink(x), 0);
    CHECK_INT(rmdir(dir), 0);
    CHECK_INT(mkdir(dir, 0755), 0);
    dir_cache_put(c, e3);
    e3 = dir_cache_get(c, dir, &fd3);
    CHECK(openat(fd3, "y", O_WRONLY | O_CREAT, 0644) < 0 && errno == ENOENT);
    dir_cache_forget(c, e3);
    e3 = dir_cache_get(c, dir, &fd3);
    f = openat(fd3, ".", O_TMPFILE | O_WRONLY, 0644);
    CHECK(f >= 0);
    close(f);
    dir_cache_put(c, e3);
    dir_cache_free(c);
    CHECK(!descriptor_open(fd3));
    CHECK_INT(rmdir(dir), 0);
    CHECK_INT(rmdir(root), 0);
}

TEST(dir_cache_keeps_every_directory_of_a_round_open)
{
    char root[] = "/tmp/profd-dirs-XXXXXX", dir[12][64];
    CHECK(mkdtemp(root) != NULL);
    struct dir_cache *c = dir_cache_new();
    struct dir_entry *first[12];
    int fd;
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 12; i++) {
            snprintf(dir[i], sizeof(dir[i]), "%s/%d", root, i);
            if (round == 0)
                CHECK_INT(mkdir(dir[i], 0755), 0);
            struct dir_entry *e = dir_cache_get(c, dir[i], &fd);
            CHECK(e != NULL);
            if (round == 0)
                first[i] = e;
            else
                CHECK(e == first[i]);   /* not opened again */
            dir_cache_put(c, e);
        }
    dir_cache_free(c);
    for (int i = 0; i < 12; i++)
        CHECK_INT(rmdir(dir[i]), 0);
    CHECK_INT(rmdir(root), 0);
}

RUN_TESTS()
