// SPDX-License-Identifier: Apache-2.0
/*
 * The files a pprof_file receiver passes over, by identity (path,
 * modification time and size): those it read and left in place (kept, or
 * rejected with nowhere to move them), until they change, and those not
 * every exporter took, until their time to be tried again. An identity a
 * whole scan did not meet (the file removed, or changed and so another
 * identity) is forgotten at its end: what is remembered is what is there,
 * however many files came and went. Not thread-safe.
 */
#ifndef PROFD_PPROF_FILE_SEEN_FILES_H
#define PROFD_PPROF_FILE_SEEN_FILES_H

#include <stdbool.h>
#include <stdint.h>

struct seen_files;

/* An empty set; aborts when memory runs out. */
struct seen_files *seen_files_new(void);
/* Passes over identity until it changes. */
void seen_files_add(struct seen_files *s, const char *identity);
/* Passes over identity until it changes or wait ns from now_ns, and
 * returns wait: first_ns, doubled for each hold since it was last added
 * or let go, at most max_ns. */
int64_t seen_files_hold(struct seen_files *s, const char *identity, int64_t now_ns,
                        int64_t first_ns, int64_t max_ns);
/* Passes over identity no more (its file was taken); its holds start
 * again from the first. */
void seen_files_let_go(struct seen_files *s, const char *identity);
/* Whether identity is to be passed over at now_ns; a scan that asks has
 * met it. */
bool seen_files_meet(struct seen_files *s, const char *identity, int64_t now_ns);
/* A scan that read every directory it looks at ended: forgets what it did
 * not meet, and the next scan begins. */
void seen_files_sweep(struct seen_files *s);
/* How many identities are remembered (passed over or not). */
unsigned long seen_files_count(const struct seen_files *s);
/* Frees s (accepts NULL). */
void seen_files_free(struct seen_files *s);

#endif
