// SPDX-License-Identifier: Apache-2.0
#include "utf8.h"

#include <ctype.h>
#include <locale.h>
#include <pthread.h>
#include <wctype.h>

/* The code point of the well-formed sequence of len bytes at s. */
static uint32_t decode(const uint8_t *s, size_t len)
{
    static const uint8_t lead_bits[5] = {0, 0x7f, 0x1f, 0x0f, 0x07};
    uint32_t c = s[0] & lead_bits[len];
    for (size_t i = 1; i < len; i++)
        c = c << 6 | (s[i] & 0x3f);
    return c;
}

/* Appends c as UTF-8. */
static void encode(uint32_t c, struct profd_text *out)
{
    char b[4];
    size_t n;
    if (c < 0x80) {
        b[0] = (char)c;
        n = 1;
    } else if (c < 0x800) {
        b[0] = (char)(0xc0 | c >> 6);
        b[1] = (char)(0x80 | (c & 0x3f));
        n = 2;
    } else if (c < 0x10000) {
        b[0] = (char)(0xe0 | c >> 12);
        b[1] = (char)(0x80 | (c >> 6 & 0x3f));
        b[2] = (char)(0x80 | (c & 0x3f));
        n = 3;
    } else {
        b[0] = (char)(0xf0 | c >> 18);
        b[1] = (char)(0x80 | (c >> 12 & 0x3f));
        b[2] = (char)(0x80 | (c >> 6 & 0x3f));
        b[3] = (char)(0x80 | (c & 0x3f));
        n = 4;
    }
    profd_text_put(out, b, n);
}

static locale_t utf8_locale;   /* (locale_t)0 when the C library has none */
static pthread_once_t utf8_locale_once = PTHREAD_ONCE_INIT;

static void open_utf8_locale(void)
{
    utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

void profd_utf8_change_case(const char *s, size_t len, bool upper, struct profd_text *out)
{
    const uint8_t *u = (const uint8_t *)s;
    size_t i = 0;
    while (i < len && u[i] < 0x80)
        i++;
    if (i == len) {   /* ASCII: appended, then changed where it lies */
        size_t at = out->len;
        profd_text_put(out, s, len);
        for (i = at; i < out->len; i++)
            out->s[i] = (char)(upper ? toupper((unsigned char)out->s[i])
                                     : tolower((unsigned char)out->s[i]));
        return;
    }
    pthread_once(&utf8_locale_once, open_utf8_locale);
    for (i = 0; i < len;) {
        size_t n = utf8_char_len(u + i, len - i);
        if (!n) {
            profd_text_add(out, UTF8_REPLACEMENT);
            i++;
            continue;
        }
        uint32_t c = decode(u + i, n);
        if (utf8_locale)
            c = (uint32_t)(upper ? towupper_l((wint_t)c, utf8_locale)
                                 : towlower_l((wint_t)c, utf8_locale));
        else if (c < 0x80)
            c = (uint32_t)(upper ? toupper((int)c) : tolower((int)c));
        encode(c, out);
        i += n;
    }
}
