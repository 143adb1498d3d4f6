// SPDX-License-Identifier: Apache-2.0
#include "json_escape.h"

#include <stdio.h>
#include <string.h>

#include "grow.h"

char *json_escape(const char *s)
{
    char *out = must_malloc(6 * strlen(s) + 1);
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            out[o++] = '\\';
            out[o++] = (char)*p;
        } else if (*p < 0x20) {
            o += (size_t)sprintf(out + o, "\\u%04x", *p);
        } else {
            out[o++] = (char)*p;
        }
    }
    out[o] = '\0';
    return out;
}
