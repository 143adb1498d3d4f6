// SPDX-License-Identifier: Apache-2.0
/* Label sets (struct profd_labels in model.h): sorted, unique names, owned
 * strings. Not thread-safe: a set belongs to one record or one target. */
#ifndef PROFD_LABELS_H
#define PROFD_LABELS_H

#include "profd/model.h"

/* Sets name to value (copying both), replacing an existing value. */
void profd_labels_set(struct profd_labels *l, const char *name, const char *value);
/* Same, for a value of len bytes that need not be NUL-terminated. */
void profd_labels_setn(struct profd_labels *l, const char *name, const char *value, size_t len);
/* The value of name, or NULL. */
const char *profd_labels_get(const struct profd_labels *l, const char *name);
/* Removes name; no-op when absent. */
void profd_labels_del(struct profd_labels *l, const char *name);
/* Removes the label at index i. */
void profd_labels_del_at(struct profd_labels *l, size_t i);
/* Replaces dst's content with a copy of src. */
void profd_labels_copy(struct profd_labels *dst, const struct profd_labels *src);
/* Frees every label and the array; the set is empty and reusable after. */
void profd_labels_clear(struct profd_labels *l);

#endif
