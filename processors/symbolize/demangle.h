// SPDX-License-Identifier: Apache-2.0
/* Readable names from mangled ones: C++, and Rust's legacy and v0
 * schemes, as binutils' addr2line -C reads them. */
#ifndef PROFD_DEMANGLE_H
#define PROFD_DEMANGLE_H

enum demangle_mode { DEMANGLE_FULL, DEMANGLE_TEMPLATES, DEMANGLE_NONE };

/* The display name of symbol name (malloc'd): demangled with parameters
 * (full), demangled without the parameter list (templates), or as it is
 * (none, and for names that are not mangled). A Rust legacy name loses
 * its trailing ::h<hash>, a v0 name its crates' disambiguators, as
 * addr2line leaves them out. */
char *demangle(const char *name, enum demangle_mode mode);

#endif
