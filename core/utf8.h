// SPDX-License-Identifier: Apache-2.0
/* UTF-8 read the way Go reads it: a well-formed sequence (Unicode's table
 * 3-7: no overlong forms, surrogates or code points past U+10FFFF) is one
 * character, and a byte that starts none is a character of its own, read
 * as U+FFFD. */
#ifndef PROFD_UTF8_H
#define PROFD_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "text.h"

/* The bytes of U+FFFD, what a byte that starts no character reads as. */
#define PROFD_UTF8_REPLACEMENT "\xef\xbf\xbd"

/* The length of the well-formed sequence at s (n > 0 bytes from s on), or
 * 0 when the byte at s starts none. */
size_t profd_utf8_char_len(const uint8_t *s, size_t n);

/* Appends to out the len bytes at s with every letter in upper case
 * (upper) or lower case, as Go's strings.ToUpper and ToLower do: one
 * character for one by Unicode's simple case mapping, and a byte that
 * starts no character made U+FFFD when s is not all ASCII. Where the C
 * library has no C.UTF-8 locale, only ASCII letters change. */
void profd_utf8_change_case(const char *s, size_t len, bool upper, struct profd_text *out);

#endif
