// SPDX-License-Identifier: Apache-2.0
/*
 * processor symbolize: fills functions, files, lines and inline frames for
 * every location that has an address and a mapping but no lines, from the
 * binary the mapping names (found by build-id and path, never a different
 * build). Locations already symbolized pass untouched. A location that
 * cannot be symbolized stays as it is and is counted by reason
 * (profd_symbolize_locations{result=...}); the record always goes on.
 *
 * Binaries are looked for on this host (lib/binary_lookup.h), then under
 * /proc/<pid>/root for a record with a pid label, then on the configured
 * debuginfod servers, always by build-id when one was recorded.
 *
 * Opened binaries are kept, least recently used first out, within
 * max_memory (their files' sizes); a binary that could not be found is not
 * looked for again before negative_ttl. What is kept (symbol_cache.c) is
 * shared by the instances of one id, one per pipeline that lists it.
 *
 * Kernel frames ([kernel.kallsyms] mappings) get function names from the
 * kallsyms copy perf's build-id cache keeps for the recorded kernel
 * (<debug directory>/[kernel.kallsyms]/<build-id>/kallsyms), else from
 * /proc/kallsyms when the running kernel's build-id is the recorded one (a
 * different KASLR offset is undone through _text), or from a configured
 * System.map whatever the build-id. Kernel modules' frames (mappings named
 * *.ko or [module], or in the kernel's half of the address space) are
 * named from the same table, whose module symbols apply when its _text is
 * the recorded one (the same boot's layout).
 *
 * Code in anonymous mappings of a record with a pid label is named from
 * the JIT's perf_map_dir/perf-<pid>.map, read again when it changes.
 *
 * Not yet: vmlinux with DWARF for kernel lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../../lib/clock.h"
#include "demangle.h"
#include "elf_symbols.h"
#include "kernel_symbols.h"
#include "perf_map.h"
#include "profd/plugin.h"
#include "profile_functions.h"
#include "symbol_cache.h"

#define MAX_INLINE 64

static const char *const demangle_modes[] = {"full", "templates", "none", NULL};

struct config {
    struct profd_str_list debug_directories;
    struct profd_str_map path_remaps;
    bool use_local_path;
    int demangle;
    bool keep_addresses;
    uint64_t max_memory;
    int64_t negative_ttl;
    char *kallsyms, *kernel_notes, *system_map;
    char *perf_map_dir;
    bool proc_root;
    struct profd_str_list debuginfod_urls;
    int64_t debuginfod_timeout;
    char *debuginfod_cache;
    char *inflated_cache;
    uint64_t inflated_cache_size;
};

static const struct profd_option options[] = {
    {"debug_directories", PROFD_OPT_STRING_LIST, offsetof(struct config, debug_directories),
     "[/usr/lib/debug, ~/.debug]",
     "where binaries and debug files are looked for: .build-id/xx/rest[.debug], perf's "
     ".build-id/xx/rest/elf and [kernel.kallsyms]/<build-id>/kallsyms, by file name, and (for "
     "debug files) by .gnu_debuglink"},
    {"path_remaps", PROFD_OPT_STRING_MAP, offsetof(struct config, path_remaps), NULL,
     "recorded path prefix -> local prefix, e.g. {/app: /srv/app} (build-ids still checked)"},
    {"use_local_path", PROFD_OPT_BOOL, offsetof(struct config, use_local_path), "true",
     "use the mapping's own path on this host when its build-id matches"},
    {"demangle", PROFD_OPT_ENUM, offsetof(struct config, demangle), "full",
     "function names: demangled in full, without parameters (templates), or as mangled (none)",
     .choices = demangle_modes},
    {"keep_addresses", PROFD_OPT_BOOL, offsetof(struct config, keep_addresses), "true",
     "keep each symbolized location's address (false: set it to 0)"},
    {"max_memory", PROFD_OPT_SIZE, offsetof(struct config, max_memory), "256MiB",
     "binaries kept open at once, by file size; least recently used closed first"},
    {"negative_ttl", PROFD_OPT_DURATION, offsetof(struct config, negative_ttl), "5m",
     "a binary not found is not looked for again for this long"},
    {"kallsyms", PROFD_OPT_STRING, offsetof(struct config, kallsyms), "/proc/kallsyms",
     "kernel symbols of the running kernel, used when its build-id (kernel_notes) is the "
     "recorded one; \"\" turns this off"},
    {"kernel_notes", PROFD_OPT_STRING, offsetof(struct config, kernel_notes), "/sys/kernel/notes",
     "where the running kernel's build-id is read"},
    {"perf_map_dir", PROFD_OPT_STRING, offsetof(struct config, perf_map_dir), "/tmp",
     "where JITs' perf-<pid>.map files are, for code in anonymous mappings of a record with "
     "a pid label; \"\" turns this off"},
    {"proc_root", PROFD_OPT_BOOL, offsetof(struct config, proc_root), "true",
     "for a record with a pid label, also look for a binary (with a build-id, which must "
     "match) under /proc/<pid>/root: live containers' files"},
    {"debuginfod_urls", PROFD_OPT_STRING_LIST, offsetof(struct config, debuginfod_urls), "[]",
     "debuginfod servers asked, last, for binaries and debug files by build-id (off when "
     "empty; the DEBUGINFOD_URLS environment variable is not used)"},
    {"debuginfod_timeout", PROFD_OPT_DURATION, offsetof(struct config, debuginfod_timeout), "10s",
     "a server that sends nothing for this long is given up (whole seconds)"},
    {"debuginfod_cache", PROFD_OPT_STRING, offsetof(struct config, debuginfod_cache), "",
     "where fetched files and misses are kept (\"\": libdebuginfod's default, "
     "~/.cache/debuginfod_client)"},
    {"inflated_cache", PROFD_OPT_STRING, offsetof(struct config, inflated_cache),
     "~/.cache/profd/inflated",
     "where inflated copies of binaries and debug files with compressed sections are kept, by "
     "build-id, and mapped instead of inflating them in memory (\"\": inflate in memory)"},
    {"inflated_cache_size", PROFD_OPT_SIZE, offsetof(struct config, inflated_cache_size), "1GiB",
     "the copies kept at most, least recently used removed first"},
    {"system_map", PROFD_OPT_STRING, offsetof(struct config, system_map), NULL,
     "a System.map for kernel frames, used whatever their build-id"},
    {0},
};

/* Why a location was or was not symbolized, for the gauges. */
enum result { R_SYMBOLIZED, R_NO_BINARY, R_NO_SYMBOLS, R_OUTSIDE, R_KERNEL, R_COUNT_ };
static const char *const result_names[] = {"symbolized", "no_binary", "no_symbols",
                                           "outside_segments", "kernel"};

