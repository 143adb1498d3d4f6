// SPDX-License-Identifier: Apache-2.0
/* pprof_file's retention: one check of a directory, and the thread that
 * runs them. Compiled in from the module sources. */
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../exporters/pprof_file/age_histogram.c"
#include "../../exporters/pprof_file/retention.c"
#include "../../exporters/pprof_file/retention_runner.c"

#define SECOND 1000000000LL

/* A file of size bytes at dir/name, modified at mtime (seconds). */
static void touch(const char *dir, const char *name, size_t size, time_t mtime)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    for (size_t i = 0; i < size; i++)
        fputc('x', f);
    fclose(f);
    struct timespec ts[2] = {{mtime, 0}, {mtime, 0}};
    utimensat(AT_FDCWD, path, ts, 0);
}

static bool exists(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

static void remove_tree(const char *dir)
{
    char cmd[700];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    CHECK_INT(system(cmd), 0);
}

TEST(a_check_removes_the_oldest_profiles_first)
{
    char dir[] = "/tmp/profd-retention-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char sub[600];
    snprintf(sub, sizeof(sub), "%s/sub", dir);
    mkdir(sub, 0755);
    touch(dir, "a.pb.gz", 100, 1000);
    touch(sub, "b.pb.gz", 100, 2000);
    touch(dir, "c.pb", 100, 3000);
    touch(dir, "notes.txt", 100, 1);      /* not a profile: never removed */
    touch(dir, ".d.pb.gz.tmp", 100, 1);   /* being written: never removed */
    struct retention_result r;
    struct retention_limits lim = {.max_files = 2};
    CHECK_INT(retention_check(dir, &lim, 4000 * SECOND, 16, NULL, &r), 0);
    CHECK(!exists(dir, "a.pb.gz"));
    CHECK(exists(sub, "b.pb.gz"));
    CHECK_INT(r.removed, 1);
    CHECK_INT(r.files, 2);
    CHECK_INT(r.bytes, 200);
    lim = (struct retention_limits){.max_bytes = 150};
    CHECK_INT(retention_check(dir, &lim, 4000 * SECOND, 16, NULL, &r), 0);
    CHECK(!exists(sub, "b.pb.gz"));
    CHECK(exists(dir, "c.pb"));
    CHECK_INT(r.removed, 1);
    lim = (struct retention_limits){.max_age = 500 * SECOND};
    CHECK_INT(retention_check(dir, &lim, 4000 * SECOND, 16, NULL, &r), 0);
    CHECK(!exists(dir, "c.pb"));
    CHECK(exists(dir, "notes.txt"));
    CHECK(exists(dir, ".d.pb.gz.tmp"));
    CHECK_INT(r.files, 0);
    errno = 0;
    CHECK_INT(retention_check("/nonexistent-profd-dir", &lim, 0, 16, NULL, &r), -1);
    CHECK_INT(errno, ENOENT);
    remove_tree(dir);
}

TEST(a_check_that_holds_fewer_candidates_than_must_go_walks_again)
{
    char dir[] = "/tmp/profd-retention-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char sub[2][600];
    for (int i = 0; i < 2; i++) {
        snprintf(sub[i], sizeof(sub[i]), "%s/s%d", dir, i);
        mkdir(sub[i], 0755);
    }
    for (int i = 1; i <= 10; i++) {   /* ages interleaved across the two */
        char name[32];
        snprintf(name, sizeof(name), "%d.pb.gz", i);
        touch(sub[i % 2], name, 10, 1000 + i);
    }
    struct retention_result r;
    struct retention_limits lim = {.max_files = 3};
    CHECK_INT(retention_check(dir, &lim, 9000 * SECOND, 2, NULL, &r), 0);
    CHECK_INT(r.removed, 7);
    CHECK_INT(r.files, 3);
    CHECK_INT(r.bytes, 30);
    for (int i = 1; i <= 10; i++) {
        char name[32];
        snprintf(name, sizeof(name), "%d.pb.gz", i);
        if (exists(sub[i % 2], name) != (i >= 8))
            CHECK_FAIL_("%s %s", name, i >= 8 ? "was removed" : "was kept");
    }
    /* The same order with equal times: by path. */
    touch(dir, "x.pb", 10, 5000);
    touch(dir, "y.pb", 10, 5000);
    lim = (struct retention_limits){.max_files = 4};
    CHECK_INT(retention_check(dir, &lim, 9000 * SECOND, 1, NULL, &r), 0);
    CHECK_INT(r.removed, 1);
    CHECK(!exists(sub[0], "8.pb.gz"));
    lim = (struct retention_limits){.max_files = 1};
    CHECK_INT(retention_check(dir, &lim, 9000 * SECOND, 1, NULL, &r), 0);
    CHECK_INT(r.removed, 3);
    CHECK(!exists(dir, "x.pb") && exists(dir, "y.pb"));
    remove_tree(dir);
}

TEST(a_check_leaves_files_newer_than_itself_to_the_next)
{
    char dir[] = "/tmp/profd-retention-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    touch(dir, "a.pb.gz", 10, 1000);
    touch(dir, "b.pb.gz", 10, 2000);
    touch(dir, "new.pb.gz", 10, 5000);   /* written while the check walks */
    struct retention_result r;
    struct retention_limits lim = {.max_files = 1, .max_age = 500 * SECOND};
    CHECK_INT(retention_check(dir, &lim, 2100 * SECOND, 16, NULL, &r), 0);
    CHECK_INT(r.removed, 1);
    CHECK_INT(r.files, 1);
    CHECK(!exists(dir, "a.pb.gz") && exists(dir, "b.pb.gz") && exists(dir, "new.pb.gz"));
    remove_tree(dir);
}

TEST(a_check_follows_no_symbolic_link)
{
    char dir[] = "/tmp/profd-retention-XXXXXX", outside[] = "/tmp/profd-outside-XXXXXX";
    CHECK(mkdtemp(dir) != NULL && mkdtemp(outside) != NULL);
    touch(outside, "theirs.pb.gz", 10, 1);
    touch(dir, "ours.pb.gz", 10, 1);
    char link[700], target[700];
    snprintf(link, sizeof(link), "%s/elsewhere", dir);
    CHECK_INT(symlink(outside, link), 0);
    snprintf(link, sizeof(link), "%s/linked.pb.gz", dir);
    snprintf(target, sizeof(target), "%s/theirs.pb.gz", outside);
    CHECK_INT(symlink(target, link), 0);
    struct retention_result r;
    struct retention_limits lim = {.max_age = SECOND};
    CHECK_INT(retention_check(dir, &lim, 100 * SECOND, 16, NULL, &r), 0);
    CHECK_INT(r.removed, 1);
    CHECK(!exists(dir, "ours.pb.gz"));
    CHECK(exists(outside, "theirs.pb.gz"));
    CHECK(exists(dir, "linked.pb.gz"));
    remove_tree(dir);
    remove_tree(outside);
}

/* Makes the directory dir/name (when missing), modified at mtime (seconds). */
static void dir_at(const char *dir, const char *name, time_t mtime)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    mkdir(path, 0755);
    struct timespec ts[2] = {{mtime, 0}, {mtime, 0}};
    CHECK_INT(utimensat(AT_FDCWD, path, ts, 0), 0);
}

