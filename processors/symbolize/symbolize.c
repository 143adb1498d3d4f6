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
 * looked for again before negative_ttl.
 *
 * Kernel frames ([kernel.kallsyms] mappings) get function names from the
 * kallsyms copy perf's build-id cache keeps for the recorded kernel
 * (<debug directory>/[kernel.kallsyms]/<build-id>/kallsyms), else from
 * /proc/kallsyms when the running kernel's build-id is the recorded one (a
 * different KASLR offset is undone through _text), or from a configured
 * System.map whatever the build-id.
 *
 * Code in anonymous mappings of a record with a pid label is named from
 * the JIT's perf_map_dir/perf-<pid>.map, read again when it changes.
 *
 * Not yet: vmlinux with DWARF for kernel lines, kernel modules, Go inline
 * frames for Go binaries without DWARF.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/binary_lookup.h"
#include "../../lib/grow.h"
#include "debuginfod.h"
#include "demangle.h"
#include "elf_symbols.h"
#include "kernel_symbols.h"
#include "perf_map.h"
#include "profd/plugin.h"
#include "profile_functions.h"

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
    {"system_map", PROFD_OPT_STRING, offsetof(struct config, system_map), NULL,
     "a System.map for kernel frames, used whatever their build-id"},
    {0},
};

/* Why a location was or was not symbolized, for the gauges. */
enum result { R_SYMBOLIZED, R_NO_BINARY, R_NO_SYMBOLS, R_OUTSIDE, R_KERNEL, R_COUNT_ };
static const char *const result_names[] = {"symbolized", "no_binary", "no_symbols",
                                           "outside_segments", "kernel"};

/* A JIT's perf-<pid>.map, read again when the file changes. */
struct jit_map {
    int32_t pid;
    struct perf_map *map;         /* NULL: none */
    uint64_t serial;              /* of the last profile that checked the file */
};

/* A kernel's symbol table by build-id, or the knowledge that there is none. */
struct kernel_table {
    char build_id[41];
    struct kernel_symbols *syms;  /* NULL: none found */
};

/* A binary by (recorded path, build-id): open, or known missing. */
struct binary {
    char *filename, *build_id;
    struct elf_binary *elf;       /* NULL: not found (until retry_at) */
    size_t charged;               /* its footprint counted in open_bytes */
    int64_t retry_at;
    uint64_t last_used;
    uint64_t serial;              /* of the last profile that used it */
};

