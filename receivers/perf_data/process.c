// SPDX-License-Identifier: Apache-2.0
#include "process.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/binary_lookup.h"
#include "util.h"

static uint64_t hash_str(const char *s)
{
    uint64_t h = 0;
    for (; *s; s++)
        h = hash_mix(h, (unsigned char)*s);
    return h;
}

struct str_key {
    const struct processes *ps;
    const char *s;
};

static bool same_str(void *arg, uint32_t pos)
{
    struct str_key *k = arg;
    return !strcmp(k->ps->strings[pos], k->s);
}

/* The position of the interned string s, or -1. */
static int64_t string_at(const struct processes *ps, const char *s)
{
    struct str_key k = {ps, s};
    return index_find(&ps->string_index, hash_str(s), same_str, &k);
}

static const char *intern(struct processes *ps, const char *s)
{
    int64_t at = string_at(ps, s);
    if (at >= 0)
        return ps->strings[at];
    ps->strings = grow_array(ps->strings, &ps->strings_cap, ps->nstrings + 1, sizeof(*ps->strings));
    if (!(ps->strings[ps->nstrings] = strdup(s)))
        abort();
    index_add(&ps->string_index, hash_str(s), (uint32_t)ps->nstrings);
    return ps->strings[ps->nstrings++];
}

struct id_key {
    const void *base;
    size_t stride;
    int32_t id;
};

static bool same_id(void *arg, uint32_t pos)
{
    struct id_key *k = arg;
    int32_t v;
    memcpy(&v, (const char *)k->base + pos * k->stride, sizeof(v));
    return v == k->id;
}

/* The position of process pid in ps->procs, or -1. */
static int64_t process_at(const struct processes *ps, int32_t pid)
{
    struct id_key k = {ps->procs, sizeof(*ps->procs), pid};
    return index_find(&ps->proc_index, (uint64_t)pid, same_id, &k);
}

/* The position of thread tid in ps->threads, or -1. */
static int64_t thread_at(const struct processes *ps, int32_t tid)
{
    struct id_key k = {ps->threads, sizeof(*ps->threads), tid};
    return index_find(&ps->thread_index, (uint64_t)tid, same_id, &k);
}

const struct process *processes_find(const struct processes *ps, int32_t pid)
{
    if (pid == -1)
        return &ps->kernel;
    int64_t at = process_at(ps, pid);
    return at >= 0 ? &ps->procs[at] : NULL;
}

struct process *processes_get(struct processes *ps, int32_t pid)
{
    if (pid == -1)
        return &ps->kernel;
    int64_t at = process_at(ps, pid);
    if (at >= 0)
        return &ps->procs[at];
    ps->procs = grow_array(ps->procs, &ps->procs_cap, ps->nprocs + 1, sizeof(*ps->procs));
    struct process *p = &ps->procs[ps->nprocs];
    memset(p, 0, sizeof(*p));
    p->pid = pid;
    snprintf(p->comm, sizeof(p->comm), "[%d]", pid);
    index_add(&ps->proc_index, (uint64_t)pid, (uint32_t)ps->nprocs++);
    return p;
}

static struct thread *thread_get(struct processes *ps, int32_t pid, int32_t tid)
{
    int64_t at = thread_at(ps, tid);
    if (at >= 0) {
        ps->threads[at].pid = pid;
        ps->threads[at].ended = false;
        return &ps->threads[at];
    }
    const char *comm = intern(ps, processes_get(ps, pid)->comm);
    ps->threads = grow_array(ps->threads, &ps->threads_cap, ps->nthreads + 1, sizeof(*ps->threads));
    ps->threads[ps->nthreads] = (struct thread){tid, pid, comm};
    index_add(&ps->thread_index, (uint64_t)tid, (uint32_t)ps->nthreads);
    return &ps->threads[ps->nthreads++];
}

const struct thread *processes_thread(struct processes *ps, int32_t pid, int32_t tid)
{
    return thread_get(ps, pid, tid);
}

