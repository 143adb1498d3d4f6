// SPDX-License-Identifier: Apache-2.0
#include "json_text.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "diag.h"

/* The code unit of the escape "\uXXXX" at s, or -1 when s holds none. */
static long code_unit_at(const char *s)
{
    if (s[0] != '\\' || s[1] != 'u')
        return -1;
    long unit = 0;
    for (int i = 2; i < 6; i++) {
        char c = s[i];
        int digit = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
        if (digit < 0)
            return -1;
        unit = unit * 16 + digit;
    }
    return unit;
}

static bool is_high(long unit)
{
    return unit >= 0xD800 && unit <= 0xDBFF;
}

static bool is_low(long unit)
{
    return unit >= 0xDC00 && unit <= 0xDFFF;
}

char *cfg_json_for_yaml(const char *text)
{
    if (!strstr(text, "\\ud") && !strstr(text, "\\uD"))
        return NULL;
    size_t len = strlen(text);
    char *out = profd_xmalloc(len + 1), *o = out;   /* it never grows */
    bool in_string = false, changed = false;
    size_t saved = 0;   /* characters the escapes of this string saved */
    for (const char *s = text; *s;) {
        long unit = in_string ? code_unit_at(s) : -1;
        if (is_high(unit) && is_low(code_unit_at(s + 6))) {
            long low = code_unit_at(s + 6);
            long code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
            o += sprintf(o, "\\U%08lX", code);
            s += 12;
            saved += 2;
            changed = true;
        } else if (is_high(unit) || is_low(unit)) {   /* alone */
            memcpy(o, "\\uFFFD", 6);
            o += 6;
            s += 6;
            changed = true;
        } else if (in_string && *s == '\\' && s[1]) {   /* any other escape, whole */
            *o++ = *s++;
            *o++ = *s++;
        } else {
            if (*s == '"' && in_string) {
                *o++ = *s++;
                memset(o, ' ', saved);
                o += saved;
                saved = 0;
                in_string = false;
                continue;
            }
            in_string |= *s == '"';
            *o++ = *s++;
        }
    }
    *o = '\0';
    if (!changed) {
        free(out);
        return NULL;
    }
    return out;
}

struct cfg_node *cfg_load_json_string(const char *name, const char *text, struct profd_diag *d)
{
    char *fit = cfg_json_for_yaml(text);
    struct cfg_node *root = cfg_load_string(name, fit ? fit : text, d);
    free(fit);
    return root;
}

struct cfg_node *cfg_load_json_file(const char *path, struct profd_diag *d)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        profd_diag_add(d, NULL, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t len = 0, cap = 4096;
    char *text = profd_xmalloc(cap);
    for (size_t got; (got = fread(text + len, 1, cap - len - 1, f)) > 0;) {
        len += got;
        if (cap - len == 1)
            text = profd_xrealloc(text, cap *= 2);
    }
    bool failed = ferror(f);
    fclose(f);
    text[len] = '\0';
    struct cfg_node *root = NULL;
    if (failed)
        profd_diag_add(d, NULL, "%s: cannot read", path);
    else
        root = cfg_load_json_string(path, text, d);
    free(text);
    return root;
}
