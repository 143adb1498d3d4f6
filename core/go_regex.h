// SPDX-License-Identifier: Apache-2.0
/* Go's regexp syntax (what Prometheus relabel rules are written in) next to
 * PCRE2's: what PCRE2 takes that Go refuses, and a PCRE2 pattern that means
 * the same where the two read one escape differently: Go's \s and \S leave
 * out the vertical tab that PCRE2's take in, and Go's \v is the vertical
 * tab alone where PCRE2's is every vertical space (\n, \f, \r, U+0085,
 * U+2028, U+2029 too). */
#ifndef PROFD_GO_REGEX_H
#define PROFD_GO_REGEX_H

#include <stddef.h>

/* A malloc'd PCRE2 pattern that does what Go does with re, or NULL when re
 * means the same to both as it is. Besides the escapes above, a - right
 * after a class of characters in a class ([\d-z]) is a character to Go
 * and a range PCRE2 refuses: it is written \-. */
char *profd_go_regex_for_pcre2(const char *re);

/* Where re leaves Go's regexp syntax, which Prometheus compiles relabel
 * rules with and which PCRE2 goes beyond: lookaround, backreferences,
 * atomic groups, possessive and nested repetition, recursion, comments,
 * verbs, repeat counts over 1000, escapes Go does not have. NULL when re
 * keeps to Go's syntax (as far as PCRE2 does not refuse it anyway); else
 * what it found, with *offset its byte offset in re. */
const char *profd_go_regex_unsupported(const char *re, size_t *offset);

#endif
