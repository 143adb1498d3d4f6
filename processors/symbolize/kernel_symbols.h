// SPDX-License-Identifier: Apache-2.0
/*
 * Kernel function names from a kallsyms-format table (/proc/kallsyms or a
 * System.map: "address type name [module]" lines), and the running
 * kernel's GNU build-id from /sys/kernel/notes, which decides whether
 * /proc/kallsyms describes the kernel a profile was recorded on.
 */
#ifndef PROFD_KERNEL_SYMBOLS_H
#define PROFD_KERNEL_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

struct kernel_symbols;

/* Reads the text symbols of a kallsyms-format file: a regular file sorted
 * by address is searched in place (a few KiB read per lookup, never held
 * whole), anything else (such as /proc/kallsyms) is read into a table.
 * NULL with err filled when it cannot be read or holds no addresses
 * (kptr_restrict hides them). */
struct kernel_symbols *kernel_symbols_load(const char *path, char *err, size_t errlen);
/* The function holding addr (the last text symbol at or below it, before
 * the table's end), or NULL. The name is valid until the next call. */
const char *kernel_symbols_find(struct kernel_symbols *k, uint64_t addr);
/* The address of _text in the table (0 when absent): with the recorded
 * one, it undoes a different KASLR offset. */
uint64_t kernel_symbols_text(const struct kernel_symbols *k);
void kernel_symbols_free(struct kernel_symbols *k);

/* The running kernel's build-id (lowercase hex) from notes_path (normally
 * /sys/kernel/notes) into out; "" when not found. */
void kernel_build_id(const char *notes_path, char out[41]);

#endif