struct state {
    const struct profd_host *host;
    struct profd_component *self;
    const struct config *cfg;
    struct symbol_cache *cache;   /* shared with the instances of this id */
    uint64_t results[R_COUNT_];
    int64_t busy_ns;              /* time spent in symbolize_profile */
    uint64_t inflate_failures;    /* logged so far */
};

static int create(const struct profd_host *host, struct profd_component *self, const void *cfgp,
                  void **out)
{
    const struct config *cfg = cfgp;
    struct symbol_cache_settings settings = {
        (const char *const *)cfg->debug_directories.items, cfg->debug_directories.n,
        (const char *const *)cfg->path_remaps.keys, (const char *const *)cfg->path_remaps.values,
        cfg->path_remaps.n, cfg->use_local_path, cfg->proc_root, cfg->max_memory,
        cfg->negative_ttl, cfg->kallsyms, cfg->kernel_notes, cfg->system_map, cfg->perf_map_dir,
        (const char *const *)cfg->debuginfod_urls.items, cfg->debuginfod_urls.n,
        cfg->debuginfod_timeout / 1000000000, cfg->debuginfod_cache, cfg->inflated_cache,
        cfg->inflated_cache_size};
    char err[512];
    struct symbol_cache *cache = symbol_cache_acquire(host->id(self), &settings, err, sizeof(err));
    if (!cache) {
        host->log(self, PROFD_LOG_ERROR, "%s", err);
        return PROFD_ERR;
    }
    struct state *s = calloc(1, sizeof(*s));
    if (!s)
        abort();
    *s = (struct state){.host = host, .self = self, .cfg = cfg, .cache = cache};
    *out = s;
    return PROFD_OK;
}

