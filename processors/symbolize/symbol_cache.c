// SPDX-License-Identifier: Apache-2.0
#include "symbol_cache.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/binary_lookup.h"
#include "../../lib/clock.h"
#include "../../lib/file_io.h"
#include "../../lib/grow.h"
#include "debuginfod.h"
#include "inflated_cache.h"

/* Each lane of a binary keeps the frames found at addresses in up to this
 * share of max_memory (a 256 MiB budget: 4 MiB, 16,384 addresses). */
#define RESULTS_SHARE 64

/* A JIT's perf-<pid>.map, read again when the file changes; kept within
 * max_memory with the binaries. */
struct jit_map {
    int32_t pid;
    struct perf_map *map;         /* NULL: none (the entry goes at the profile's end) */
    size_t charged;               /* its footprint counted in open_bytes */
    uint64_t last_used;
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
    bool fetching;                /* on its way from debuginfod (said once) */
    bool debug_problem_said;      /* elf_binary_debug_problem logged (once) */
    uint64_t last_used;
    uint64_t serial;              /* of the last profile that used it */
};

struct symbol_cache {
    char *id;
    int holders;
    struct symbol_cache *next;    /* in the registry */
    pthread_mutex_t lock;
    /* Settings (copies). */
    struct binary_lookup lookup;
    char *debug_path;             /* elfutils' debuginfo path */
    bool proc_root;
    uint64_t max_memory;
    int64_t negative_ttl;
    int64_t debuginfod_wait;      /* a profile's wait for files being fetched, in all */
    int64_t fetch_deadline;       /* the profile's end of it */
    char *kallsyms, *kernel_notes, *system_map, *perf_map_dir, *vmlinux;   /* NULL: off */
    struct remote_debuginfo *remote;   /* debuginfod, NULL when off */
    struct inflated_cache *inflated;   /* NULL when off */
    struct elf_sources sources;        /* over the above */
    /* The profile being symbolized. */
    const struct profd_host *host;
    struct profd_component *self;
    uint64_t serial;
    /* What is kept. */
    struct binary *binaries;
    size_t nbinaries, binaries_cap;
    size_t open_bytes;
    uint64_t clock;               /* use counter for LRU */
    struct kernel_table *kernels; /* each loaded on its first frame */
    size_t nkernels, kernels_cap;
    char running_kernel[41];      /* the running kernel's build-id, "" unknown */
    struct jit_map *jit_maps;
    size_t njit_maps, jit_maps_cap;
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct symbol_cache *registry;

static char *copy_setting(const char *s)
{
    char *c = s && *s ? strdup(s) : NULL;
    if (s && *s && !c)
        abort();
    return c;
}

/* elfutils' debuginfo path: "-" (no CRC check of debuglink files), the
 * binary's directory and its .debug directory (as in elfutils' and gdb's
 * default), then the debug directories, joined by ':'. */
static char *debuginfo_path(const struct binary_lookup *l)
{
    static const char own[] = "-:.debug";
    size_t len = sizeof(own);
    for (size_t i = 0; i < l->ndirs; i++)
        len += strlen(l->dirs[i]) + 1;
    char *path = calloc(1, len);
    if (!path)
        abort();
    strcpy(path, own);
    for (size_t i = 0; i < l->ndirs; i++) {
        strcat(path, ":");
        strcat(path, l->dirs[i]);
    }
    return path;
}

static void cache_free(struct symbol_cache *c)
{
    for (size_t i = 0; i < c->nbinaries; i++) {
        elf_binary_close(c->binaries[i].elf);
        free(c->binaries[i].filename);
        free(c->binaries[i].build_id);
    }
    free(c->binaries);
    for (size_t i = 0; i < c->njit_maps; i++)
        perf_map_free(c->jit_maps[i].map);
    free(c->jit_maps);
    for (size_t i = 0; i < c->nkernels; i++)
        kernel_symbols_free(c->kernels[i].syms);
    free(c->kernels);
    binary_lookup_free(&c->lookup);
    free(c->debug_path);
    free(c->kallsyms);
    free(c->kernel_notes);
    free(c->system_map);
    free(c->vmlinux);
    free(c->perf_map_dir);
    remote_debuginfo_free(c->remote);
    inflated_cache_free(c->inflated);
    pthread_mutex_destroy(&c->lock);
    free(c->id);
    free(c);
}

/* elf_debug_fetch_fn over the cache arg: its debuginfod client, waited
 * for within the profile's time. */
static int fetch_debug_file(void *arg, const unsigned char *build_id, size_t len, char **path)
{
    const struct symbol_cache *c = arg;
    return remote_debuginfo_debug_file(c->remote, build_id, len, c->fetch_deadline, path);
}

/* A new cache from settings s, or NULL with err filled. */
static struct symbol_cache *cache_new(const char *id, const struct symbol_cache_settings *s,
                                      char *err, size_t errlen)
{
    struct symbol_cache *c = calloc(1, sizeof(*c));
    if (!c)
        abort();
    pthread_mutex_init(&c->lock, NULL);
    c->id = copy_setting(id);
    binary_lookup_init(&c->lookup, s->debug_directories, s->ndebug_directories, s->remap_from,
                       s->remap_to, s->nremaps, s->use_local_path);
    c->debug_path = debuginfo_path(&c->lookup);
    c->proc_root = s->proc_root;
    c->max_memory = s->max_memory;
    c->negative_ttl = s->negative_ttl;
    c->debuginfod_wait = s->debuginfod_wait;
    c->kallsyms = copy_setting(s->kallsyms);
    c->kernel_notes = copy_setting(s->kernel_notes);
    c->system_map = copy_setting(s->system_map);
    c->vmlinux = copy_setting(s->vmlinux);
    c->perf_map_dir = copy_setting(s->perf_map_dir);
    if (s->ndebuginfod_urls &&
        !(c->remote = remote_debuginfo_new(s->debuginfod_urls, s->ndebuginfod_urls,
                                           s->debuginfod_fetches, s->debuginfod_timeout_s,
                                           s->debuginfod_cache,
                                           s->negative_ttl, err, errlen))) {
        cache_free(c);
        return NULL;
    }
    char *inflated_dir = s->inflated_cache ? expand_home(s->inflated_cache) : NULL;
    if (inflated_dir && *inflated_dir)
        c->inflated = inflated_cache_new(inflated_dir, s->inflated_cache_size);
    free(inflated_dir);
    c->sources = (struct elf_sources){&c->lookup,
                                      c->debug_path,
                                      c->remote ? fetch_debug_file : NULL,
                                      c,
                                      c->inflated,
                                      c->max_memory / RESULTS_SHARE};
    return c;
}

struct symbol_cache *symbol_cache_acquire(const char *id, const struct symbol_cache_settings *s,
                                          char *err, size_t errlen)
{
    pthread_mutex_lock(&registry_lock);
    struct symbol_cache *c = registry;
    while (c && strcmp(c->id, id))
        c = c->next;
    if (!c && (c = cache_new(id, s, err, errlen))) {
        c->next = registry;
        registry = c;
    }
    if (c)
        c->holders++;
    pthread_mutex_unlock(&registry_lock);
    return c;
}

void symbol_cache_release(struct symbol_cache *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&registry_lock);
    bool last = --c->holders == 0;
    if (last) {
        struct symbol_cache **at = &registry;
        while (*at != c)
            at = &(*at)->next;
        *at = c->next;
    }
    pthread_mutex_unlock(&registry_lock);
    if (last)
        cache_free(c);
}

