// SPDX-License-Identifier: Apache-2.0
/* A growing string: appended to, always NUL-terminated once anything was
 * appended, its memory the caller's to free (s). Zero-initialized is
 * empty. */
#ifndef PROFD_TEXT_H
#define PROFD_TEXT_H

#include <stddef.h>

struct profd_text {
    char *s;
    size_t len, cap;
};

/* Appends the n bytes at s. */
void profd_text_put(struct profd_text *t, const char *s, size_t n);
/* Appends the string s. */
void profd_text_add(struct profd_text *t, const char *s);
/* Appends what printf would print. */
void profd_text_printf(struct profd_text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