struct state {
    const struct profd_host *host;
    struct profd_component *self;
    const struct config *cfg;
    struct binary_lookup lookup;
    char *debug_path;             /* elfutils' debuginfo path */
    struct remote_debuginfo *remote;   /* debuginfod, NULL when off */
    struct binary *binaries;
    size_t nbinaries, binaries_cap;
    size_t open_bytes;
    uint64_t clock;               /* use counter for LRU */
    uint64_t serial;              /* of the profile being symbolized */
    struct kernel_table *kernels; /* each loaded on its first frame */
    size_t nkernels, kernels_cap;
    char running_kernel[41];      /* the running kernel's build-id, "" unknown */
    struct jit_map *jit_maps;     /* perf-<pid>.map files read */
    size_t njit_maps, jit_maps_cap;
    uint64_t results[R_COUNT_];
    int64_t busy_ns;              /* time spent in symbolize_profile */
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void destroy(void *st);

static int create(const struct profd_host *host, struct profd_component *self, const void *cfgp,
                  void **out)
{
    const struct config *cfg = cfgp;
    struct state *s = calloc(1, sizeof(*s));
    if (!s)
        return PROFD_ERR;
    *s = (struct state){.host = host, .self = self, .cfg = cfg};
    binary_lookup_init(&s->lookup, (const char *const *)cfg->debug_directories.items,
                       cfg->debug_directories.n, (const char *const *)cfg->path_remaps.keys,
                       (const char *const *)cfg->path_remaps.values, cfg->path_remaps.n,
                       cfg->use_local_path);
    size_t len = 1;
    for (size_t i = 0; i < s->lookup.ndirs; i++)
        len += strlen(s->lookup.dirs[i]) + 1;
    if (!(s->debug_path = calloc(1, len + 1)))
        abort();
    strcpy(s->debug_path, "-");   /* no CRC check of debuglink files */
    for (size_t i = 0; i < s->lookup.ndirs; i++) {
        strcat(s->debug_path, ":");
        strcat(s->debug_path, s->lookup.dirs[i]);
    }
    char err[256];
    if (cfg->debuginfod_urls.n &&
        !(s->remote = remote_debuginfo_new((const char *const *)cfg->debuginfod_urls.items,
                                           cfg->debuginfod_urls.n,
                                           cfg->debuginfod_timeout / 1000000000,
                                           cfg->debuginfod_cache, err, sizeof(err)))) {
        host->log(self, PROFD_LOG_ERROR, "%s", err);
        destroy(s);
        return PROFD_ERR;
    }
    *out = s;
    return PROFD_OK;
}

/* ---- binaries ---- */

static void close_binary(struct state *s, struct binary *b)
{
    if (!b->elf)
        return;
    s->open_bytes -= b->charged;
    elf_binary_close(b->elf);
    b->elf = NULL;
    b->retry_at = 0;   /* evicted, not missing: may open again at once */
}

/* Closes the least recently used binaries until `need` more bytes fit;
 * those the profile being symbolized uses stay, even past max_memory. */
static void make_room(struct state *s, size_t need)
{
    while (s->open_bytes + need > s->cfg->max_memory) {
        struct binary *lru = NULL;
        for (size_t i = 0; i < s->nbinaries; i++)
            if (s->binaries[i].elf && s->binaries[i].serial != s->serial &&
                (!lru || s->binaries[i].last_used < lru->last_used))
                lru = &s->binaries[i];
        if (!lru)
            return;
        close_binary(s, lru);
    }
}

static struct binary *binary_entry(struct state *s, const char *filename, const char *build_id)
{
    for (size_t i = 0; i < s->nbinaries; i++)
        if (!strcmp(s->binaries[i].filename, filename) && !strcmp(s->binaries[i].build_id, build_id))
            return &s->binaries[i];
    s->binaries = grow_array(s->binaries, &s->binaries_cap, s->nbinaries + 1, sizeof(*s->binaries));
    struct binary *b = &s->binaries[s->nbinaries++];
    *b = (struct binary){strdup(filename), strdup(build_id)};
    if (!b->filename || !b->build_id)
        abort();
    return b;
}

/* elf_debug_fetch_fn over the debuginfod client arg. */
static int fetch_debug_file(void *arg, const unsigned char *build_id, size_t len, char **path)
{
    return remote_debuginfo_debug_file(arg, build_id, len, path);
}

/* The binary filename with build_id (never another build) as process pid
 * sees it, from its root: a live container's file. malloc'd, or NULL. */
static char *in_process_root(const struct state *s, const char *filename, const char *build_id,
                             int32_t pid)
{
    char *path;
    if (!s->cfg->proc_root || pid <= 0 || !*build_id || filename[0] != '/' ||
        asprintf(&path, "/proc/%d/root%s", pid, filename) < 0)
        return NULL;
    if (binary_lookup_is_elf(path, build_id))
        return path;
    free(path);
    return NULL;
}

/* The opened binary for a mapping of process pid (0: unknown), or NULL
 * (known missing for a while). */
static struct elf_binary *binary_for(struct state *s, const char *filename, const char *build_id,
                                     int32_t pid)
{
    struct binary *b = binary_entry(s, filename, build_id);
    b->last_used = ++s->clock;
    b->serial = s->serial;
    if (b->elf || (b->retry_at && now_ns() < b->retry_at))
        return b->elf;
    char err[512] = "not found";
    char *path = binary_lookup_find(&s->lookup, filename, build_id);
    if (!path)
        path = in_process_root(s, filename, build_id, pid);
    if (!path && s->remote && *build_id)
        path = remote_debuginfo_executable(s->remote, build_id, err, sizeof(err));
    struct elf_binary *elf = path ? elf_binary_open(path, s->debug_path, s->remote ? fetch_debug_file
                                                    : NULL, s->remote, err, sizeof(err)) : NULL;
    if (!elf) {
        s->host->log(s->self, PROFD_LOG_INFO, "%s%s%s: %s", filename, *build_id ? " build-id " : "",
                     build_id, err);
        b->retry_at = now_ns() + s->cfg->negative_ttl;
    } else {
        b->charged = elf_binary_footprint(elf);
        make_room(s, b->charged);
        s->open_bytes += b->charged;
        b->elf = elf;
    }
    free(path);
    return b->elf;
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

/* Loads the symbol table of the kernel with that build-id ("" for the
 * system_map, which serves any): perf's build-id cache copy in a debug
 * directory, else kallsyms when it is the running kernel. NULL: none. */
static struct kernel_symbols *load_kernel(struct state *s, const char *build_id)
{
    const struct config *c = s->cfg;
    char err[512], path[4096];
    if (c->system_map)
        return kernel_symbols_load(c->system_map, err, sizeof(err));
    for (size_t i = 0; *build_id && i < s->lookup.ndirs; i++) {
        snprintf(path, sizeof(path), "%s/[kernel.kallsyms]/%s/kallsyms", s->lookup.dirs[i],
                 build_id);
        struct kernel_symbols *k = access(path, R_OK) ? NULL :
                                   kernel_symbols_load(path, err, sizeof(err));
        if (k)
            return k;
    }
    if (!c->kallsyms || !*c->kallsyms)
        return NULL;
    if (!s->running_kernel[0])
        kernel_build_id(c->kernel_notes, s->running_kernel);
    if (!*build_id || strcmp(build_id, s->running_kernel))
        return NULL;
    struct kernel_symbols *k = kernel_symbols_load(c->kallsyms, err, sizeof(err));
    if (!k)
        s->host->log(s->self, PROFD_LOG_INFO, "kernel frames stay addresses: %s", err);
    return k;
}

/* The kernel symbol table for a mapping of that build-id, or NULL. */
static const struct kernel_symbols *kernel_table(struct state *s, const char *build_id)
{
    if (s->cfg->system_map)
        build_id = "";   /* one table for all */
    if (strlen(build_id) >= sizeof(s->kernels->build_id))
        return NULL;     /* no GNU build-id is that long */
    for (size_t i = 0; i < s->nkernels; i++)
        if (!strcmp(s->kernels[i].build_id, build_id))
            return s->kernels[i].syms;
    s->kernels = grow_array(s->kernels, &s->kernels_cap, s->nkernels + 1, sizeof(*s->kernels));
    struct kernel_table *t = &s->kernels[s->nkernels++];
    memcpy(t->build_id, build_id, strlen(build_id) + 1);
    t->syms = load_kernel(s, build_id);
    return t->syms;
}

/* Names kernel location l of mapping m ("[kernel.kallsyms]_text", whose
 * file offset is where _text was when recorded) from table k. */
static enum result symbolize_kernel(struct state *s, struct profile_functions *pf,
                                    struct profd_location *l, struct profd_mapping *m,
                                    const struct kernel_symbols *k)
{
    uint64_t addr = l->address;
    if (m->file_offset && kernel_symbols_text(k))   /* another boot's KASLR offset */
        addr = addr - m->file_offset + kernel_symbols_text(k);
    return name_only(s, pf, l, m, kernel_symbols_find(k, addr));
}

/* The perf map of pid, (re)read when new or changed since the last
 * profile; NULL when none. */
static const struct perf_map *jit_map_for(struct state *s, int32_t pid)
{
    struct jit_map *j = NULL;
    for (size_t i = 0; i < s->njit_maps && !j; i++)
        if (s->jit_maps[i].pid == pid)
            j = &s->jit_maps[i];
    if (!j) {
        s->jit_maps = grow_array(s->jit_maps, &s->jit_maps_cap, s->njit_maps + 1,
                                 sizeof(*s->jit_maps));
        j = &s->jit_maps[s->njit_maps++];
        *j = (struct jit_map){.pid = pid};
    } else if (j->serial == s->serial) {
        return j->map;   /* checked for this profile already, maybe in use */
    }
    j->serial = s->serial;
    char path[4096];
    snprintf(path, sizeof(path), "%s/perf-%d.map", s->cfg->perf_map_dir, pid);
    struct stat st;
    if (stat(path, &st) != 0) {
        perf_map_free(j->map);
        j->map = NULL;
        return NULL;
    }
    if (j->map) {
        off_t size;
        struct timespec mtime;
        perf_map_stamp(j->map, &size, &mtime);
        if (size == st.st_size && mtime.tv_sec == st.st_mtim.tv_sec &&
            mtime.tv_nsec == st.st_mtim.tv_nsec)
            return j->map;
        perf_map_free(j->map);
    }
    j->map = perf_map_load(path);
    return j->map;
}

/* True for the mapping names perf and others give anonymous (JIT) code. */
static bool is_anonymous(const char *filename)
{
    return !filename[0] || !strcmp(filename, "//anon") || !strncmp(filename, "[anon", 5) ||
           !strncmp(filename, "/tmp/perf-", 10);
}

static bool is_kernel(const char *filename)
{
    return !strncmp(filename, "[kernel.kallsyms]", 17) || !strcmp(filename, "[vmlinux]") ||
           strstr(filename, ".ko") != NULL;
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
    const struct kernel_symbols *kernel;
    const struct perf_map *jit;
    struct elf_binary *elf;
};

static struct source source_of(struct state *s, const struct profd_profile *p,
                               const struct profd_mapping *m, int32_t pid)
{
    char filename[4096], build_id[128];
    const struct profd_str *fs = &p->strings[m->filename], *bs = &p->strings[m->build_id];
    snprintf(filename, sizeof(filename), "%.*s", (int)fs->len, fs->ptr);
    snprintf(build_id, sizeof(build_id), "%.*s", (int)bs->len, bs->ptr);
    struct source src = {.decided = true, .missing = R_NO_BINARY};
    if (is_kernel(filename)) {
        src.missing = R_KERNEL;
        if (!strncmp(filename, "[kernel.kallsyms]", 17))
            src.kernel = kernel_table(s, build_id);
    } else if (is_anonymous(filename)) {
        if (pid > 0 && s->cfg->perf_map_dir && *s->cfg->perf_map_dir)
            src.jit = jit_map_for(s, pid);
    } else if (filename[0] == '/') {
        src.elf = binary_for(s, filename, build_id, pid);
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
    s->serial++;   /* what this profile uses stays open until it is done */
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
            r = symbolize_kernel(s, &pf, l, m, src->kernel);
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
        int64_t start = now_ns();
        if (symbolize_profile(s, p, pid ? atoi(pid) : 0))
            s->host->record_touch(r);
        int64_t took = now_ns() - start;
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
    for (size_t i = 0; i < s->nbinaries; i++) {
        close_binary(s, &s->binaries[i]);
        free(s->binaries[i].filename);
        free(s->binaries[i].build_id);
    }
    free(s->binaries);
    for (size_t i = 0; i < s->njit_maps; i++)
        perf_map_free(s->jit_maps[i].map);
    free(s->jit_maps);
    for (size_t i = 0; i < s->nkernels; i++)
        kernel_symbols_free(s->kernels[i].syms);
    free(s->kernels);
    binary_lookup_free(&s->lookup);
    free(s->debug_path);
    remote_debuginfo_free(s->remote);
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