void symbol_cache_begin(struct symbol_cache *c, const struct profd_host *h,
                        struct profd_component *self)
{
    pthread_mutex_lock(&c->lock);
    c->host = h;
    c->self = self;
    c->serial++;
    c->fetch_deadline = monotonic_ns() + c->debuginfod_wait;
}

/* ---- binaries ---- */

static void close_binary(struct symbol_cache *c, struct binary *b)
{
    if (!b->elf)
        return;
    c->open_bytes -= b->charged;
    elf_binary_close(b->elf);
    b->elf = NULL;
    b->retry_at = 0;   /* evicted, not missing: may open again at once */
}

static void drop_jit_map(struct symbol_cache *c, struct jit_map *j)
{
    c->open_bytes -= j->charged;
    perf_map_free(j->map);
    j->map = NULL;
    j->charged = 0;
}

/* Closes the least recently used binaries and drops the least recently
 * used JIT maps until `need` more bytes fit; what the profile being
 * symbolized uses stays, even past max_memory. */
static void make_room(struct symbol_cache *c, size_t need)
{
    while (c->open_bytes + need > c->max_memory) {
        struct binary *lru = NULL;
        for (size_t i = 0; i < c->nbinaries; i++)
            if (c->binaries[i].elf && c->binaries[i].serial != c->serial &&
                (!lru || c->binaries[i].last_used < lru->last_used))
                lru = &c->binaries[i];
        struct jit_map *lru_map = NULL;
        for (size_t i = 0; i < c->njit_maps; i++)
            if (c->jit_maps[i].map && c->jit_maps[i].serial != c->serial &&
                (!lru_map || c->jit_maps[i].last_used < lru_map->last_used))
                lru_map = &c->jit_maps[i];
        if (lru_map && (!lru || lru_map->last_used < lru->last_used))
            drop_jit_map(c, lru_map);
        else if (lru)
            close_binary(c, lru);
        else
            return;
    }
}

