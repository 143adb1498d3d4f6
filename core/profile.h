// SPDX-License-Identifier: Apache-2.0
/* Profile model life cycle and building helpers (model in profd/model.h). */
#ifndef PROFD_PROFILE_H
#define PROFD_PROFILE_H

#include "profd/model.h"

/* Creates an empty profile whose string table holds only "". size_hint sizes
 * the arena's first block. */
struct profd_profile *profd_profile_new(size_t size_hint);
/* Frees the profile, its arena and its backing buffer. Accepts NULL. */
void profd_profile_free(struct profd_profile *p);
/* Returns the index of the string (s, len), adding a copy when absent. */
uint32_t profd_profile_intern(struct profd_profile *p, const char *s, size_t len);
/* Returns a deep copy of p that shares nothing with it. */
struct profd_profile *profd_profile_clone(const struct profd_profile *p);
/* Compares a string-table entry with a C string. */
bool profd_profile_str_eq(const struct profd_profile *p, uint32_t idx, const char *s);

#endif
