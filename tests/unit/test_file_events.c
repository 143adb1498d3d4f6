// SPDX-License-Identifier: Apache-2.0
/* The pprof_file receiver's inotify events, as the paths of matching
 * files. Compiled in from the module sources. */
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/grow.c"
#include "../../receivers/pprof_file/file_events.c"

static void write_file(const char *path)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs("x", f);
    fclose(f);
}

static void remove_tree(const char *dir)
{
    char cmd[700];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    CHECK_INT(system(cmd), 0);
}

TEST(files_written_or_moved_in_that_match_are_noted_in_order)
{
    char dir[] = "/tmp/profd-events-XXXXXX", pattern[600], path[700], other[700];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(pattern, sizeof(pattern), "%s/*.pb.gz", dir);
    struct file_events *fe = file_events_new();
    CHECK(fe != NULL);
    CHECK_INT(file_events_watch(fe, pattern), 0);
    CHECK_INT(file_events_watched(fe), 1);
    snprintf(path, sizeof(path), "%s/notes.txt", dir);
    write_file(path);                              /* matches no pattern */
    snprintf(path, sizeof(path), "%s/.hidden.pb.gz", dir);
    write_file(path);                              /* a glob would not match it either */
    CHECK(!file_events_read(fe));
    snprintf(path, sizeof(path), "%s/a.pb.gz", dir);
    write_file(path);
    snprintf(other, sizeof(other), "%s/.b.tmp", dir);
    write_file(other);
    snprintf(path, sizeof(path), "%s/b.pb.gz", dir);
    CHECK_INT(rename(other, path), 0);             /* moved in */
    snprintf(path, sizeof(path), "%s/sub.pb.gz", dir);
    CHECK_INT(mkdir(path, 0755), 0);               /* a directory: not noted */
    CHECK(file_events_read(fe));
    struct path_list got;
    CHECK(!file_events_take(fe, &got));
    CHECK_INT(got.n, 2);
    snprintf(path, sizeof(path), "%s/a.pb.gz", dir);
    CHECK_STR(got.paths[0], path);
    snprintf(path, sizeof(path), "%s/b.pb.gz", dir);
    CHECK_STR(got.paths[1], path);
    path_list_free(&got);
    CHECK(!file_events_take(fe, &got));            /* handed over once */
    CHECK_INT(got.n, 0);
    file_events_free(fe);
    remove_tree(dir);
}

TEST(a_pattern_without_a_directory_gives_bare_names)
{
    char dir[] = "/tmp/profd-events-XXXXXX", cwd[600];
    CHECK(mkdtemp(dir) != NULL && getcwd(cwd, sizeof(cwd)) != NULL);
    CHECK_INT(chdir(dir), 0);
    struct file_events *fe = file_events_new();
    CHECK_INT(file_events_watch(fe, "*.pb"), 0);
    write_file("cpu.pb");
    CHECK(file_events_read(fe));
    struct path_list got;
    CHECK(!file_events_take(fe, &got));
    CHECK_INT(got.n, 1);
    CHECK_STR(got.paths[0], "cpu.pb");   /* as glob("*.pb") names it */
    path_list_free(&got);
    file_events_free(fe);
    CHECK_INT(chdir(cwd), 0);
    remove_tree(dir);
}

/* Writes name in dir and checks that fe notes it, alone. */
static void check_noted_alone(struct file_events *fe, const char *dir, const char *name)
{
    char path[700];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    write_file(path);
    CHECK(file_events_read(fe));
    struct path_list got;
    CHECK(!file_events_take(fe, &got));
    CHECK_INT(got.n, 1);
    CHECK_STR(got.paths[0], path);
    path_list_free(&got);
}

TEST(a_missing_directory_is_watched_once_it_is_made_and_again_once_made_anew)
{
    char base[] = "/tmp/profd-events-XXXXXX", dir[600], pattern[700], away[700];
    CHECK(mkdtemp(base) != NULL);
    snprintf(dir, sizeof(dir), "%s/spool", base);
    snprintf(pattern, sizeof(pattern), "%s/*.pb", dir);
    struct file_events *fe = file_events_new();
    errno = 0;
    CHECK_INT(file_events_watch(fe, pattern), -1);
    CHECK_INT(errno, ENOENT);
    CHECK_INT(file_events_watched(fe), 1);   /* waiting for it */
    CHECK(!file_events_rewatch(fe));
    CHECK_INT(mkdir(dir, 0755), 0);
    CHECK(file_events_rewatch(fe));
    CHECK(!file_events_rewatch(fe));          /* watched already */
    check_noted_alone(fe, dir, "first.pb");

    remove_tree(dir);                         /* deleted: its watch ends */
    file_events_read(fe);
    CHECK(!file_events_rewatch(fe));
    CHECK_INT(mkdir(dir, 0755), 0);
    CHECK(file_events_rewatch(fe));
    check_noted_alone(fe, dir, "second.pb");

    snprintf(away, sizeof(away), "%s/elsewhere", base);
    CHECK_INT(rename(dir, away), 0);          /* moved away: no longer what the pattern names */
    file_events_read(fe);
    char path[800];
    snprintf(path, sizeof(path), "%s/moved.pb", away);
    write_file(path);
    CHECK(!file_events_read(fe));
    CHECK_INT(mkdir(dir, 0755), 0);
    CHECK(file_events_rewatch(fe));
    check_noted_alone(fe, dir, "third.pb");
    file_events_free(fe);
    remove_tree(base);
}

TEST(events_lost_say_so)
{
    char dir[] = "/tmp/profd-events-XXXXXX", pattern[600], path[700];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(pattern, sizeof(pattern), "%s/*.pb", dir);
    struct file_events *fe = file_events_new();
    CHECK_INT(file_events_watch(fe, pattern), 0);
    int queued = 16384;
    FILE *f = fopen("/proc/sys/fs/inotify/max_queued_events", "r");
    if (f) {
        CHECK_INT(fscanf(f, "%d", &queued), 1);
        fclose(f);
    }
    int files = (queued < FILE_EVENTS_MAX_PATHS ? queued : FILE_EVENTS_MAX_PATHS) + 1;
    for (int i = 0; i < files; i++) {   /* more than the kernel queues, or than are held */
        snprintf(path, sizeof(path), "%s/%d.pb", dir, i);
        int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        CHECK(fd >= 0);
        close(fd);
    }
    CHECK(file_events_read(fe));
    struct path_list got;
    CHECK(file_events_take(fe, &got));
    path_list_free(&got);
    CHECK(!file_events_take(fe, &got));   /* said once */
    file_events_free(fe);
    remove_tree(dir);
}

RUN_TESTS()
