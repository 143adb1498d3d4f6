// SPDX-License-Identifier: Apache-2.0
/* Allocation wrappers: every allocation failure aborts here, in one place. */
#ifndef PROFD_ALLOC_H
#define PROFD_ALLOC_H

#include <stddef.h>

#include "../lib/huge_pages.h"

/* Reports an allocation of n bytes that failed and aborts. */
void profd_out_of_memory(size_t n) __attribute__((noreturn));
/* malloc/calloc/realloc/strdup that abort with a message on failure. */
void *profd_xmalloc(size_t n);
void *profd_xcalloc(size_t count, size_t size);
void *profd_xrealloc(void *p, size_t n);
char *profd_xstrdup(const char *s);
char *profd_xstrndup(const char *s, size_t n);
/* printf into a new malloc'd string. */
char *profd_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Marks the whole 2 MiB pages within [p, p + n) of a buffer of 4 MiB or
 * more, about to be filled at once, for transparent huge pages (where the
 * system gives them on request): a fault and a TLB entry for each 2 MiB
 * rather than 512. Smaller buffers are left as they are. */
void profd_advise_huge(void *p, size_t n);

/* The capacity an array of cap entries grows to so that need fit: cap
 * doubled (8 at first) until they do. */
size_t profd_grown_cap(size_t cap, size_t need);
/* Grows *items (of elem bytes each) so that index `need - 1` fits. */
void profd_grow(void *items_ptr, size_t *cap, size_t need, size_t elem);

#endif