const struct map *processes_find_map(const struct processes *ps, const struct process *p,
                                     uint64_t addr)
{
    if (!p)
        p = &ps->kernel;
    size_t lo = 0, hi = p->nmaps;
    while (lo < hi) {   /* the last map starting at or below addr */
        size_t mid = (lo + hi) / 2;
        if (p->maps[mid]->start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo && addr < p->maps[lo - 1]->limit)
        return p->maps[lo - 1];
    return NULL;
}

static struct map *new_map(struct processes *ps, const struct map *m)
{
    struct map *n = malloc(sizeof(*n));
    if (!n)
        abort();
    *n = *m;
    ps->all_maps = grow_array(ps->all_maps, &ps->all_cap, ps->nall + 1, sizeof(*ps->all_maps));
    ps->all_maps[ps->nall++] = n;
    return n;
}

/* Inserts m into p, trimming or dropping the parts of older maps it covers. */
static void insert_map(struct processes *ps, struct process *p, struct map *m)
{
    struct map **kept = NULL;
    size_t nkept = 0, cap = 0;
    for (size_t i = 0; i < p->nmaps; i++) {
        struct map *o = p->maps[i];
        if (o->limit <= m->start || o->start >= m->limit) {
            kept = grow_array(kept, &cap, nkept + 1, sizeof(*kept));
            kept[nkept++] = o;
            continue;
        }
        if (o->start < m->start) {   /* the part below m */
            struct map below = *o;
            below.limit = m->start;
            kept = grow_array(kept, &cap, nkept + 1, sizeof(*kept));
            kept[nkept++] = new_map(ps, &below);
        }
        if (o->limit > m->limit) {   /* the part above m */
            struct map above = *o;
            above.pgoff += m->limit - o->start;
            above.start = m->limit;
            kept = grow_array(kept, &cap, nkept + 1, sizeof(*kept));
            kept[nkept++] = new_map(ps, &above);
        }
    }
    size_t at = 0;
    while (at < nkept && kept[at]->start < m->start)
        at++;
    kept = grow_array(kept, &cap, nkept + 1, sizeof(*kept));
    memmove(&kept[at + 1], &kept[at], (nkept - at) * sizeof(*kept));
    kept[at] = m;
    free(p->maps);
    p->maps = kept;
    p->nmaps = nkept + 1;
    p->cap = cap;
    p->maps_version = ++ps->versions;
}

/* True for anonymous memory as mmap records name it. */
static bool is_anonymous_memory(const char *name)
{
    return !strcmp(name, "//anon") || !strncmp(name, "/dev/zero", 9) ||
           !strncmp(name, "/anon_hugepage", 14);
}

bool processes_names_a_file(const char *filename)
{
    int32_t pid;
    return filename[0] == '/' && filename[1] != '/' && strncmp(filename, "/memfd:", 7) != 0 &&
           !binary_lookup_is_jit_map(filename, &pid);
}

bool processes_names_a_program(const char *filename)
{
    size_t len = binary_lookup_path_length(filename);
    if (!processes_names_a_file(filename) ||
        (len >= 3 && !strncmp(filename + len - 3, ".ko", 3)))
        return false;
    for (const char *so = strstr(filename, ".so"); so && so + 3 <= filename + len;
         so = strstr(so + 1, ".so")) {
        size_t after = (size_t)(so + 3 - filename);
        if (after == len || ((so[3] == '.' || so[3] == '_') && after + 1 < len &&
                             isdigit((unsigned char)so[4])))
            return false;
    }
    return true;
}

void processes_add_map(struct processes *ps, int32_t pid, const struct map *m, const char *name,
                       const struct perf_file *f)
{
    struct map copy = *m;
    char jit[64];
    if (pid != -1 && is_anonymous_memory(name)) {   /* code there is a JIT's, as perf names it */
        binary_lookup_jit_map_name(pid, jit, sizeof(jit));
        name = jit;
    }
    copy.filename = intern(ps, name);
    if (!copy.build_id[0]) {
        /* The kernel's id is recorded under "[kernel.kallsyms]", its mmap as "..._text". */
        bool kernel = pid == -1 && !strncmp(name, "[kernel.kallsyms]", 17);
        for (size_t i = 0; i < f->meta.nbuild_ids; i++) {
            const struct perf_build_id *b = &f->meta.build_ids[i];
            if (kernel ? !strcmp(b->filename, "[kernel.kallsyms]") : !strcmp(b->filename, name)) {
                memcpy(copy.build_id, b->hex, sizeof(copy.build_id));
                break;
            }
        }
    }
    if (copy.limit <= copy.start)
        return;
    struct process *p = processes_get(ps, pid);
    p->ended = false;
    struct map *map = new_map(ps, &copy);
    insert_map(ps, p, map);
    if (processes_names_a_program(map->filename))
        p->program = map;
}

void processes_comm(struct processes *ps, int32_t pid, int32_t tid, const char *comm, bool exec)
{
    /* Mappings stay through an exec, as perf keeps them: samples taken in
     * execve still hold the old image's return addresses, and the new
     * image's mmaps replace what they overlap. */
    struct process *p = processes_get(ps, pid);
    p->ended = false;
    if (pid == tid || exec)
        snprintf(p->comm, sizeof(p->comm), "%s", comm);
    thread_get(ps, pid, tid)->comm = intern(ps, comm);
}

void processes_fork(struct processes *ps, int32_t pid, int32_t ppid, int32_t tid, int32_t ptid)
{
    const char *parent_comm = thread_get(ps, ppid, ptid)->comm;
    if (pid != ppid) {   /* a new process: it starts as a copy of its parent */
        struct process *parent = processes_get(ps, ppid);
        size_t n = parent->nmaps;
        struct map **maps = n ? malloc(n * sizeof(*maps)) : NULL;
        if (n && !maps)
            abort();
        if (n)
            memcpy(maps, parent->maps, n * sizeof(*maps));
        char comm[PERF_COMM_LEN];
        memcpy(comm, parent->comm, sizeof(comm));
        const struct map *program = parent->program;
        struct process *p = processes_get(ps, pid);   /* may move parent */
        free(p->maps);
        p->maps = maps;
        p->nmaps = p->cap = n;
        p->maps_version = ++ps->versions;
        p->program = program;
        p->ended = false;
        memcpy(p->comm, comm, sizeof(comm));
    }
    thread_get(ps, pid, tid)->comm = parent_comm;
}

void processes_exit(struct processes *ps, int32_t pid, int32_t tid)
{
    int64_t at = thread_at(ps, tid);
    if (at >= 0)
        ps->threads[at].ended = true;
    if (pid == tid && (at = process_at(ps, pid)) >= 0)
        ps->procs[at].ended = true;
}

/* Keeps the processes that have not ended (or have a thread left), indexed
 * anew; frees the others' map lists. */
static void keep_live_processes(struct processes *ps)
{
    for (size_t i = 0; i < ps->nthreads; i++) {
        int64_t at = ps->threads[i].ended ? -1 : process_at(ps, ps->threads[i].pid);
        if (at >= 0)
            ps->procs[at].ended = false;
    }
    index_clear(&ps->proc_index);
    size_t kept = 0;
    for (size_t i = 0; i < ps->nprocs; i++) {
        if (ps->procs[i].ended) {
            free(ps->procs[i].maps);
            continue;
        }
        ps->procs[kept] = ps->procs[i];
        index_add(&ps->proc_index, (uint64_t)ps->procs[kept].pid, (uint32_t)kept);
        kept++;
    }
    ps->nprocs = kept;
}

/* Keeps the threads that have not ended, of the processes kept, indexed anew. */
static void keep_live_threads(struct processes *ps)
{
    size_t kept = 0;
    for (size_t i = 0; i < ps->nthreads; i++)
        if (!ps->threads[i].ended && process_at(ps, ps->threads[i].pid) >= 0)
            ps->threads[kept++] = ps->threads[i];
    ps->nthreads = kept;
    index_clear(&ps->thread_index);
    for (size_t i = 0; i < kept; i++)
        index_add(&ps->thread_index, (uint64_t)ps->threads[i].tid, (uint32_t)i);
}

static int by_address(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(struct map *const *)a, y = (uintptr_t)*(struct map *const *)b;
    return x < y ? -1 : x > y;
}

/* Appends the maps p holds (its list and its program) to live. */
static void hold_maps(const struct process *p, struct map ***live, size_t *n, size_t *cap)
{
    *live = grow_array(*live, cap, *n + p->nmaps + 1, sizeof(**live));
    if (p->nmaps)
        memcpy(*live + *n, p->maps, p->nmaps * sizeof(**live));
    *n += p->nmaps;
    if (p->program)
        (*live)[(*n)++] = (struct map *)p->program;
}

/* Frees the maps that no process (nor the kernel) holds. */
static void free_unheld_maps(struct processes *ps)
{
    struct map **live = NULL;
    size_t nlive = 0, cap = 0;
    hold_maps(&ps->kernel, &live, &nlive, &cap);
    for (size_t i = 0; i < ps->nprocs; i++)
        hold_maps(&ps->procs[i], &live, &nlive, &cap);
    if (nlive)
        qsort(live, nlive, sizeof(*live), by_address);
    size_t kept = 0;
    for (size_t i = 0; i < ps->nall; i++) {
        struct map *m = ps->all_maps[i];
        if (nlive && bsearch(&m, live, nlive, sizeof(*live), by_address))
            ps->all_maps[kept++] = m;
        else
            free(m);
    }
    ps->nall = kept;
    free(live);
}

/* Marks the interned string s as held. */
static void hold_string(const struct processes *ps, const char *s, bool *held)
{
    int64_t at = s ? string_at(ps, s) : -1;
    if (at >= 0)
        held[at] = true;
}

/* Frees the interned strings that no map or thread left holds, and
 * indexes the others anew (a stream's processes each name their own JIT
 * map, /tmp/perf-<pid>.map: kept, they would grow with every process). */
static void free_unheld_strings(struct processes *ps)
{
    bool *held = calloc(ps->nstrings + 1, sizeof(*held));
    if (!held)
        abort();
    for (size_t i = 0; i < ps->nall; i++)
        hold_string(ps, ps->all_maps[i]->filename, held);
    for (size_t i = 0; i < ps->nthreads; i++)
        hold_string(ps, ps->threads[i].comm, held);
    index_clear(&ps->string_index);
    size_t kept = 0;
    for (size_t i = 0; i < ps->nstrings; i++) {
        if (!held[i]) {
            free(ps->strings[i]);
            continue;
        }
        ps->strings[kept] = ps->strings[i];
        index_add(&ps->string_index, hash_str(ps->strings[kept]), (uint32_t)kept);
        kept++;
    }
    ps->nstrings = kept;
    free(held);
}

void processes_forget_ended(struct processes *ps)
{
    keep_live_processes(ps);
    keep_live_threads(ps);
    free_unheld_maps(ps);
    free_unheld_strings(ps);
}

bool processes_names(const struct processes *ps, const char *name)
{
    return string_at(ps, name) >= 0;
}

void processes_free(struct processes *ps)
{
    for (size_t i = 0; i < ps->nprocs; i++)
        free(ps->procs[i].maps);
    free(ps->procs);
    free(ps->kernel.maps);
    free(ps->threads);
    for (size_t i = 0; i < ps->nall; i++)
        free(ps->all_maps[i]);
    free(ps->all_maps);
    for (size_t i = 0; i < ps->nstrings; i++)
        free(ps->strings[i]);
    free(ps->strings);
    index_clear(&ps->proc_index);
    index_clear(&ps->thread_index);
    index_clear(&ps->string_index);
}