/* ---- locations ---- */

/* Gives l one line: function name (no file or line), from a symbol table
 * that names functions only (kallsyms, perf maps). NULL name: not found. */
static enum result name_only(struct state *s, struct profile_functions *pf,
                             struct profd_location *l, struct profd_mapping *m, const char *name)
{
    if (!name)
        return R_NO_SYMBOLS;
    l->lines = s->host->profile_alloc(pf->profile, sizeof(*l->lines));
    l->lines[0] = (struct profd_line){profile_functions_named(pf, name), 0, 0};
    l->nlines = 1;
    m->has_functions = true;
    return R_SYMBOLIZED;
}

/* Names kernel location l of mapping m from table k. The kernel's own
 * mapping ("[kernel.kallsyms]_text") has the recorded address of _text as
 * its file offset, which undoes another boot's KASLR offset; a module's
 * addresses (module) are used as they are. */
static enum result symbolize_kernel(struct state *s, struct profile_functions *pf,
                                    struct profd_location *l, struct profd_mapping *m,
                                    struct kernel_symbols *k, bool module)
{
    uint64_t addr = l->address;
    if (!module && m->file_offset && kernel_symbols_text(k))
        addr = addr - m->file_offset + kernel_symbols_text(k);
    return name_only(s, pf, l, m, kernel_symbols_find(k, addr));
}

/* True for the mapping names perf and others give anonymous (JIT) code. */
static bool is_anonymous(const char *filename)
{
    return !filename[0] || !strcmp(filename, "//anon") || !strncmp(filename, "[anon", 5) ||
           !strncmp(filename, "/tmp/perf-", 10);
}

static bool is_kernel_itself(const char *filename)
{
    return !strncmp(filename, "[kernel.kallsyms]", 17);
}

/* The kernel, or a kernel module: by name, or by address (the upper half
 * of the address space, where x86-64 and arm64 kernels live). */
static bool is_kernel(const char *filename, const struct profd_mapping *m)
{
    return is_kernel_itself(filename) || !strcmp(filename, "[vmlinux]") ||
           strstr(filename, ".ko") != NULL || m->memory_start >= 0xffff800000000000ull;
}

/* Copies string ref of p into buf. */
static void string_of(const struct profd_profile *p, uint32_t ref, char *buf, size_t size)
{
    snprintf(buf, size, "%.*s", (int)p->strings[ref].len, p->strings[ref].ptr);
}

/* The symbol table for kernel module mapping m of p: its kernel's (the
 * build-id of p's kernel mapping), when that table's kernel had the
 * recorded layout (the same _text), so that module addresses mean the
 * same; else NULL. */
static struct kernel_symbols *module_table(struct state *s, const struct profd_profile *p)
{
    char filename[64], build_id[128];
    for (uint32_t i = 0; i < p->nmappings; i++) {
        const struct profd_mapping *km = &p->mappings[i];
        string_of(p, km->filename, filename, sizeof(filename));
        if (!is_kernel_itself(filename))
            continue;
        string_of(p, km->build_id, build_id, sizeof(build_id));
        struct kernel_symbols *k = symbol_cache_kernel(s->cache, build_id);
        return k && (!km->file_offset || kernel_symbols_text(k) == km->file_offset) ? k : NULL;
    }
    return NULL;
}

/* Symbolizes location l of mapping m from binary b. */
static enum result symbolize_location(struct state *s, struct profile_functions *pf,
                                      struct profd_location *l, struct profd_mapping *m,
                                      struct elf_binary *b)
{
    uint64_t vaddr;
    if (l->address < m->memory_start ||
        !elf_binary_vaddr(b, l->address - m->memory_start + m->file_offset, &vaddr))
        return R_OUTSIDE;
    struct elf_frame frames[MAX_INLINE];
    size_t n = elf_binary_frames(b, vaddr, frames, MAX_INLINE);
    if (!n)
        return R_NO_SYMBOLS;
    l->lines = s->host->profile_alloc(pf->profile, n * sizeof(*l->lines));
    l->nlines = (uint32_t)n;
    for (size_t i = 0; i < n; i++) {
        l->lines[i] = (struct profd_line){profile_functions_of_frame(pf, &frames[i]),
                                          frames[i].line, frames[i].column};
        m->has_filenames |= frames[i].file[0] != 0;
        m->has_line_numbers |= frames[i].line != 0;
    }
    m->has_functions = true;
    m->has_inline_frames |= n > 1;
    if (!s->cfg->keep_addresses)
        l->address = 0;
    return R_SYMBOLIZED;
}

