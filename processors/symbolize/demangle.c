// SPDX-License-Identifier: Apache-2.0
#include "demangle.h"

#include <stdlib.h>
#include <string.h>

/* From the C++ runtime (libstdc++). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Cuts s's trailing parameter list, "(...)" and any qualifiers after it. */
static void drop_parameters(char *s)
{
    size_t n = strlen(s);
    while (n && s[n - 1] != ')') {   /* " const", " &&", ... */
        if (s[n - 1] == '>' || s[n - 1] == ']')
            return;
        n--;
    }
    int depth = 0;
    for (size_t i = n; i-- > 0;) {
        depth += s[i] == ')' ? 1 : s[i] == '(' ? -1 : 0;
        if (depth == 0) {
            s[i] = 0;
            return;
        }
    }
}

/* Cuts Rust's "::h0123456789abcdef" disambiguating hash. */
static void drop_rust_hash(char *s)
{
    size_t n = strlen(s);
    if (n < 19 || strncmp(s + n - 19, "::h", 3))
        return;
    for (size_t i = n - 16; i < n; i++)
        if (!strchr("0123456789abcdef", s[i]))
            return;
    s[n - 19] = 0;
}

char *demangle(const char *name, enum demangle_mode mode)
{
    int status = -1;
    char *out = NULL;
    if (mode != DEMANGLE_NONE && !strncmp(name, "_Z", 2))
        out = __cxa_demangle(name, NULL, NULL, &status);
    if (!out || status != 0) {
        free(out);
        if (!(out = strdup(name)))
            abort();
        return out;
    }
    drop_rust_hash(out);
    if (mode == DEMANGLE_TEMPLATES)
        drop_parameters(out);
    return out;
}
