// SPDX-License-Identifier: Apache-2.0
/* Letters' case in UTF-8 changed as Go changes it; how characters are told
 * apart is lib/utf8_valid.h's. */
#ifndef PROFD_UTF8_H
#define PROFD_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/utf8_valid.h"
#include "text.h"

/* Appends to out the len bytes at s with every letter in upper case
 * (upper) or lower case, as Go's strings.ToUpper and ToLower do: one
 * character for one by Unicode's simple case mapping, and a byte that
 * starts no character made U+FFFD when s is not all ASCII. Where the C
 * library has no C.UTF-8 locale, only ASCII letters change. */
void profd_utf8_change_case(const char *s, size_t len, bool upper, struct profd_text *out);

#endif
