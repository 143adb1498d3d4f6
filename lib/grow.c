// SPDX-License-Identifier: Apache-2.0
#include "grow.h"

#include <stdlib.h>

void *grow_array(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap && p)
        return p;
    size_t n = *cap ? *cap * 2 : 16;
    while (n < need)
        n *= 2;
    void *q = realloc(p, n * size);
    if (!q)
        abort();
    *cap = n;
    return q;
}