/* Where a mapping's addresses get their names, decided once per profile. */
struct source {
    bool decided;
    enum result missing;                 /* the outcome when no table is there */
    struct kernel_symbols *kernel;
    bool module;                         /* a kernel module, named from its kernel's table */
    const struct perf_map *jit;
    struct elf_binary *elf;
};

static struct source source_of(struct state *s, const struct profd_profile *p,
                               const struct profd_mapping *m, int32_t pid)
{
    char filename[4096], build_id[128];
    string_of(p, m->filename, filename, sizeof(filename));
    string_of(p, m->build_id, build_id, sizeof(build_id));
    struct source src = {.decided = true, .missing = R_NO_BINARY};
    if (is_kernel(filename, m)) {
        src.missing = R_KERNEL;
        src.module = !is_kernel_itself(filename);
        src.kernel = src.module ? module_table(s, p) : symbol_cache_kernel(s->cache, build_id);
    } else if (is_anonymous(filename)) {
        src.jit = symbol_cache_jit(s->cache, pid);
    } else if (filename[0] == '/') {
        src.elf = symbol_cache_binary(s->cache, filename, build_id, pid);
    }
    return src;
}

/* A location to symbolize and its address, for sorting. */
struct by_address {
    uint64_t address;
    uint32_t location;   /* index in the profile */
};

/* Sorts a[n] by address, stably (radix sort, 11 bits a pass, least
 * significant first; a pass where every address has the same digit moves
 * nothing). Returns a or spare, whichever holds the result. */
static struct by_address *sort_by_address(struct by_address *a, struct by_address *spare, size_t n)
{
    enum { BITS = 11, DIGITS = 1 << BITS };
    for (unsigned shift = 0; shift < 64; shift += BITS) {
        size_t count[DIGITS] = {0};
        bool moves = true;
        for (size_t i = 0; i < n; i++)
            count[(a[i].address >> shift) & (DIGITS - 1)]++;
        for (size_t d = 0, at = 0; d < DIGITS; d++) {
            size_t c = count[d];
            moves &= c != n;
            count[d] = at;
            at += c;
        }
        if (!moves)
            continue;
        for (size_t i = 0; i < n; i++)
            spare[count[(a[i].address >> shift) & (DIGITS - 1)]++] = a[i];
        struct by_address *sorted = spare;
        spare = a;
        a = sorted;
    }
    return a;
}

/* The locations of p to symbolize (an address and a mapping, no lines),
 * by address: neighbours in the binaries' tables are looked up one after
 * the other. Sets *n; the result lives in a mapping of *size bytes at
 * *block (mapped, not allocated, so that this profile-sized scratch space
 * goes back to the system at once: munmap it). */
static const struct by_address *locations_by_address(const struct profd_profile *p, size_t *n,
                                                     void **block, size_t *size)
{
    *size = 2 * ((size_t)p->nlocations + 1) * sizeof(struct by_address);
    struct by_address *a = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                                -1, 0);
    if (a == MAP_FAILED)
        abort();
    *block = a;
    *n = 0;
    for (uint32_t i = 0; i < p->nlocations; i++) {
        const struct profd_location *l = &p->locations[i];
        if (!l->nlines && l->mapping && l->mapping <= p->nmappings)
            a[(*n)++] = (struct by_address){l->address, i};
    }
    return sort_by_address(a, a + p->nlocations + 1, *n);
}

/* Symbolizes every location of p that has an address and a mapping but no
 * lines; pid is the record's process (for JIT maps and its root), 0 when
 * unknown. Returns true when anything changed. */
