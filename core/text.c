// SPDX-License-Identifier: Apache-2.0
#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"

void profd_text_put(struct profd_text *t, const char *s, size_t n)
{
    profd_grow(&t->s, &t->cap, t->len + n + 1, 1);
    memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = '\0';
}

void profd_text_add(struct profd_text *t, const char *s)
{
    profd_text_put(t, s, strlen(s));
}

void profd_text_printf(struct profd_text *t, const char *fmt, ...)
{
    va_list ap;
    profd_grow(&t->s, &t->cap, t->len + 1, 1);
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
        if (n < 0)
            return;   /* a bad format: nothing appended */
        if ((size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        profd_grow(&t->s, &t->cap, t->len + (size_t)n + 1, 1);
    }
}
