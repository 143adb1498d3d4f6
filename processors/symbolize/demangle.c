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

char *demangle(const char *name, enum demangle_mode mode)
{
    char *out = NULL;
    /* libiberty's demangler, as binutils' addr2line -C uses it:
     * Rust's schemes (legacy _ZN...17h<hash>E, which it tells from C++ by
     * the hash, and v0, _R...), else C++ with the options the C++
     * runtime's __cxa_demangle uses. */
    if (mode != DEMANGLE_NONE && (!strncmp(name, "_Z", 2) || !strncmp(name, "_R", 2)))
        out = cplus_demangle(name, DMGL_PARAMS | DMGL_TYPES | DMGL_AUTO);
    if (!out) {
        if (!(out = strdup(name)))
            abort();
        return out;
    }
    if (mode == DEMANGLE_TEMPLATES)
        drop_parameters(out);
    return out;
}
