// SPDX-License-Identifier: Apache-2.0
#include "alloc.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void profd_out_of_memory(size_t n)
{
    fprintf(stderr, "profd: out of memory allocating %zu bytes\n", n);
    abort();
}

void *profd_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        profd_out_of_memory(n);
    return p;
}

void *profd_xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        profd_out_of_memory(count * size);
    return p;
}

void *profd_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        profd_out_of_memory(n);
    return q;
}

char *profd_xstrdup(const char *s)
{
    return profd_xstrndup(s, strlen(s));
}

char *profd_xstrndup(const char *s, size_t n)
{
    char *p = profd_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *profd_xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        profd_out_of_memory(strlen(fmt));
    return s;
}

void profd_advise_huge(void *p, size_t n)
{
    if (n >= HUGE_PAGES_FROM)
        huge_pages_mark(p, n);
}

size_t profd_grown_cap(size_t cap, size_t need)
{
    size_t ncap = cap ? cap * 2 : 8;
    while (ncap < need)
        ncap *= 2;
    return ncap;
}

void profd_grow(void *items_ptr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return;
    size_t ncap = profd_grown_cap(*cap, need);
    void **items = items_ptr;
    *items = profd_xrealloc(*items, ncap * elem);
    *cap = ncap;
}