/* Forgets the binaries that are neither open, nor on their way from
 * debuginfod, nor a miss still remembered, and the processes whose JIT map
 * is not kept (none, or dropped): the binaries and processes a long run
 * sees come and go leave nothing behind, and lookups stay short. */
static void forget_what_is_not_kept(struct symbol_cache *c)
{
    int64_t now = monotonic_ns();
    size_t kept = 0;
    for (size_t i = 0; i < c->nbinaries; i++) {
        struct binary *b = &c->binaries[i];
        if (b->elf || b->fetching || (b->retry_at && now < b->retry_at)) {
            c->binaries[kept++] = *b;
        } else {
            free(b->filename);
            free(b->build_id);
        }
    }
    c->nbinaries = kept;
    kept = 0;
    for (size_t i = 0; i < c->njit_maps; i++)
        if (c->jit_maps[i].map)
            c->jit_maps[kept++] = c->jit_maps[i];
    c->njit_maps = kept;
}

/* Logs what of b's binary, and then what follows from it (or ""), named
 * by its file name and build-id. */
static void log_binary(struct symbol_cache *c, const struct binary *b, enum profd_log_level level,
                       const char *what, const char *then)
{
    c->host->log(c->self, level, "%s%s%s: %s%s", b->filename, *b->build_id ? " build-id " : "",
                 b->build_id, what, then);
}

void symbol_cache_end(struct symbol_cache *c)
{
    for (size_t i = 0; i < c->nbinaries; i++) {
        struct binary *b = &c->binaries[i];
        if (!b->elf || b->serial != c->serial)
            continue;
        elf_binary_profile_done(b->elf);
        const char *problem = elf_binary_debug_problem(b->elf);
        if (problem && !b->debug_problem_said)
            log_binary(c, b, PROFD_LOG_WARN, problem,
                       "; functions there are named from the symbol table");
        b->debug_problem_said |= problem != NULL;
        size_t now = elf_binary_footprint(b->elf);   /* its lanes, indexes and results grew */
        c->open_bytes += now - b->charged;
        b->charged = now;
    }
    c->serial++;      /* nothing is in use any more: back within max_memory */
    make_room(c, 0);
    forget_what_is_not_kept(c);
    pthread_mutex_unlock(&c->lock);
}

static struct binary *binary_entry(struct symbol_cache *c, const char *filename,
                                   const char *build_id)
{
    for (size_t i = 0; i < c->nbinaries; i++)
        if (!strcmp(c->binaries[i].filename, filename) && !strcmp(c->binaries[i].build_id, build_id))
            return &c->binaries[i];
    c->binaries = grow_array(c->binaries, &c->binaries_cap, c->nbinaries + 1, sizeof(*c->binaries));
    struct binary *b = &c->binaries[c->nbinaries++];
    *b = (struct binary){strdup(filename), strdup(build_id)};
    if (!b->filename || !b->build_id)
        abort();
    return b;
}

/* The binary filename with build_id (never another build) as the process
 * that mapped it (m) sees it: from its root (a live container's file),
 * else the file its mapping maps, still there when the binary was
 * deleted or replaced on disk since (/proc/<pid>/map_files). malloc'd, or
 * NULL. */
