// SPDX-License-Identifier: Apache-2.0
#include "locations.h"

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../../lib/binary_lookup.h"
#include "../../lib/grow.h"
#include "elf_symbols.h"
#include "kernel_symbols.h"
#include "perf_map.h"
#include "profile_functions.h"

#define MAX_INLINE 64
/* Fewer locations than this per thread are not worth another thread. */
#define MIN_LOCATIONS_PER_THREAD 16384
/* A profile large enough for two threads is symbolized in the huge-page
 * arena (libdw's many blocks while it reads a large binary's DWARF, and the
 * frames'), where its working set of tens of MiB comes a huge page at a
 * time. A smaller one's few blocks would each hold a whole huge page and
 * save no time: a perf.data conversion's few hundred locations peaked 5 MB
 * higher for it where huge pages are granted at once. */
#define HUGE_PAGES_FROM_LOCATIONS (2 * MIN_LOCATIONS_PER_THREAD)
/* Lines a worker takes from the profile's arena at once, at most. */
#define LINE_BLOCK 4096

/* ---- sources ---- */

/* True for the mapping names perf and others give anonymous (JIT) code;
 * *owner is the pid of a mapping named after its process's JIT map
 * (/tmp/perf-<pid>.map), left as it is for the others. */
static bool is_anonymous(const char *filename, int32_t *owner)
{
    return !filename[0] || !strcmp(filename, "//anon") || !strncmp(filename, "[anon", 5) ||
           binary_lookup_is_jit_map(filename, owner);
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
static struct kernel_symbols *module_table(const struct symbolize_settings *s,
                                           const struct profd_profile *p)
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

/* Where a mapping's addresses get their names, decided once per profile. */
struct source {
    bool decided;
    enum symbolize_result missing;       /* the outcome when no table is there */
    struct kernel_symbols *kernel;
    bool module;                         /* a kernel module, named from its kernel's table */
    const struct perf_map *jit;
    struct elf_binary *elf;
    bool kernel_image;                   /* elf is the configured vmlinux */
};

static struct source source_of(const struct symbolize_settings *s, const struct profd_profile *p,
                               const struct profd_mapping *m, int32_t pid)
{
    char filename[4096], build_id[128];
    string_of(p, m->filename, filename, sizeof(filename));
    string_of(p, m->build_id, build_id, sizeof(build_id));
    struct source src = {.decided = true, .missing = NO_BINARY};
    int32_t owner = pid;   /* whose JIT map names anonymous code */
    if (is_kernel(filename, m)) {
        src.missing = KERNEL_UNKNOWN;
        src.module = !is_kernel_itself(filename);
        src.elf = src.module ? NULL : symbol_cache_vmlinux(s->cache, build_id);
        src.kernel_image = src.elf != NULL;
        if (!src.elf)
            src.kernel = src.module ? module_table(s, p) : symbol_cache_kernel(s->cache, build_id);
    } else if (is_anonymous(filename, &owner)) {
        src.jit = symbol_cache_jit(s->cache, owner);
    } else if (filename[0] == '/' || !strcmp(filename, "[vdso]")) {
        filename[binary_lookup_path_length(filename)] = 0;   /* the file as it was */
        struct process_mapping where = {pid, m->memory_start, m->memory_limit};
        src.elf = symbol_cache_binary(s->cache, filename, build_id, &where);
    }
    return src;
}

/* A location to symbolize, its address and its mapping, for sorting. */
struct by_address {
    uint64_t address;
    uint32_t location;   /* index in the profile */
    uint32_t mapping;    /* ref */
};

/* Sorts a[n] by address, stably: a radix sort, least significant digit
 * first, of the addresses less the lowest, so that only the digits where
 * addresses differ are passed over (two for a few MiB of code); the
 * counts of every pass are taken in one read. Returns a or spare,
 * whichever holds the result. */
static struct by_address *sort_by_address(struct by_address *a, struct by_address *spare, size_t n)
{
    enum { BITS = 11, DIGITS = 1 << BITS, MAX_PASSES = (64 + BITS - 1) / BITS };
    uint64_t lowest = UINT64_MAX, highest = 0;
    for (size_t i = 0; i < n; i++) {
        lowest = a[i].address < lowest ? a[i].address : lowest;
        highest = a[i].address > highest ? a[i].address : highest;
    }
    if (n < 2 || lowest == highest)
        return a;
    unsigned passes = (64 - __builtin_clzll(highest - lowest) + BITS - 1) / BITS;
    static_assert(MAX_PASSES * DIGITS * sizeof(uint32_t) <= 64 << 10, "counts fit the stack");
    uint32_t count[MAX_PASSES][DIGITS] = {{0}};
    for (size_t i = 0; i < n; i++) {
        uint64_t key = a[i].address - lowest;
        for (unsigned pass = 0; pass < passes; pass++)
            count[pass][(key >> (pass * BITS)) & (DIGITS - 1)]++;
    }
    for (unsigned pass = 0; pass < passes; pass++) {
        uint32_t *at = count[pass];
        for (uint32_t d = 0, sum = 0; d < DIGITS; d++) {
            uint32_t c = at[d];
            at[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            spare[at[((a[i].address - lowest) >> (pass * BITS)) & (DIGITS - 1)]++] = a[i];
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
    madvise(a, *size, MADV_HUGEPAGE);   /* a million locations: 32 MB, 16 faults rather than 8,000 */
    *block = a;
    *n = 0;
    for (uint32_t i = 0; i < p->nlocations; i++) {
        const struct profd_location *l = &p->locations[i];
        if (!l->nlines && l->mapping && l->mapping <= p->nmappings)
            a[(*n)++] = (struct by_address){l->address, i, l->mapping};
    }
    return sort_by_address(a, a + p->nlocations + 1, *n);
}


/* Decides the source of every mapping order[0, n) refers to. */
static void decide_sources(const struct symbolize_settings *s, const struct profd_profile *p,
                           const struct by_address *order, size_t n, struct source *sources,
                           int32_t pid)
{
    for (size_t i = 0; i < n; i++) {
        struct source *src = &sources[order[i].mapping];
        if (!src->decided)
            *src = source_of(s, p, &p->mappings[order[i].mapping - 1], pid);
    }
}

/* ---- workers ---- */

/* What a worker learned of a mapping, set on it once the workers are done
 * (they share the mappings). */
enum { HAS_FUNCTIONS = 1, HAS_FILENAMES = 2, HAS_LINE_NUMBERS = 4, HAS_INLINE_FRAMES = 8 };

/* A profile being symbolized: what its workers share. */
struct job {
    const struct symbolize_settings *s;
    struct profd_profile *p;
    const struct by_address *order;   /* the locations to symbolize */
    const struct source *sources;     /* by mapping ref */
    const uint32_t *first;            /* by mapping ref: the first ref of its binary */
    pthread_mutex_t lock;             /* the profile's arena; kernel and JIT tables */
    bool results;                     /* some binary answers from its kept results */
    bool huge_pages;                  /* its workers allocate from the huge-page arena */
};

/* Lines handed to one worker from a block of the profile's arena. */
struct line_block {
    struct profd_line *lines;
    size_t used, cap;
};

/* A part of a job's order that one worker symbolizes, or two: one takes
 * chunks from its start up, the other from its end down, until they
 * meet; so neither is left waiting for the other, and each reads the
 * debug info of (mostly) its own end of the part. */
struct part {
    size_t first, end;                /* order[first, end) */
    _Atomic uint64_t left;            /* what is left of it: start << 32 | end */
};

/* Locations a worker takes from its part at once. */
#define CHUNK 256

/* Takes the next chunk of part from below (or, when down, from above) into
 * [*from, *to). False when nothing is left. */
static bool take_chunk(struct part *part, bool down, size_t *from, size_t *to)
{
    uint64_t left = atomic_load(&part->left), rest;
    do {
        size_t start = left >> 32, end = (uint32_t)left;
        if (start >= end)
            return false;
        if (down) {
            *from = end - start > CHUNK ? end - CHUNK : start;
            *to = end;
            rest = (uint64_t)start << 32 | *from;
        } else {
            *from = start;
            *to = end - start > CHUNK ? start + CHUNK : end;
            rest = (uint64_t)*to << 32 | end;
        }
    } while (!atomic_compare_exchange_weak(&part->left, &left, rest));
    return true;
}

/* One thread's share of a job: chunks of its part, taken up or down. */
struct worker {
    struct job *job;
    struct part *part;
    bool down;
    size_t last;                      /* the order index it looked at last, or SIZE_MAX */
    enum symbolize_result last_result;
    struct elf_binary *last_lane;     /* the lane it looked up in last, or NULL */
    uint8_t *lane;                    /* by mapping ref: 1 + the lane of its binary used */
    uint8_t *flags;                   /* HAS_* by mapping ref */
    struct function_drafts drafts;
    struct line_block *blocks;
    size_t nblocks, blocks_cap;
    uint64_t results[SYMBOLIZE_RESULTS_];
};

/* Room for n lines in w's blocks: a new block, from 64 lines and doubling
 * up to LINE_BLOCK, when the last has no room. */
static struct profd_line *worker_lines(struct worker *w, size_t n)
{
    struct line_block *b = w->nblocks ? &w->blocks[w->nblocks - 1] : NULL;
    if (!b || b->cap - b->used < n) {
        size_t cap = b && 2 * b->cap < LINE_BLOCK ? 2 * b->cap : b ? LINE_BLOCK : 64;
        if (cap < n)
            cap = n;
        pthread_mutex_lock(&w->job->lock);
        struct profd_line *lines = w->job->s->host->profile_alloc(w->job->p, cap * sizeof(*lines));
        pthread_mutex_unlock(&w->job->lock);
        w->blocks = grow_array(w->blocks, &w->blocks_cap, w->nblocks + 1, sizeof(*w->blocks));
        b = &w->blocks[w->nblocks++];
        *b = (struct line_block){lines, 0, cap};
    }
    b->used += n;
    return b->lines + b->used - n;
}

/* Gives l one line naming function draft `draft` (no file or line), from a
 * table that names functions only. 0: not found. */
static enum symbolize_result name_only(struct worker *w, struct profd_location *l, uint32_t draft)
{
    if (!draft)
        return NO_SYMBOLS;
    l->lines = worker_lines(w, 1);
    l->lines[0] = (struct profd_line){draft, 0, 0};
    l->nlines = 1;
    w->flags[l->mapping] |= HAS_FUNCTIONS;
    return SYMBOLIZED;
}

/* The draft of the function at location l of mapping m in src's kernel
 * or JIT table, or 0. The tables are the workers' to share: looked up
 * under the job's lock. The kernel's own mapping ("[kernel.kallsyms]_text")
 * has the recorded address of _text as its file offset, which undoes
 * another boot's KASLR offset; a module's addresses are used as they are. */
static uint32_t named_draft(struct worker *w, const struct source *src,
                            const struct profd_location *l, const struct profd_mapping *m,
                            uint64_t use)
{
    pthread_mutex_lock(&w->job->lock);
    const char *name;
    if (src->kernel) {
        uint64_t addr = l->address, text = kernel_symbols_text(src->kernel);
        if (!src->module && m->file_offset && text)
            addr = addr - m->file_offset + text;
        name = kernel_symbols_find(src->kernel, addr);
    } else {
        name = perf_map_find(src->jit, l->address);
    }
    uint32_t draft = name ? function_drafts_named(&w->drafts, name, use) : 0;
    pthread_mutex_unlock(&w->job->lock);
    return draft;
}

/* Symbolizes location l with the frames at address vaddr of binary b,
 * used at use, use + 1, ... */
static enum symbolize_result from_frames(struct worker *w, struct profd_location *l,
                                         struct elf_binary *b, uint64_t vaddr, uint64_t use)
{
    struct elf_frame frames[MAX_INLINE];
    size_t n = elf_binary_frames(b, vaddr, frames, MAX_INLINE);
    if (!n)
        return NO_SYMBOLS;
    l->lines = worker_lines(w, n);
    l->nlines = (uint32_t)n;
    uint8_t flags = HAS_FUNCTIONS | (n > 1 ? HAS_INLINE_FRAMES : 0);
    for (size_t i = 0; i < n; i++) {
        l->lines[i] = (struct profd_line){function_drafts_of_frame(&w->drafts, &frames[i], use + i),
                                          frames[i].line, frames[i].column};
        flags |= (frames[i].file[0] ? HAS_FILENAMES : 0) | (frames[i].line ? HAS_LINE_NUMBERS : 0);
    }
    w->flags[l->mapping] |= flags;
    if (!w->job->s->keep_addresses)
        l->address = 0;
    return SYMBOLIZED;
}

/* Sets *vaddr to where `address` of mapping m is in b, a lane of src's
 * binary: where the mapping's file offset is loaded, or for a kernel
 * image, its linked text plus the address's distance from _text as
 * recorded (the mapping's file offset; another boot's KASLR undone).
 * False when no segment holds it. */
static bool vaddr_in(const struct source *src, const struct profd_mapping *m,
                     const struct elf_binary *b, uint64_t address, uint64_t *vaddr)
{
    if (src->kernel_image) {
        uint64_t text;
        if (!elf_binary_text(b, &text) || address < m->file_offset)
            return false;
        *vaddr = address - m->file_offset + text;
        return true;
    }
    return address >= m->memory_start &&
           elf_binary_vaddr(b, address - m->memory_start + m->file_offset, vaddr);
}

/* Readies the cache lines the kept result of order[i] would be in. */
static void prefetch_result(const struct worker *w, size_t i)
{
    const struct by_address *o = &w->job->order[i];
    const struct source *src = &w->job->sources[o->mapping];
    uint64_t vaddr;
    if (!src->elf)
        return;
    struct elf_binary *lane = elf_binary_lane(src->elf, w->lane[o->mapping] - 1u);
    if (vaddr_in(src, &w->job->p->mappings[o->mapping - 1], lane, o->address, &vaddr))
        elf_binary_prefetch_result(lane, vaddr);
}

/* Symbolizes l, the location at order index i: the functions it names
 * are used at i's place in address order (for the order they are added to
 * the profile in, see profile_functions.h). */
static enum symbolize_result symbolize_location(struct worker *w, struct profd_location *l,
                                                size_t i)
{
    const struct source *src = &w->job->sources[l->mapping];
    const struct profd_mapping *m = &w->job->p->mappings[l->mapping - 1];
    uint64_t use = (uint64_t)i * MAX_INLINE, vaddr;
    if (src->elf) {
        struct elf_binary *lane = elf_binary_lane(src->elf, w->lane[l->mapping] - 1u);
        if (lane != w->last_lane && w->last_lane)   /* in address order: done with that one */
            elf_binary_lane_done(w->last_lane);
        w->last_lane = lane;
        return vaddr_in(src, m, lane, l->address, &vaddr) ? from_frames(w, l, lane, vaddr, use)
                                                          : OUTSIDE_SEGMENTS;
    }
    if (src->kernel || src->jit)
        return name_only(w, l, named_draft(w, src, l, m, use));
    return src->missing;
}

/* Gives l the lines of `same`, the location before it in address order,
 * which has the same address and mapping. */
static void copy_lines(struct worker *w, struct profd_location *l,
                       const struct profd_location *same)
{
    l->lines = worker_lines(w, same->nlines);
    memcpy(l->lines, same->lines, same->nlines * sizeof(*l->lines));
    l->nlines = same->nlines;
    if (!w->job->s->keep_addresses)
        l->address = 0;
}

/* Symbolizes the location at order[i], or gives it the lines of the one w
 * looked at last when that has the same address in the same mapping. */
static void visit(struct worker *w, size_t i)
{
    const struct by_address *order = w->job->order;
    struct profd_location *locations = w->job->p->locations, *l = &locations[order[i].location];
    if (w->last != SIZE_MAX && order[i].address == order[w->last].address &&
        order[i].mapping == order[w->last].mapping) {
        if (w->last_result == SYMBOLIZED)
            copy_lines(w, l, &locations[order[w->last].location]);
    } else {
        w->last_result = symbolize_location(w, l, i);
    }
    w->results[w->last_result]++;
    w->last = i;
}

static void work(struct worker *w)
{
    const struct by_address *order = w->job->order;
    const struct profd_location *locations = w->job->p->locations;
    size_t from, to;
    w->last = SIZE_MAX;
    while (take_chunk(w->part, w->down, &from, &to)) {
        for (size_t k = 0, n = to - from; k < n; k++) {
            size_t i = w->down ? to - 1 - k : from + k;
            if (k + 16 < n) {   /* locations come in address order, not memory order */
                __builtin_prefetch(&locations[order[w->down ? i - 16 : i + 16].location], 1);
                if (w->job->results)
                    prefetch_result(w, w->down ? i - 8 : i + 8);
            }
            visit(w, i);
        }
    }
}

static void *work_thread(void *arg)
{
    struct worker *w = arg;
    const struct profd_host *host = w->job->s->host;
    int before = w->job->huge_pages ? host->huge_arena_enter() : -1;
    work(w);
    host->huge_arena_leave(before);
    return NULL;
}

/* Runs workers 1.. on threads of their own and worker 0 on this one. */
static void run_workers(struct worker *w, size_t n)
{
    pthread_t threads[ELF_BINARY_MAX_LANES];
    bool started[ELF_BINARY_MAX_LANES] = {false};
    for (size_t k = 1; k < n; k++)
        started[k] = pthread_create(&threads[k], NULL, work_thread, &w[k]) == 0;
    work(&w[0]);
    for (size_t k = 1; k < n; k++) {
        if (started[k])
            pthread_join(threads[k], NULL);
        else
            work(&w[k]);   /* its lanes are its own: the others are done with theirs */
    }
}

/* ---- planning ---- */

/* A mapping ref and its binary, for finding the mappings of one binary. */
struct mapping_binary {
    const struct elf_binary *elf;
    uint32_t ref;
};

static int by_binary(const void *a, const void *b)
{
    const struct mapping_binary *x = a, *y = b;
    if (x->elf != y->elf)
        return (uintptr_t)x->elf < (uintptr_t)y->elf ? -1 : 1;
    return x->ref < y->ref ? -1 : x->ref > y->ref;
}

/* For each mapping ref with a binary, the first ref with the same binary:
 * one binary, one count of the lanes it needs (nmappings + 1 entries,
 * malloc'd). */
static uint32_t *first_mapping_of_binaries(const struct source *sources, uint32_t nmappings)
{
    uint32_t *first = calloc(nmappings + 1, sizeof(*first));
    struct mapping_binary *mb = malloc((nmappings + 1) * sizeof(*mb));
    if (!first || !mb)
        abort();
    size_t n = 0;
    for (uint32_t ref = 1; ref <= nmappings; ref++)
        if (sources[ref].elf)
            mb[n++] = (struct mapping_binary){sources[ref].elf, ref};
    qsort(mb, n, sizeof(*mb), by_binary);
    for (size_t i = 0; i < n; i++)
        first[mb[i].ref] = i && mb[i].elf == mb[i - 1].elf ? first[mb[i - 1].ref] : mb[i].ref;
    free(mb);
    return first;
}

/* Splits order[0, n) among t workers: into a part for each two (and one
 * for the last alone when t is odd), of sizes in proportion, none
 * starting inside a run of one address in one mapping. */
static void split(struct worker *w, struct part *parts, size_t t, const struct by_address *order,
                  size_t n)
{
    size_t start = 0;
    for (size_t k = 0; k < t; k += 2) {
        size_t end = k + 2 >= t ? n : n * (k + 2) / t;
        if (end < start)
            end = start;
        while (end > 0 && end < n && order[end].address == order[end - 1].address &&
               order[end].mapping == order[end - 1].mapping)
            end++;
        struct part *part = &parts[k / 2];
        part->first = start;
        part->end = end;
        atomic_init(&part->left, (uint64_t)start << 32 | end);
        w[k].part = part;
        w[k].down = false;
        if (k + 1 < t) {
            w[k + 1].part = part;
            w[k + 1].down = true;
        }
        start = end;
    }
}

/* Gives each of the t workers a lane of every binary in its part: the
 * workers whose parts share a binary get one each, lane 0 first. With more
 * than one worker, opens the lanes needed and readies every binary for
 * lookups on the workers' threads (elf_binary_open_lanes); a lone worker
 * leaves its binaries to load what they need when they need it. False
 * when some lanes could not be opened. */
static bool assign_lanes(struct worker *w, size_t t, const struct job *job)
{
    uint32_t nmappings = job->p->nmappings;
    const uint32_t *first = job->first;
    uint8_t *lanes = calloc(nmappings + 1, 1);   /* lanes given out, by first ref */
    if (!lanes)
        abort();
    for (size_t k = 0; k < t; k++) {
        uint8_t *given = calloc(nmappings + 1, 1);   /* 1 + lane, by first ref */
        if (!given)
            abort();
        for (size_t i = w[k].part->first; i < w[k].part->end; i++) {
            uint32_t ref = job->order[i].mapping, f = first[ref];
            if (f && !given[f])
                given[f] = ++lanes[f];
            w[k].lane[ref] = given[f];
        }
        free(given);
    }
    bool opened = true;
    for (uint32_t ref = 1; t > 1 && ref <= nmappings; ref++)   /* one worker shares nothing */
        if (lanes[ref])
            opened &= elf_binary_open_lanes(job->sources[ref].elf, lanes[ref]) >= lanes[ref];
    free(lanes);
    return opened;
}

/* Has each binary of the job use its lanes' results only when the job's
 * locations in it fit them (elf_binary_use_results). */
static void choose_results(struct job *job, size_t n)
{
    uint32_t nmappings = job->p->nmappings;
    const uint32_t *first = job->first;
    size_t *count = calloc(nmappings + 1, sizeof(*count));   /* by first ref */
    if (!count)
        abort();
    for (size_t i = 0; i < n; i++)
        count[first[job->order[i].mapping]]++;
    for (uint32_t ref = 1; ref <= nmappings; ref++)
        if (first[ref] == ref) {
            struct elf_binary *b = job->sources[ref].elf;
            bool use = count[ref] <= elf_binary_results_room(b);
            elf_binary_use_results(b, use);
            job->results |= use;
        }
    free(count);
}

/* Readies t workers for job (t of them when the lanes they need open,
 * else one). Returns how many. */
static size_t plan_workers(struct worker *w, struct part *parts, size_t t, struct job *job,
                           size_t n)
{
    for (size_t k = 0; k < t; k++) {
        w[k] = (struct worker){.job = job};
        function_drafts_init(&w[k].drafts, job->s->demangle);
        w[k].lane = calloc(job->p->nmappings + 1, 1);
        w[k].flags = calloc(job->p->nmappings + 1, 1);
        if (!w[k].lane || !w[k].flags)
            abort();
    }
    split(w, parts, t, job->order, n);
    if (assign_lanes(w, t, job))   /* always, for one worker: lane 0 of each binary */
        return t;
    memset(w[0].lane, 0, job->p->nmappings + 1);
    split(w, parts, 1, job->order, n);
    assign_lanes(w, 1, job);   /* lane 0 of each */
    for (size_t k = 1; k < t; k++) {
        free(w[k].lane);
        free(w[k].flags);
        function_drafts_free(&w[k].drafts);
    }
    return 1;
}

/* Names the profile's functions in w's lines (its drafts added), sets
 * what w learned on the mappings, adds up its results and frees it. */
static void finish_worker(struct worker *w, uint64_t results[SYMBOLIZE_RESULTS_])
{
    for (size_t b = 0; b < w->nblocks; b++)
        for (size_t i = 0; i < w->blocks[b].used; i++) {
            struct profd_line *ln = &w->blocks[b].lines[i];
            ln->function = profile_functions_ref(&w->drafts, ln->function);
        }
    struct profd_profile *p = w->job->p;
    for (uint32_t ref = 1; ref <= p->nmappings; ref++) {
        struct profd_mapping *m = &p->mappings[ref - 1];
        m->has_functions |= (w->flags[ref] & HAS_FUNCTIONS) != 0;
        m->has_filenames |= (w->flags[ref] & HAS_FILENAMES) != 0;
        m->has_line_numbers |= (w->flags[ref] & HAS_LINE_NUMBERS) != 0;
        m->has_inline_frames |= (w->flags[ref] & HAS_INLINE_FRAMES) != 0;
    }
    for (int r = 0; r < SYMBOLIZE_RESULTS_; r++)
        results[r] += w->results[r];
    function_drafts_free(&w->drafts);
    free(w->blocks);
    free(w->lane);
    free(w->flags);
}

struct symbolize_run symbolize_locations(const struct symbolize_settings *s,
                                         struct profd_profile *p, int32_t pid,
                                         uint64_t results[SYMBOLIZE_RESULTS_])
{
    int arena = p->nlocations >= HUGE_PAGES_FROM_LOCATIONS ? s->host->huge_arena_enter() : -1;
    struct source *sources = calloc(p->nmappings + 1, sizeof(*sources));
    if (!sources)
        abort();
    size_t n, size;
    void *block;
    const struct by_address *order = locations_by_address(p, &n, &block, &size);
    decide_sources(s, p, order, n, sources, pid);
    size_t t = n / MIN_LOCATIONS_PER_THREAD;
    t = t < 1 ? 1 : t > s->max_threads ? s->max_threads : t;
    if (t > ELF_BINARY_MAX_LANES)
        t = ELF_BINARY_MAX_LANES;
    uint32_t *first = first_mapping_of_binaries(sources, p->nmappings);
    struct job job = {s, p, order, sources, first, PTHREAD_MUTEX_INITIALIZER, .huge_pages = arena >= 0};
    struct worker workers[ELF_BINARY_MAX_LANES];
    struct part parts[ELF_BINARY_MAX_LANES];
    t = plan_workers(workers, parts, t, &job, n);
    choose_results(&job, n);
    run_workers(workers, t);
    struct profile_functions pf;
    struct function_drafts *drafts[ELF_BINARY_MAX_LANES];
    for (size_t k = 0; k < t; k++)
        drafts[k] = &workers[k].drafts;
    profile_functions_init(&pf, s->host, p);
    profile_functions_add(&pf, drafts, t);
    profile_functions_free(&pf);
    for (size_t k = 0; k < t; k++)
        finish_worker(&workers[k], results);
    pthread_mutex_destroy(&job.lock);
    munmap(block, size);
    free(first);
    free(sources);
    s->host->huge_arena_leave(arena);
    return (struct symbolize_run){t, arena >= 0};
}
