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
 * the JIT's perf_map_dir/perf-<pid>.map, read again when it changes and
 * kept with the binaries within max_memory.
 *
 * A profile's locations are symbolized by locations.c, on up to `threads`
 * threads when there are many.
 *
 */
#include <stdio.h>
#include <stdlib.h>

#include "../../lib/clock.h"
#include "../../lib/cpus.h"
#include "debuginfod.h"
#include "locations.h"
#include "profd/plugin.h"
#include "symbol_cache.h"

static const char *const demangle_modes[] = {"full", "templates", "none", NULL};

struct config {
    struct profd_str_list debug_directories;
    struct profd_str_map path_remaps;
    bool use_local_path;
    int demangle;
    bool keep_addresses;
    uint64_t max_memory;
    int64_t negative_ttl;
    char *kallsyms, *kernel_notes, *system_map, *vmlinux;
    char *perf_map_dir;
    bool proc_root;
    struct profd_str_list debuginfod_urls;
    int64_t debuginfod_timeout;
    int64_t debuginfod_wait;
    int64_t debuginfod_fetches;
    char *debuginfod_cache;
    char *inflated_cache;
    uint64_t inflated_cache_size;
    int64_t threads;
};

static const struct profd_option options[] = {
    {"debug_directories", PROFD_OPT_STRING_LIST, offsetof(struct config, debug_directories),
     "[/usr/lib/debug, ~/.debug]",
     "where binaries and debug files are looked for: .build-id/xx/rest[.debug], perf's "
     ".build-id/xx/rest/elf, [kernel.kallsyms]/<build-id>/kallsyms and "
     "[vdso]/<build-id>/vdso, by file name, and (for debug files) by .gnu_debuglink"},
    {"path_remaps", PROFD_OPT_STRING_MAP, offsetof(struct config, path_remaps), NULL,
     "recorded path prefix -> local prefix, e.g. {/app: /srv/app} (build-ids still checked)"},
    {"use_local_path", PROFD_OPT_BOOL, offsetof(struct config, use_local_path), "true",
     "use the mapping's own path on this host when its build-id matches (for a [vdso] "
     "mapping: this host's vDSO)"},
    {"demangle", PROFD_OPT_ENUM, offsetof(struct config, demangle), "full",
     "function names: demangled in full, without parameters (templates), or as mangled (none)",
     .choices = demangle_modes},
    {"keep_addresses", PROFD_OPT_BOOL, offsetof(struct config, keep_addresses), "true",
     "keep each symbolized location's address (false: set it to 0)"},
    {"max_memory", PROFD_OPT_SIZE, offsetof(struct config, max_memory), "256MiB",
     "binaries kept open and JIT maps kept at once, by size; least recently used go first"},
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
     "match) under /proc/<pid>/root (live containers' files), then as its mapping maps it "
     "(/proc/<pid>/map_files: a binary deleted or replaced since it was started)"},
    {"debuginfod_urls", PROFD_OPT_STRING_LIST, offsetof(struct config, debuginfod_urls), "[]",
     "debuginfod servers asked, last, for binaries and debug files by build-id (off when "
     "empty; the DEBUGINFOD_URLS environment variable is not used)"},
    {"debuginfod_timeout", PROFD_OPT_DURATION, offsetof(struct config, debuginfod_timeout), "10s",
     "a server that sends nothing for this long is given up (whole seconds)"},
    {"debuginfod_wait", PROFD_OPT_DURATION, offsetof(struct config, debuginfod_wait), "10s",
     "how long a profile waits, in all, for files being fetched from debuginfod before it "
     "goes on without them (the fetches go on, and later profiles use the files once they "
     "are here; a file is waited for by one profile at most)"},
    {"debuginfod_fetches", PROFD_OPT_INT, offsetof(struct config, debuginfod_fetches), "2",
     "files fetched from debuginfod at once, each on a thread of its own (1 to 16): more "
     "shortens the wait for the debug files of many binaries met at once"},
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
    {"vmlinux", PROFD_OPT_STRING, offsetof(struct config, vmlinux), NULL,
     "a kernel image (ELF) naming the frames of the kernel whose build-id it has, with files, "
     "lines and inline frames when it has DWARF; before kallsyms and system_map"},
    {"threads", PROFD_OPT_INT, offsetof(struct config, threads), "0",
     "threads a profile with many locations is symbolized on, at most (0: one per CPU profd "
     "may use; a "
     "thread takes at least 16384 locations, and at most 8 are used)"},
    {0},
};

/* The gauges' names for enum symbolize_result. */
static const char *const result_names[SYMBOLIZE_RESULTS_] = {
    "symbolized", "no_binary", "no_symbols", "outside_segments", "kernel"};

