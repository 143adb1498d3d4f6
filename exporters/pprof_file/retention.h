// SPDX-License-Identifier: Apache-2.0
/* Retention of written profiles: by age, by count, and by total bytes. */
#ifndef PPROF_FILE_RETENTION_H
#define PPROF_FILE_RETENTION_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct retention_limits {
    int64_t max_age;        /* ns; 0 = no limit */
    int64_t max_files;      /* 0 = no limit */
    uint64_t max_bytes;     /* 0 = no limit */
};

/* Whether files files of bytes bytes in all break max_files or max_bytes. */
static inline bool retention_over(const struct retention_limits *lim, uint64_t files,
                                  uint64_t bytes)
{
    return (lim->max_files > 0 && files > (uint64_t)lim->max_files) ||
           (lim->max_bytes > 0 && bytes > lim->max_bytes);
}

/* What a check found and did. */
struct retention_result {
    uint64_t files, bytes;   /* the profile files kept, and their bytes */
    uint64_t removed;        /* files it removed */
    uint64_t removed_dirs;   /* empty directories it removed */
    int64_t removing_ns;     /* of its time, what removing them took */
};

/*
 * One check of dir at now_ns: deletes the profile files (*.pb, *.pb.gz;
 * not names that start with '.', files being written) under it, oldest
 * first, until every limit holds. Files modified at now_ns or later are
 * neither counted nor removed. Files past max_age go as the walk meets
 * them; for max_files and max_bytes the walk keeps the max_candidates
 * oldest it saw (their paths), so its memory stays bounded however many
 * files there are, and walks again when more than that many must go. A
 * directory below dir that the walk leaves empty, and that was last
 * changed 10 s or more before now_ns when the walk came to it, is removed
 * too (not dir itself, hidden names, nor lost+found), and so its parent
 * may be. Symbolic links are not followed; trees deeper than 64
 * directories are not walked below that.
 * stop (may be NULL) is read as it walks: once set, the check ends early.
 * Returns 0, or -1 with errno when dir cannot be read (what was removed
 * before is still counted in *out).
 */
int retention_check(const char *dir, const struct retention_limits *lim, int64_t now_ns,
                    size_t max_candidates, const atomic_bool *stop, struct retention_result *out);

#endif
