// SPDX-License-Identifier: Apache-2.0
/* Growing arrays and allocations that abort when memory runs out, as the
 * daemon's own do, for the modules that compile lib/ sources in. */
#ifndef PROFD_GROW_H
#define PROFD_GROW_H

#include <stddef.h>

/* Returns p grown (doubling) to hold at least need elements of size bytes,
 * updating *cap; never NULL, even for need 0; aborts when memory runs out. */
void *grow_array(void *p, size_t *cap, size_t need, size_t size);

/* malloc that aborts instead of returning NULL (n 0 gives a valid block). */
void *must_malloc(size_t n);
/* printf into a new block; aborts when memory runs out. */
char *must_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* strdup that aborts instead of returning NULL. */
char *must_strdup(const char *s);
/* must_strdup of s, or NULL for NULL. */
char *must_strdup_or_null(const char *s);
/* Frees each string of the NULL-terminated array v, and v (NULL: nothing). */
void free_string_array(char **v);

#endif