static char *in_process(const struct symbol_cache *c, const char *filename,
                        const char *build_id, const struct process_mapping *m)
{
    if (!c->proc_root || m->pid <= 0 || !*build_id || filename[0] != '/')
        return NULL;   /* [vdso] is no file */
    char *paths[2] = {must_asprintf("/proc/%d/root%s", m->pid, filename), NULL};
    if (m->limit > m->start)
        paths[1] = must_asprintf("/proc/%d/map_files/%" PRIx64 "-%" PRIx64, m->pid, m->start,
                                 m->limit);
    char *found = NULL;
    for (size_t i = 0; i < 2; i++) {
        if (!found && paths[i] && binary_lookup_is_elf(paths[i], build_id))
            found = paths[i];
        else
            free(paths[i]);
    }
    return found;
}

/* The entry of filename with build_id, marked used by this profile: true
 * when it needs opening (not open, and not a recent miss). A binary opened
 * while its debug file was on its way is opened again, at the first
 * profile that uses it after the fetch ended. */
static bool binary_wanted(struct symbol_cache *c, const char *filename, const char *build_id,
                          struct binary **entry)
{
    struct binary *b = *entry = binary_entry(c, filename, build_id);
    const char *waiting_for = b->elf ? elf_binary_debug_pending(b->elf) : NULL;
    if (waiting_for && b->serial != c->serial &&
        remote_debuginfo_debug_file_settled(c->remote, waiting_for))
        close_binary(c, b);
    b->last_used = ++c->clock;
    b->serial = c->serial;
    return !b->elf && !(b->retry_at && monotonic_ns() < b->retry_at);
}

/* Opens b's binary from path (malloc'd, taken; NULL: not found) and
 * charges it, or logs why not (err) and remembers the miss. */
static struct elf_binary *open_binary(struct symbol_cache *c, struct binary *b, char *path,
                                      char err[512])
{
    struct elf_binary *elf = path ? elf_binary_open(path, &c->sources, err, 512) : NULL;
    if (!elf) {
        log_binary(c, b, PROFD_LOG_INFO, err, "");
        b->retry_at = monotonic_ns() + c->negative_ttl;
    } else {
        b->charged = elf_binary_footprint(elf);
        make_room(c, b->charged);
        c->open_bytes += b->charged;
        b->elf = elf;
    }
    free(path);
    return b->elf;
}

struct elf_binary *symbol_cache_binary(struct symbol_cache *c, const char *filename,
                                       const char *build_id, const struct process_mapping *m)
{
    struct binary *b;
    if (!binary_wanted(c, filename, build_id, &b))
        return b->elf;
    char err[512] = "not found";
    char *path = binary_lookup_find(&c->lookup, filename, build_id);
    if (!path)
        path = in_process(c, filename, build_id, m);
    bool fetching = false;
    if (!path && c->remote && *build_id)
        path = remote_debuginfo_executable(c->remote, build_id, c->fetch_deadline, err,
                                           sizeof(err), &fetching);
    if (fetching) {   /* not a miss: looked for again by the next profile */
        if (!b->fetching)
            c->host->log(c->self, PROFD_LOG_INFO, "%s build-id %s: being fetched from "
                         "debuginfod; its frames stay addresses until it is here", filename,
                         build_id);
        b->fetching = true;
        return NULL;
    }
    b->fetching = false;
    return open_binary(c, b, path, err);
}

struct elf_binary *symbol_cache_vmlinux(struct symbol_cache *c, const char *build_id)
{
    struct binary *b;
    if (!c->vmlinux || !binary_wanted(c, c->vmlinux, build_id, &b))
        return c->vmlinux ? b->elf : NULL;
    char err[512] = "not the recorded kernel's build";
    char *path = binary_lookup_is_elf(c->vmlinux, build_id) ? copy_setting(c->vmlinux) : NULL;
    return open_binary(c, b, path, err);
}

/* ---- kernels ---- */

/* Loads the symbol table of the kernel with that build-id ("" for the
 * system_map, which serves any): perf's build-id cache copy in a debug
 * directory, else kallsyms when it is the running kernel. NULL: none. */
