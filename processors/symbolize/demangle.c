// SPDX-License-Identifier: Apache-2.0
#include "demangle.h"

#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

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
    char *out = NULL;
    /* libiberty's demangler (the C++ runtime's, without loading it), with
     * the options the runtime's __cxa_demangle uses. */
    if (mode != DEMANGLE_NONE && !strncmp(name, "_Z", 2))
        out = cplus_demangle_v3(name, DMGL_PARAMS | DMGL_TYPES);
    if (!out) {
        if (!(out = strdup(name)))
            abort();
        return out;
    }
    drop_rust_hash(out);
    if (mode == DEMANGLE_TEMPLATES)
        drop_parameters(out);
    return out;
}
