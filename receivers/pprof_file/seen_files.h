// SPDX-License-Identifier: Apache-2.0
/*
 * The files a pprof_file receiver read and left in place (kept, or
 * rejected with nowhere to move them), by identity (path, modification
 * time and size), so that its scans pass them over until they change. An
 * identity a whole scan did not meet (the file removed, or changed and so
 * another identity) is forgotten at its end: what is remembered is what
 * is there, however many files came and went. Not thread-safe.
 */
#ifndef PROFD_PPROF_FILE_SEEN_FILES_H
#define PROFD_PPROF_FILE_SEEN_FILES_H

#include <stdbool.h>

struct seen_files;

/* An empty set; aborts when memory runs out. */
struct seen_files *seen_files_new(void);
/* Remembers identity, as met by the scan under way. */
void seen_files_add(struct seen_files *s, const char *identity);
/* Whether identity is remembered; a scan that asks has met it. */
bool seen_files_meet(struct seen_files *s, const char *identity);
/* A scan that read every directory it looks at ended: forgets what it did
 * not meet, and the next scan begins. */
void seen_files_sweep(struct seen_files *s);
/* How many identities are remembered. */
unsigned long seen_files_count(const struct seen_files *s);
/* Frees s (accepts NULL). */
void seen_files_free(struct seen_files *s);

#endif
