// SPDX-License-Identifier: Apache-2.0
/* Hex digits, for percent-decoding and hex-encoded ids. */
#ifndef PROFD_LIB_HEX_H
#define PROFD_LIB_HEX_H

/* The value of hex digit c (either case), or -1 when c is not one. */
static inline int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = (char)(c | 0x20);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The byte the two hex digits at s spell, or -1 when they are not two hex
 * digits. s[1] is read only when s[0] is a digit, so a NUL-terminated
 * string may end at s[0] or s[1]. */
static inline int hex_byte(const char *s)
{
    int hi = hex_digit(s[0]);
    int lo = hi < 0 ? -1 : hex_digit(s[1]);
    return lo < 0 ? -1 : hi * 16 + lo;
}

#endif
