// SPDX-License-Identifier: Apache-2.0
#include "base64.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t profd_base64_encode(char *out, const uint8_t *data, size_t len)
{
    char *o = out;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)data[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)data[i + 1] << 8;
        if (i + 2 < len)
            v |= data[i + 2];
        *o++ = alphabet[v >> 18];
        *o++ = alphabet[(v >> 12) & 63];
        *o++ = i + 1 < len ? alphabet[(v >> 6) & 63] : '=';
        *o++ = i + 2 < len ? alphabet[v & 63] : '=';
    }
    return (size_t)(o - out);
}

/* The six bits c stands for in either alphabet, or -1. */
static int sextet(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    return -1;
}

ssize_t profd_base64_decode(uint8_t *out, const char *s, size_t n)
{
    size_t pad = 0;
    while (pad < 2 && n > pad && s[n - 1 - pad] == '=')
        pad++;
    size_t digits = n - pad;
    if (digits % 4 == 1 || (pad && n % 4))   /* a lone digit, or padding to a wrong length */
        return -1;
    uint8_t *o = out;
    uint32_t acc = 0;
    for (size_t i = 0; i < digits; i++) {
        int v = sextet(s[i]);
        if (v < 0)
            return -1;
        acc = acc << 6 | (uint32_t)v;
        if (i % 4 == 3) {
            *o++ = (uint8_t)(acc >> 16);
            *o++ = (uint8_t)(acc >> 8);
            *o++ = (uint8_t)acc;
            acc = 0;
        }
    }
    if (digits % 4 == 2) {
        *o++ = (uint8_t)(acc >> 4);
    } else if (digits % 4 == 3) {
        *o++ = (uint8_t)(acc >> 10);
        *o++ = (uint8_t)(acc >> 2);
    }
    return o - out;
}