static bool symbolize_profile(struct state *s, struct profd_profile *p, int32_t pid)
{
    symbol_cache_begin(s->cache, s->host, s->self);
    struct source *sources = calloc(p->nmappings + 1, sizeof(*sources));
    if (!sources)
        abort();
    struct profile_functions pf;
    profile_functions_init(&pf, s->host, p, (enum demangle_mode)s->cfg->demangle);
    size_t n, size;
    void *block;
    const struct by_address *order = locations_by_address(p, &n, &block, &size);
    bool changed = false;
    for (size_t i = 0; i < n; i++) {
        if (i + 16 < n)   /* locations come in address order, not memory order */
            __builtin_prefetch(&p->locations[order[i + 16].location], 1);
        struct profd_location *l = &p->locations[order[i].location];
        struct profd_mapping *m = &p->mappings[l->mapping - 1];
        struct source *src = &sources[l->mapping];
        if (!src->decided)
            *src = source_of(s, p, m, pid);
        enum result r = src->missing;
        if (src->kernel)
            r = symbolize_kernel(s, &pf, l, m, src->kernel, src->module);
        else if (src->jit)
            r = name_only(s, &pf, l, m, perf_map_find(src->jit, l->address));
        else if (src->elf)
            r = symbolize_location(s, &pf, l, m, src->elf);
        s->results[r]++;
        changed |= r == R_SYMBOLIZED;
    }
    munmap(block, size);
    profile_functions_free(&pf);
    free(sources);
    symbol_cache_end(s->cache);
    return changed;
}

static void publish_results(struct state *s)
{
    char labels[64];
    for (int r = 0; r < R_COUNT_; r++) {
        snprintf(labels, sizeof(labels), "result=\"%s\"", result_names[r]);
        s->host->gauge_set(s->self, "profd_symbolize_locations",
                           "locations seen by the symbolizer, by outcome", labels,
                           (double)s->results[r]);
    }
    s->host->gauge_set(s->self, "profd_symbolize_seconds",
                       "time spent symbolizing profiles since start", "",
                       (double)s->busy_ns / 1e9);
    char why[256];
    struct inflated_cache_stats in = symbol_cache_inflated(s->cache, why, sizeof(why));
    const struct {
        const char *result;
        uint64_t n;
    } copies[] = {{"found", in.found}, {"made", in.made}, {"failed", in.failed}};
    for (size_t i = 0; i < sizeof(copies) / sizeof(*copies); i++) {
        snprintf(labels, sizeof(labels), "result=\"%s\"", copies[i].result);
        s->host->gauge_set(s->self, "profd_symbolize_inflated_copies",
                           "inflated copies of compressed debug files asked for, by outcome",
                           labels, (double)copies[i].n);
    }
    if (in.failed > s->inflate_failures) {
        s->inflate_failures = in.failed;
        s->host->log(s->self, PROFD_LOG_WARN, "inflated copy not kept (read in memory): %s", why);
    }
}

static int consume(void *st, struct profd_batch *b)
{
    struct state *s = st;
    for (size_t i = 0; i < b->nrecords; i++) {
        struct profd_record *r = b->records[i];
        char err[512];
        struct profd_profile *p = s->host->record_profile(r, err, sizeof(err));
        if (!p) {
            s->host->log(s->self, PROFD_LOG_WARN, "left unsymbolized: %s", err);
            continue;
        }
        const char *pid = s->host->record_label(r, "pid");
        int64_t start = monotonic_ns();
        if (symbolize_profile(s, p, pid ? atoi(pid) : 0))
            s->host->record_touch(r);
        int64_t took = monotonic_ns() - start;
        s->busy_ns += took;
        s->host->log(s->self, PROFD_LOG_DEBUG, "%u locations looked at in %.3f s",
                     p->nlocations, (double)took / 1e9);
    }
    publish_results(s);
    return s->host->emit(s->self, b);
}

static void destroy(void *st)
{
    struct state *s = st;
    if (!s)
        return;
    symbol_cache_release(s->cache);
    free(s);
}

static const struct profd_plugin plugin = {
    PROFD_PLUGIN_HEADER,
    .kind = PROFD_PROCESSOR,
    .type = "symbolize",
    .description = "addresses to functions, files, lines and inline frames (ELF, DWARF)",
    .options = options,
    .config_size = sizeof(struct config),
    .flags = PROFD_PLUGIN_MUTATES,
    .create = create,
    .consume = consume,
    .destroy = destroy,
};

PROFD_PLUGIN_DEFINE(plugin)
