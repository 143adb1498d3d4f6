// SPDX-License-Identifier: Apache-2.0
#include "file_events.h"

#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "../../lib/grow.h"

/* What is watched in a directory: files written or moved in, and the
 * directory itself moving away (deleted, its watch ends by itself). */
#define WATCH_MASK (IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVE_SELF)

/* One pattern watched. */
struct watched {
    int wd;          /* the watch of its directory (shared by patterns of one); -1: missing */
    char *dir;
    char *pattern;
    char *prefix;    /* the pattern up to its last '/', kept: what a glob puts before a name */
};

struct file_events {
    int fd;
    struct watched *watched;
    size_t nwatched, watched_cap;
    pthread_mutex_t lock;    /* guards what follows */
    struct path_list noted;
    size_t noted_cap;
    bool lost;
};

struct file_events *file_events_new(void)
{
    int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct file_events *fe = must_malloc(sizeof(*fe));
    *fe = (struct file_events){.fd = fd};
    pthread_mutex_init(&fe->lock, NULL);
    return fe;
}

int file_events_fd(const struct file_events *fe)
{
    return fe->fd;
}

int file_events_watch(struct file_events *fe, const char *pattern)
{
    const char *slash = strrchr(pattern, '/');
    size_t prefix_len = slash ? (size_t)(slash - pattern + 1) : 0;
    char *dir = slash == pattern ? must_strdup("/")
                : slash ? must_asprintf("%.*s", (int)(slash - pattern), pattern) : must_strdup(".");
    int wd = inotify_add_watch(fe->fd, dir, WATCH_MASK);
    if (wd < 0 && errno != ENOENT) {
        free(dir);
        return -1;
    }
    fe->watched = grow_array(fe->watched, &fe->watched_cap, fe->nwatched + 1, sizeof(*fe->watched));
    fe->watched[fe->nwatched++] = (struct watched){
        wd, dir, must_strdup(pattern), must_asprintf("%.*s", (int)prefix_len, pattern)};
    if (wd < 0)
        errno = ENOENT;
    return wd < 0 ? -1 : 0;
}

bool file_events_rewatch(struct file_events *fe)
{
    bool any = false;
    for (size_t i = 0; i < fe->nwatched; i++) {
        if (fe->watched[i].wd >= 0)
            continue;
        const char *dir = fe->watched[i].dir;
        int wd = inotify_add_watch(fe->fd, dir, WATCH_MASK);
        if (wd < 0)
            continue;
        for (size_t k = i; k < fe->nwatched; k++)   /* the patterns of one directory share it */
            if (fe->watched[k].wd < 0 && strcmp(fe->watched[k].dir, dir) == 0)
                fe->watched[k].wd = wd;
        any = true;
    }
    return any;
}

/* The directory of watch wd is gone (deleted, or moved away: its watch
 * is taken off then): its patterns wait for it to come back. */
static void unwatch(struct file_events *fe, int wd, bool moved)
{
    if (moved)
        inotify_rm_watch(fe->fd, wd);
    for (size_t i = 0; i < fe->nwatched; i++)
        if (fe->watched[i].wd == wd)
            fe->watched[i].wd = -1;
}

size_t file_events_watched(const struct file_events *fe)
{
    return fe->nwatched;
}

/* Called with the lock held: notes path, or that paths were lost once
 * too many wait. */
static void note(struct file_events *fe, char *path)
{
    if (fe->lost || fe->noted.n >= FILE_EVENTS_MAX_PATHS) {
        fe->lost = true;
        free(path);
        return;
    }
    fe->noted.paths = grow_array(fe->noted.paths, &fe->noted_cap, fe->noted.n + 1,
                                 sizeof(*fe->noted.paths));
    fe->noted.paths[fe->noted.n++] = path;
}

/* Called with the lock held: notes the file name in the directory of
 * watch wd when a pattern of that directory matches it as glob would. */
static void note_name(struct file_events *fe, int wd, const char *name)
{
    for (size_t i = 0; i < fe->nwatched; i++) {
        const struct watched *w = &fe->watched[i];
        if (w->wd != wd)
            continue;
        char *path = must_asprintf("%s%s", w->prefix, name);
        if (fnmatch(w->pattern, path, FNM_PATHNAME | FNM_PERIOD) == 0) {
            note(fe, path);
            return;
        }
        free(path);
    }
}

bool file_events_read(struct file_events *fe)
{
    char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
    bool noted = false;
    ssize_t n;
    while ((n = read(fe->fd, buf, sizeof(buf))) > 0) {
        pthread_mutex_lock(&fe->lock);
        size_t before = fe->noted.n;
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            if (ev->mask & IN_Q_OVERFLOW)
                fe->lost = true;
            else if (ev->mask & (IN_IGNORED | IN_MOVE_SELF))
                unwatch(fe, ev->wd, ev->mask & IN_MOVE_SELF);
            else if (ev->len && !(ev->mask & IN_ISDIR))
                note_name(fe, ev->wd, ev->name);
            p += sizeof(*ev) + ev->len;
        }
        noted |= fe->lost || fe->noted.n > before;
        pthread_mutex_unlock(&fe->lock);
    }
    return noted;
}

bool file_events_take(struct file_events *fe, struct path_list *out)
{
    pthread_mutex_lock(&fe->lock);
    *out = fe->noted;
    bool lost = fe->lost;
    fe->noted = (struct path_list){0};
    fe->noted_cap = 0;
    fe->lost = false;
    pthread_mutex_unlock(&fe->lock);
    return lost;
}

void path_list_free(struct path_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->paths[i]);
    free(l->paths);
    *l = (struct path_list){0};
}

void file_events_free(struct file_events *fe)
{
    if (!fe)
        return;
    close(fe->fd);
    for (size_t i = 0; i < fe->nwatched; i++) {
        free(fe->watched[i].dir);
        free(fe->watched[i].pattern);
        free(fe->watched[i].prefix);
    }
    free(fe->watched);
    path_list_free(&fe->noted);
    pthread_mutex_destroy(&fe->lock);
    free(fe);
}
