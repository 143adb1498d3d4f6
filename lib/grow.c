// SPDX-License-Identifier: Apache-2.0
#include "grow.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void *must_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        abort();
    return p;
}

char *must_strdup(const char *s)
{
    char *c = strdup(s);
    if (!c)
        abort();
    return c;
}

char *must_strdup_or_null(const char *s)
{
    return s ? must_strdup(s) : NULL;
}

void free_string_array(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

char *must_asprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        abort();
    return s;
}
