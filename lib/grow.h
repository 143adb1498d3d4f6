// SPDX-License-Identifier: Apache-2.0
/* Growing arrays, for the modules that compile lib/ sources in. */
#ifndef PROFD_GROW_H
#define PROFD_GROW_H

#include <stddef.h>

/* Returns p grown (doubling) to hold at least need elements of size bytes,
 * updating *cap; never NULL, even for need 0; aborts when memory runs out. */
void *grow_array(void *p, size_t *cap, size_t need, size_t size);

#endif