static struct kernel_symbols *load_kernel(struct symbol_cache *c, const char *build_id)
{
    char err[512], path[4096];
    if (c->system_map)
        return kernel_symbols_load(c->system_map, err, sizeof(err));
    for (size_t i = 0; *build_id && i < c->lookup.ndirs; i++) {
        snprintf(path, sizeof(path), "%s/[kernel.kallsyms]/%s/kallsyms", c->lookup.dirs[i],
                 build_id);
        struct kernel_symbols *k = access(path, R_OK) ? NULL :
                                   kernel_symbols_load(path, err, sizeof(err));
        if (k)
            return k;
    }
    if (!c->kallsyms)
        return NULL;
    if (!c->running_kernel[0] && c->kernel_notes)
        kernel_build_id(c->kernel_notes, c->running_kernel);
    if (!*build_id || strcmp(build_id, c->running_kernel))
        return NULL;
    struct kernel_symbols *k = kernel_symbols_load(c->kallsyms, err, sizeof(err));
    if (!k)
        c->host->log(c->self, PROFD_LOG_INFO, "kernel frames stay addresses: %s", err);
    return k;
}

struct kernel_symbols *symbol_cache_kernel(struct symbol_cache *c, const char *build_id)
{
    if (c->system_map)
        build_id = "";   /* one table for all */
    if (strlen(build_id) >= sizeof(c->kernels->build_id))
        return NULL;     /* no GNU build-id is that long */
    for (size_t i = 0; i < c->nkernels; i++)
        if (!strcmp(c->kernels[i].build_id, build_id))
            return c->kernels[i].syms;
    c->kernels = grow_array(c->kernels, &c->kernels_cap, c->nkernels + 1, sizeof(*c->kernels));
    struct kernel_table *t = &c->kernels[c->nkernels++];
    memcpy(t->build_id, build_id, strlen(build_id) + 1);
    t->syms = load_kernel(c, build_id);
    return t->syms;
}

/* ---- JIT maps ---- */

const struct perf_map *symbol_cache_jit(struct symbol_cache *c, int32_t pid)
{
    if (!c->perf_map_dir || pid <= 0)
        return NULL;
    struct jit_map *j = NULL;
    for (size_t i = 0; i < c->njit_maps && !j; i++)
        if (c->jit_maps[i].pid == pid)
            j = &c->jit_maps[i];
    if (!j) {
        c->jit_maps = grow_array(c->jit_maps, &c->jit_maps_cap, c->njit_maps + 1,
                                 sizeof(*c->jit_maps));
        j = &c->jit_maps[c->njit_maps++];
        *j = (struct jit_map){.pid = pid};
    } else if (j->serial == c->serial) {
        return j->map;   /* checked for this profile already, maybe in use */
    }
    j->serial = c->serial;
    j->last_used = ++c->clock;
    char path[4096];
    snprintf(path, sizeof(path), "%s/perf-%d.map", c->perf_map_dir, pid);
    struct stat st;
    if (stat(path, &st) != 0) {
        drop_jit_map(c, j);
        return NULL;
    }
    if (j->map) {
        off_t size;
        struct timespec mtime;
        perf_map_stamp(j->map, &size, &mtime);
        if (size == st.st_size && mtime.tv_sec == st.st_mtim.tv_sec &&
            mtime.tv_nsec == st.st_mtim.tv_nsec)
            return j->map;
        drop_jit_map(c, j);
    }
    struct perf_map *map = perf_map_load(path);
    if (map) {
        size_t charge = perf_map_footprint(map);
        make_room(c, charge);
        c->open_bytes += charge;
        *j = (struct jit_map){pid, map, charge, j->last_used, j->serial};
    }
    return j->map;
}

uint64_t symbol_cache_open_bytes(struct symbol_cache *c)
{
    pthread_mutex_lock(&c->lock);
    uint64_t bytes = c->open_bytes;
    pthread_mutex_unlock(&c->lock);
    return bytes;
}

struct inflated_cache_stats symbol_cache_inflated(struct symbol_cache *c, char *last_error,
                                                  size_t len)
{
    struct inflated_cache_stats st = {0};
    pthread_mutex_lock(&c->lock);
    if (c->inflated)
        st = inflated_cache_stats(c->inflated);
    snprintf(last_error, len, "%s", c->inflated ? inflated_cache_last_error(c->inflated) : "");
    pthread_mutex_unlock(&c->lock);
    return st;
}
