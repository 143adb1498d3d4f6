// SPDX-License-Identifier: Apache-2.0
/*
 * One binary opened for symbolization with elfutils: DWARF line tables and
 * inlined subroutines, from the binary or from its separate debug file
 * (found by build-id or .gnu_debuglink under the debug path, else fetched);
 * where DWARF has no function, Go's .gopclntab (with inlined calls), then
 * ELF symbol tables (.symtab, .dynsym, and .gnu_debugdata's MiniDebugInfo)
 * and the PLT's stubs (plt_symbols.h), with line tables.
 */
#ifndef PROFD_ELF_SYMBOLS_H
#define PROFD_ELF_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_binary;

/* One frame at an address, innermost first; strings live until the binary
 * is closed. name is the DWARF or symbol name (mangled when the producer
 * mangles), file "" and lines 0 when unknown. */
struct elf_frame {
    const char *name;
    const char *file;
    const char *dir;       /* the compilation directory when file is relative
                            * (joined even when itself relative, as addr2line
                            * does), else "" */
    int64_t line, column, decl_line;
};

/* Finds the separate debug file of the binary with this build-id (raw
 * bytes) somewhere else than the debug path, e.g. on debuginfod servers:
 * an open descriptor with *path set (malloc'd), or a negative number,
 * -EAGAIN when it is on its way (elf_binary_debug_pending). */
typedef int (*elf_debug_fetch_fn)(void *arg, const unsigned char *build_id, size_t len,
                                  char **path);

struct binary_lookup;
struct inflated_cache;

/* Where a binary's debug file comes from: lookup's directories by
 * build-id (may be NULL), then debug_path, elfutils' debuginfo path
 * (directories joined by ':', searched by build-id and .gnu_debuglink);
 * fetch (may be NULL) is asked, with fetch_arg, when they have none. Files
 * with compressed sections are read from inflated copies kept in inflated
 * (may be NULL: inflated in memory), except those elfutils' own search
 * finds. Each lane keeps the frames it found at up to results_bytes of
 * addresses (frame_cache.h; 0: none kept), from its second profile on. */
struct elf_sources {
    const struct binary_lookup *lookup;
    const char *debug_path;
    elf_debug_fetch_fn fetch;
    void *fetch_arg;
    struct inflated_cache *inflated;
    size_t results_bytes;
};

/* Opens path, its debug file found through sources (copied, but lookup
 * and the inflated cache must outlive the binary). NULL with err filled on
 * failure. */
struct elf_binary *elf_binary_open(const char *path, const struct elf_sources *sources, char *err,
                                   size_t errlen);
/* Lookups in one elf_binary must not run at once; its lanes are copies
 * of it (opened on the same files, each with its own elfutils handles and
 * index) in which lookups run alongside those of the binary and of the
 * other lanes. At most this many, the binary itself included. */
#define ELF_BINARY_MAX_LANES 8
/* Makes lanes 1..n-1 of b (as many as are missing) and has each, and b,
 * find its debug file and read its DWARF and symbol table, so that a
 * lookup in one touches nothing shared with the others or with other
 * binaries (the debug file search, the inflated cache and fetching happen
 * here, on the calling thread). n = 1 does the latter for b alone.
 * Returns how many lanes b has now, b itself included: n, or fewer when a
 * copy could not be opened. */
size_t elf_binary_open_lanes(struct elf_binary *b, size_t n);
/* The build-id (lowercase hex) of b's debug file, or of that file's dwz
 * file, when it was on its way as b looked for it, else NULL: b reads
 * what it has without it, and its lanes do too; open it again once the
 * fetch of that build-id ended to read the file. */
const char *elf_binary_debug_pending(const struct elf_binary *b);

/* Why b has no DWARF though a debug file was found for it (one elfutils
 * read no DWARF from, or a file at its build-id place that is not an ELF
 * file of that build-id: cut short, say), once b's DWARF was asked for;
 * else why its split units were not read from a file found as its DWARF
 * package (scope_index_problem of b or of a lane); NULL when none of
 * these. */
const char *elf_binary_debug_problem(const struct elf_binary *b);

/* Lane k of b (0 is b itself); k must be below what
 * elf_binary_open_lanes returned. */
struct elf_binary *elf_binary_lane(struct elf_binary *b, size_t k);
/* Sets *vaddr to the virtual address file offset off is loaded at, from
 * the program headers. Returns 1, or 0 when no loadable segment holds it. */
int elf_binary_vaddr(const struct elf_binary *b, uint64_t off, uint64_t *vaddr);
/* Sets *vaddr to the address of the first executable loadable segment: a
 * kernel image's _text. Returns 1, or 0 when there is none. */
int elf_binary_text(const struct elf_binary *b, uint64_t *vaddr);
/* Frames at vaddr (innermost first), at most max. Returns how many. An
 * address looked up before in this lane is answered from its results. */
size_t elf_binary_frames(struct elf_binary *b, uint64_t vaddr, struct elf_frame *out, size_t max);
/* Readies the memory b's kept result for vaddr would be read from, if b
 * keeps results (a lookup some locations ahead goes faster). */
void elf_binary_prefetch_result(const struct elf_binary *b, uint64_t vaddr);
/* Has b and its lanes look up (and keep) results for addresses in their
 * results only when `use` (the default): a profile with more addresses in
 * b than a lane keeps would only have each put out another. */
void elf_binary_use_results(struct elf_binary *b, bool use);
/* How many addresses a lane of b keeps the results of at most (0: none). */
size_t elf_binary_results_room(const struct elf_binary *b);
/* An estimate of the memory the binary holds (its files' sizes, and the
 * indexes and results of its lanes). */
size_t elf_binary_footprint(const struct elf_binary *b);
/* Ends a profile's use of b: its pages given back (elf_binary_drop_pages),
 * and from the next profile on, its lanes keep the results of their
 * lookups (a binary that serves a single profile, as a conversion's, never
 * holds them). */
void elf_binary_profile_done(struct elf_binary *b);
/* Lets the system take back the pages of the binary's files read so far
 * (what is needed again is read again from the page cache): inflated
 * sections and indexes are on the heap, the files themselves need not stay
 * resident between profiles. */
void elf_binary_drop_pages(struct elf_binary *b);
/* For the thread that looks up in lane (elf_binary_lane), done with the
 * binary for now: the pages of its DWARF files read since they were last
 * given back are given back, when it has looked anything up since (an
 * answer from its kept results reads none). */
void elf_binary_lane_done(struct elf_binary *lane);
/* Closes b and its lanes. */
void elf_binary_close(struct elf_binary *b);

#endif
