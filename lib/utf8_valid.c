// SPDX-License-Identifier: Apache-2.0
#include "utf8_valid.h"

#include <string.h>

size_t utf8_char_len(const uint8_t *s, size_t n)
{
    uint8_t c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    uint8_t second_min = 0x80, second_max = 0xbf;   /* the second byte's range */
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            second_min = 0xa0;   /* overlong below */
        else if (c == 0xed)
            second_max = 0x9f;   /* surrogates above */
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            second_min = 0x90;   /* overlong below */
        else if (c == 0xf4)
            second_max = 0x8f;   /* past U+10FFFF above */
    } else {
        return 0;   /* a continuation byte, an overlong lead (c0, c1) or past f4 */
    }
    if (n < len || s[1] < second_min || s[1] > second_max)
        return 0;
    for (size_t i = 2; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return len;
}

bool utf8_is_valid(const char *s, size_t len)
{
    const uint8_t *u = (const uint8_t *)s;
    size_t i = 0;
    while (i < len) {
        uint64_t word;
        if (len - i >= 8 && (memcpy(&word, u + i, 8), !(word & 0x8080808080808080ull))) {
            i += 8;   /* eight ASCII bytes at once */
            continue;
        }
        size_t n = utf8_char_len(u + i, len - i);
        if (!n)
            return false;
        i += n;
    }
    return true;
}

size_t utf8_valid_copy(const char *s, size_t len, size_t max, char *out, bool *changed)
{
    size_t i = 0, o = 0;
    *changed = false;
    while (i < len) {
        size_t n = utf8_char_len((const uint8_t *)s + i, len - i);
        const char *bytes = n ? s + i : UTF8_REPLACEMENT;
        size_t out_len = n ? n : sizeof(UTF8_REPLACEMENT) - 1;
        if (o + out_len > max) {
            *changed = true;   /* cut */
            break;
        }
        memcpy(out + o, bytes, out_len);
        o += out_len;
        i += n ? n : 1;
        *changed |= !n;
    }
    out[o] = '\0';
    return o;
}

size_t utf8_encode(uint32_t cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}
