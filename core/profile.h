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
/* Appends one zeroed entry to p's samples, locations, functions or
 * mappings (the table grown in p's arena, doubling) and returns it: the
 * ref of a location, function or mapping is then the table's count
 * (p->nlocations, p->nfunctions, p->nmappings). */
struct profd_sample *profd_profile_add_sample(struct profd_profile *p);
struct profd_location *profd_profile_add_location(struct profd_profile *p);
struct profd_function *profd_profile_add_function(struct profd_profile *p);
struct profd_mapping *profd_profile_add_mapping(struct profd_profile *p);
/* Compares a string-table entry with a C string. */
bool profd_profile_str_eq(const struct profd_profile *p, uint32_t idx, const char *s);

#endif