TEST(a_check_removes_directories_left_empty_for_a_while)
{
    char dir[] = "/tmp/profd-retention-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char day[700];
    snprintf(day, sizeof(day), "%s/2026-01-01", dir);
    dir_at(dir, "2026-01-01", 1000);
    touch(day, "old.pb.gz", 10, 1000);
    dir_at(dir, "2026-01-01", 1000);
    dir_at(dir, "empty", 1000);
    dir_at(dir, "nested", 1000);
    dir_at(dir, "nested/inner", 1000);
    dir_at(dir, "nested", 1000);
    dir_at(dir, "fresh", 99995);           /* changed 5 s before the check */
    dir_at(dir, ".hidden", 1000);
    dir_at(dir, "lost+found", 1000);
    dir_at(dir, "notes", 1000);
    touch(dir, "notes/read-me.txt", 1, 1000);   /* not a profile: kept, and its directory */
    dir_at(dir, "notes", 1000);
    struct retention_result r;
    struct retention_limits lim = {.max_age = 500 * SECOND};
    CHECK_INT(retention_check(dir, &lim, 100000 * SECOND, 16, NULL, &r), 0);
    CHECK_INT(r.removed, 1);
    /* 2026-01-01 emptied by the check itself, empty, nested/inner and then
     * nested, which that left empty */
    CHECK_INT(r.removed_dirs, 4);
    CHECK(!exists(dir, "2026-01-01") && !exists(dir, "empty") && !exists(dir, "nested"));
    CHECK(exists(dir, "fresh") && exists(dir, ".hidden"));
    CHECK(exists(dir, "lost+found") && exists(dir, "notes/read-me.txt"));
    CHECK_INT(access(dir, F_OK), 0);   /* the checked directory itself stays */
    CHECK_INT(retention_check(dir, &lim, 100000 * SECOND, 16, NULL, &r), 0);
    CHECK_INT(r.removed_dirs, 0);
    remove_tree(dir);
}

