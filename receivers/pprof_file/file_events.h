// SPDX-License-Identifier: Apache-2.0
/*
 * What inotify says of the directories a pprof_file receiver's patterns
 * name: the files closed after writing, or moved in, that match a pattern,
 * as the paths a glob of that pattern would give. A scan then reads those
 * files alone instead of listing every file the patterns match, so that
 * files left in place cost nothing while new ones come. Events are read on
 * the event loop's thread and taken on the receiver's own: thread-safe.
 */
#ifndef PROFD_PPROF_FILE_FILE_EVENTS_H
#define PROFD_PPROF_FILE_FILE_EVENTS_H

#include <stdbool.h>
#include <stddef.h>

/* The most paths held between two takes; past it they are dropped, and
 * the take says some were lost. */
#define FILE_EVENTS_MAX_PATHS 65536

struct file_events;

/* Paths handed over by file_events_take. */
struct path_list {
    char **paths;
    size_t n;
};

/* Watches nothing yet; NULL with errno when inotify cannot be had. */
struct file_events *file_events_new(void);
/* The descriptor to wait on for events to read. */
int file_events_fd(const struct file_events *fe);
/* Watches the directory of the glob pattern (its part before the last
 * '/', "." when none; it must hold no wildcard) for files matching it.
 * 0, or -1 with errno: ENOENT when the directory does not exist, and the
 * pattern then waits for it (see file_events_rewatch). */
int file_events_watch(struct file_events *fe, const char *pattern);
/* How many patterns are watched, or wait for their directory. */
size_t file_events_watched(const struct file_events *fe);
/* Watches the directories that patterns wait for, those missing at first
 * and those deleted or moved away since, where they exist now. Returns
 * whether one came to be watched: files made in it before are found only
 * by a listing. Called on the thread that reads the events. */
bool file_events_rewatch(struct file_events *fe);
/* Reads the events waiting and notes the paths of matching files, in the
 * order they came. Returns whether anything was noted (a path, or events
 * lost). */
bool file_events_read(struct file_events *fe);
/* Hands over in *out the paths noted since the last take (freed with
 * path_list_free). Returns true when some were lost meanwhile (the
 * kernel's queue overflowed, or more than FILE_EVENTS_MAX_PATHS waited):
 * then only a listing of every file finds them all. */
bool file_events_take(struct file_events *fe, struct path_list *out);
/* Frees the paths of l and empties it. */
void path_list_free(struct path_list *l);
/* Stops watching and frees fe (accepts NULL). */
void file_events_free(struct file_events *fe);

#endif
