// SPDX-License-Identifier: Apache-2.0
/* UTF-8 read the way Go reads it: a well-formed sequence (Unicode's table
 * 3-7: no overlong forms, surrogates or code points past U+10FFFF) is one
 * character, and a byte that starts none is a character of its own, read
 * as U+FFFD. */
#ifndef PROFD_LIB_UTF8_VALID_H
#define PROFD_LIB_UTF8_VALID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The bytes of U+FFFD, what a byte that starts no character reads as. */
#define UTF8_REPLACEMENT "\xef\xbf\xbd"

/* The length of the well-formed sequence at s (n > 0 bytes from s on), or
 * 0 when the byte at s starts none. */
size_t utf8_char_len(const uint8_t *s, size_t n);

/* Whether the len bytes at s are all well-formed UTF-8. */
bool utf8_is_valid(const char *s, size_t len);

/* Writes the len bytes at s to out (room for max bytes and a NUL) as valid
 * UTF-8, each byte that starts no character made U+FFFD, ending before the
 * first character that would not fit in max bytes: never in the middle of
 * one. Returns the bytes written (the NUL not counted); *changed tells
 * whether out differs from s. */
size_t utf8_valid_copy(const char *s, size_t len, size_t max, char *out, bool *changed);

/* Writes code point cp (at most U+10FFFF) to out as UTF-8; returns the
 * bytes written, 1 to 4. A surrogate is written as its three bytes, which
 * are not well-formed: callers that may meet one check for it first. */
size_t utf8_encode(uint32_t cp, char out[4]);

#endif