TEST(a_stopped_check_removes_nothing)
{
    char dir[] = "/tmp/profd-retention-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    touch(dir, "old.pb.gz", 10, 1);
    atomic_bool stop = true;
    struct retention_result r;
    struct retention_limits lim = {.max_age = SECOND, .max_files = 0};
    CHECK_INT(retention_check(dir, &lim, 100 * SECOND, 16, &stop, &r), 0);
    CHECK_INT(r.removed, 0);
    CHECK(exists(dir, "old.pb.gz"));
    remove_tree(dir);
}

/* What the runner reported, for a test to wait on. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t changed;
    int reports;
    struct retention_result last;
} seen = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, {0}};

static void record_report(void *arg, int rc, int err, const struct retention_result *r,
                          int64_t took_ns)
{
    (void)arg, (void)err, (void)took_ns;
    CHECK_INT(rc, 0);
    pthread_mutex_lock(&seen.mu);
    seen.reports++;
    seen.last = *r;
    pthread_cond_broadcast(&seen.changed);
    pthread_mutex_unlock(&seen.mu);
}

/* Waits up to 10 s for the runner's reports to reach n: the last one's
 * result. */
static struct retention_result wait_for_report(int n)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&seen.mu);
    while (seen.reports < n && pthread_cond_timedwait(&seen.changed, &seen.mu, &until) == 0)
        ;
    CHECK_INT(seen.reports, n);
    struct retention_result r = seen.last;
    pthread_mutex_unlock(&seen.mu);
    return r;
}

TEST(the_runner_checks_at_start_and_as_soon_as_writes_break_a_limit)
{
    char dir[] = "/tmp/profd-retention-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    touch(dir, "1.pb.gz", 10, 1001);
    touch(dir, "2.pb.gz", 10, 1002);
    struct retention_limits lim = {.max_files = 2};
    struct retention_runner *run =
        retention_runner_start(dir, &lim, 3600 * SECOND, record_report, NULL);
    CHECK(run != NULL);
    struct retention_result r = wait_for_report(1);
    CHECK_INT(r.files, 2);
    CHECK_INT(r.removed, 0);
    /* A third file: the next check is not an hour away. */
    touch(dir, "3.pb.gz", 10, 1003);
    retention_runner_wrote(run, 10);
    r = wait_for_report(2);
    CHECK_INT(r.removed, 1);
    CHECK_INT(r.files, 2);
    CHECK(!exists(dir, "1.pb.gz") && exists(dir, "3.pb.gz"));
    retention_runner_stop(run);
    remove_tree(dir);
}

RUN_TESTS()