struct state {
    const struct profd_host *host;
    struct profd_component *self;
    struct symbolize_settings settings;
    uint64_t results[SYMBOLIZE_RESULTS_];
    int64_t busy_ns;              /* time spent symbolizing profiles */
    uint64_t inflate_failures;    /* logged so far */
};

static int create(const struct profd_host *host, struct profd_component *self, const void *cfgp,
                  void **out)
{
    const struct config *cfg = cfgp;
    if (cfg->threads < 0) {
        host->log(self, PROFD_LOG_ERROR, "threads: %lld is negative", (long long)cfg->threads);
        return PROFD_ERR;
    }
    if (cfg->debuginfod_fetches < 1 || cfg->debuginfod_fetches > REMOTE_DEBUGINFO_MAX_FETCHES) {
        host->log(self, PROFD_LOG_ERROR, "debuginfod_fetches: %lld is not between 1 and %d",
                  (long long)cfg->debuginfod_fetches, REMOTE_DEBUGINFO_MAX_FETCHES);
        return PROFD_ERR;
    }
    struct symbol_cache_settings settings = {
        (const char *const *)cfg->debug_directories.items, cfg->debug_directories.n,
        (const char *const *)cfg->path_remaps.keys, (const char *const *)cfg->path_remaps.values,
        cfg->path_remaps.n, cfg->use_local_path, cfg->proc_root, cfg->max_memory,
        cfg->negative_ttl, cfg->kallsyms, cfg->kernel_notes, cfg->system_map, cfg->perf_map_dir,
        cfg->vmlinux, (const char *const *)cfg->debuginfod_urls.items, cfg->debuginfod_urls.n,
        cfg->debuginfod_timeout / 1000000000, cfg->debuginfod_wait,
        (size_t)cfg->debuginfod_fetches, cfg->debuginfod_cache,
        cfg->inflated_cache,
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
    size_t threads = cfg->threads > 0 ? (size_t)cfg->threads : cpus_usable();
    *s = (struct state){.host = host, .self = self,
                        .settings = {host, cache, (enum demangle_mode)cfg->demangle,
                                     cfg->keep_addresses, threads}};
    *out = s;
    return PROFD_OK;
}

static void publish_results(struct state *s)
{
    char labels[64];
    for (int r = 0; r < SYMBOLIZE_RESULTS_; r++) {
        snprintf(labels, sizeof(labels), "result=\"%s\"", result_names[r]);
        s->host->gauge_set(s->self, "profd_symbolize_locations",
                           "locations seen by the symbolizer, by outcome", labels,
                           (double)s->results[r]);
    }
    s->host->gauge_set(s->self, "profd_symbolize_seconds",
                       "time spent symbolizing profiles since start", "",
                       (double)s->busy_ns / 1e9);
    s->host->gauge_set(s->self, "profd_symbolize_open_bytes",
                       "memory the open binaries (files, indexes, results) and JIT maps hold, "
                       "kept within max_memory",
                       "", (double)symbol_cache_open_bytes(s->settings.cache));
    char why[256];
    struct inflated_cache_stats in = symbol_cache_inflated(s->settings.cache, why, sizeof(why));
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
        uint64_t symbolized = s->results[SYMBOLIZED];
        symbol_cache_begin(s->settings.cache, s->host, s->self);
        struct symbolize_run run = symbolize_locations(&s->settings, p, pid ? atoi(pid) : 0,
                                                       s->results);
        symbol_cache_end(s->settings.cache);
        if (s->results[SYMBOLIZED] != symbolized)
            s->host->record_touch(r);
        int64_t took = monotonic_ns() - start;
        s->busy_ns += took;
        s->host->log(s->self, PROFD_LOG_DEBUG, "%u locations looked at in %.3f s on %zu thread%s%s",
                     p->nlocations, (double)took / 1e9, run.threads, run.threads > 1 ? "s" : "",
                     run.huge_pages ? " in the huge-page arena" : "");
    }
    publish_results(s);
    return s->host->emit(s->self, b);
}

static void destroy(void *st)
{
    struct state *s = st;
    if (!s)
        return;
    symbol_cache_release(s->settings.cache);
    free(s);
}

static const struct profd_plugin plugin = {
    PROFD_PLUGIN_HEADER,
    .kind = PROFD_PROCESSOR,
    .type = "symbolize",
    .description = "addresses to functions, files, lines and inline frames (ELF, DWARF)",
    .options = options,
    .config_size = sizeof(struct config),
    .flags = PROFD_PLUGIN_MUTATES | PROFD_PLUGIN_SLOW,
    .create = create,
    .consume = consume,
    .destroy = destroy,
};

PROFD_PLUGIN_DEFINE(plugin)
