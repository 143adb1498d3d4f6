// SPDX-License-Identifier: Apache-2.0
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/saturating.h"
#include "index.h"
#include "process.h"
#include "session_state.h"
#include "unwind.h"
#include "util.h"

#define CONTEXT_MAX 0xfffffffffffff001ull
#define CONTEXT_HV 0xffffffffffffffe0ull
#define CONTEXT_KERNEL 0xffffffffffffff80ull
#define CONTEXT_USER 0xfffffffffffffe00ull
#define MAX_FRAMES 1024
#define MISC_MMAP_DATA 0x2000

struct perf_session *perf_session_new(const struct profd_host *h, const struct perf_file *f,
                                      const struct perf_session_options *o)
{
    struct perf_session *s = calloc(1, sizeof(*s));
    if (!s)
        abort();
    s->h = h;
    s->f = f;
    s->o = *o;
    s->labeled = o->label_tid || o->label_cpu || o->label_comm;
    s->gen = 1;
    if (!(s->memo = calloc(MEMO_SIZE, sizeof(*s->memo))))
        abort();
    return s;
}

uint64_t perf_session_samples(const struct perf_session *s)
{
    return s->samples;
}

uint64_t perf_session_lost(const struct perf_session *s)
{
    return s->lost;
}

/* ---- aggregation ---- */

struct out_key {
    struct perf_session *s;
    int64_t key;
};

static bool same_out(void *arg, uint32_t pos)
{
    struct out_key *k = arg;
    return k->s->outs[pos].key == k->key;
}

static struct out *out_for(struct perf_session *s, const struct process *p, size_t attr)
{
    int64_t key = s->o.split == SPLIT_PID ? p->pid : s->o.split == SPLIT_EVENT ? (int64_t)attr : 0;
    struct out_key k = {s, key};
    uint64_t hash = hash_mix(0, (uint64_t)key);
    int64_t at = index_find(&s->out_index, hash, same_out, &k);
    if (at >= 0)
        return &s->outs[at];
    s->outs = grow_array(s->outs, &s->outs_cap, s->nouts + 1, sizeof(*s->outs));
    struct out *o = &s->outs[s->nouts];
    memset(o, 0, sizeof(*o));
    o->key = key;
    o->pid = p->pid;
    o->attr = attr;
    index_add(&s->out_index, hash, (uint32_t)s->nouts++);
    return o;
}

struct loc_key {
    struct out *o;
    const struct location *l;
};

static bool same_loc(void *arg, uint32_t pos)
{
    struct loc_key *k = arg;
    return k->o->locs[pos].mapping == k->l->mapping && k->o->locs[pos].address == k->l->address;
}

/* Whether a map's contents are its file's, the same in every process that
 * maps it: a build-id, or the path of a file. */
static bool names_a_binary(const struct map *m)
{
    return m->build_id[0] || (m->filename && processes_names_a_file(m->filename));
}

struct map_key {
    struct out *o;
    const struct map *m;
};

/* A map of a binary stands for every map of the same file (name, build-id,
 * offset and size); any other map only for itself. */
static bool same_map(void *arg, uint32_t pos)
{
    const struct map_key *k = arg;
    const struct map *a = k->o->maps[pos], *b = k->m;
    if (a == b)
        return true;
    return names_a_binary(b) && a->filename == b->filename && a->pgoff == b->pgoff &&
           a->limit - a->start == b->limit - b->start && !strcmp(a->build_id, b->build_id);
}

/* The mapping ref of m in o's profile (0 for none), its map in *stand_in:
 * the first map o saw of m's binary. Processes running one binary so share
 * its locations and stacks in a profile that merges them (perf record of a
 * build runs the same compiler hundreds of times), addresses taken
 * relative to that first map as pprof's merge does. */
static uint32_t mapping_of(struct out *o, const struct map *m, const struct map **stand_in)
{
    *stand_in = m;
    if (!m)
        return 0;
    struct map_key k = {o, m};
    uint64_t hash = names_a_binary(m)
                        ? hash_mix(hash_mix(hash_mix(0, (uint64_t)(uintptr_t)m->filename), m->pgoff),
                                   m->limit - m->start)
                        : hash_mix(1, (uint64_t)(uintptr_t)m);
    int64_t at = index_find(&o->map_index, hash, same_map, &k);
    if (at >= 0) {
        *stand_in = o->maps[at];
        return (uint32_t)at + 1;
    }
    o->maps = grow_array(o->maps, &o->maps_cap, o->nmaps + 1, sizeof(*o->maps));
    o->maps[o->nmaps] = m;
    index_add(&o->map_index, hash, (uint32_t)o->nmaps);
    return (uint32_t)++o->nmaps;
}

static uint32_t location_of(struct out *o, const struct location *l)
{
    struct loc_key k = {o, l};
    uint64_t hash = hash_mix(hash_mix(0, l->mapping), l->address);
    int64_t at = index_find(&o->loc_index, hash, same_loc, &k);
    if (at >= 0)
        return (uint32_t)at;
    o->locs = grow_array(o->locs, &o->locs_cap, o->nlocs + 1, sizeof(*o->locs));
    o->locs[o->nlocs] = *l;
    index_add(&o->loc_index, hash, (uint32_t)o->nlocs);
    return (uint32_t)o->nlocs++;
}

struct sample_key {
    struct out *o;
    size_t ncolumns;
    const uint32_t *locs;
    uint32_t n;
    bool tagged;               /* the session labels samples: tags count */
    struct sample_tags tags;
};

static bool same_sample(void *arg, uint32_t pos)
{
    struct sample_key *k = arg;
    const struct sample *sm = &k->o->samples[pos];
    if (sm->nframes != k->n)
        return false;
    const struct sample_tags *t = tags_of(sm);
    if (k->tagged && (t->tid != k->tags.tid || t->cpu != k->tags.cpu || t->comm != k->tags.comm))
        return false;
    return !memcmp(sm->values + k->ncolumns, k->locs, k->n * sizeof(*k->locs));
}

/* A new sample of key k in out o: its block (tags when k has them,
 * values zeroed, location refs) in the arena of o's profile. */
static struct sample new_sample(struct perf_session *s, struct out *o, const struct sample_key *k)
{
    const struct profd_host *h = s->h;
    if (!o->profile)
        o->profile = h->profile_new(1u << 20);
    size_t tags = k->tagged ? sizeof(struct sample_tags) : 0;
    uint8_t *block = h->profile_alloc(o->profile, tags + k->ncolumns * sizeof(int64_t) +
                                                      (k->n ? k->n : 1) * sizeof(*k->locs));
    memcpy(block, &k->tags, tags);
    struct sample sm = {(int64_t *)(block + tags), k->n};
    memset(sm.values, 0, k->ncolumns * sizeof(int64_t));
    memcpy(sm.values + k->ncolumns, k->locs, k->n * sizeof(*k->locs));
    return sm;
}

/* Adds one sample (location refs leaf first) of event attr with weight period. */
static void aggregate(struct perf_session *s, struct out *o, const uint32_t *locs, uint32_t n,
                      size_t attr, uint64_t period, const struct thread *t, int32_t cpu,
                      uint64_t time)
{
    uint64_t hash = n & 1 ? locs[n - 1] : 0;
    for (uint32_t i = 0; i + 1 < n; i += 2)   /* two refs a mix: half the dependent multiplies */
        hash = hash_mix(hash, locs[i] | (uint64_t)locs[i + 1] << 32);
    struct sample_key k = {o, s->ncolumns, locs, n, s->labeled,
                           {s->o.label_tid ? t->tid : -1, s->o.label_cpu ? cpu : -1,
                            s->o.label_comm ? t->comm : NULL}};
    if (k.tagged)
        hash = hash_mix(hash_mix(hash_mix(hash, (uint64_t)k.tags.tid), (uint64_t)k.tags.cpu),
                        (uint64_t)(uintptr_t)k.tags.comm);
    int64_t at = index_find(&o->sample_index, hash, same_sample, &k);
    if (at < 0) {
        o->samples = grow_array(o->samples, &o->samples_cap, o->nsamples + 1, sizeof(*o->samples));
        o->samples[o->nsamples] = new_sample(s, o, &k);
        index_add(&o->sample_index, hash, (uint32_t)o->nsamples);
        at = (int64_t)o->nsamples++;
    }
    int64_t *v = o->samples[at].values;
    v[2 * attr] += 1;
    v[2 * attr + 1] = add_saturating(v[2 * attr + 1], int64_of_u64(period));
    if (time && (!o->first_time || time < o->first_time))
        o->first_time = time;
    if (time > o->last_time)
        o->last_time = time;
}

/* ---- samples ---- */

/* Cursor over a record body. */
struct cursor {
    const struct perf_file *f;
    const uint8_t *p, *end;
};

static bool take_u64(struct cursor *c, uint64_t *v)
{
    if (c->end - c->p < 8)
        return false;
    *v = perf_u64(c->f, c->p);
    c->p += 8;
    return true;
}

static bool take_u32_pair(struct cursor *c, uint32_t *a, uint32_t *b)
{
    if (c->end - c->p < 8)
        return false;
    *a = perf_u32(c->f, c->p);
    *b = perf_u32(c->f, c->p + 4);
    c->p += 8;
    return true;
}

static size_t read_format_size(uint64_t rf, const uint8_t *p, const struct perf_file *f,
                               size_t avail)
{
    size_t per = 8 * (1 + !!(rf & 4) + !!(rf & 16));   /* value, [id], [lost] */
    size_t head = 8 * (!!(rf & 1) + !!(rf & 2));
    if (!(rf & 8))
        return head + per;
    if (avail < 8)
        return SIZE_MAX;
    uint64_t nr = perf_u64(f, p);
    if (nr > avail / per)
        return SIZE_MAX;
    return 8 + head + nr * per;
}

/* Where a sample's frames of one side (kernel or user) are looked up: the
 * output, the process (NULL for the kernel) and the part of the memo hash
 * they make, worked out once per sample rather than once per frame. */
struct frame_scope {
    struct perf_session *s;
    struct out *o;
    const struct process *p;
    int32_t pid;
    uint32_t out;
    uint64_t salt;
};

static struct frame_scope scope_of(struct perf_session *s, struct out *o,
                                   const struct process *p)
{
    struct frame_scope fs = {s, o, p, p ? p->pid : -1, (uint32_t)(o - s->outs), 0};
    fs.salt = hash_mix(hash_mix(0, (uint64_t)fs.pid), fs.out);
    return fs;
}

/* frame_location's lookup when the memo does not hold the frame: stores it
 * in m. */
static __attribute__((noinline)) uint32_t frame_lookup(const struct frame_scope *fs,
                                                       struct memo *m, uint64_t key, uint64_t a,
                                                       bool leaf)
{
    const struct map *map = processes_find_map(&fs->s->procs, fs->p, a), *stand_in;
    struct location l = {mapping_of(fs->o, map, &stand_in), leaf || !a ? a : a - 1};
    if (stand_in != map)
        l.address = l.address - map->start + stand_in->start;
    *m = (struct memo){key, fs->s->gen, fs->pid, fs->out, location_of(fs->o, &l) + 1};
    return m->loc;
}

/* The location ref (position + 1) of address a in fs, as a leaf or as a
 * return address (moved back by 1; 0 stays: no call returns there).
 * Remembered per (address, process, out) until the mappings change, since
 * most frames repeat. */
static inline uint32_t frame_location(const struct frame_scope *fs, uint64_t a, bool leaf)
{
    uint64_t key = leaf ? a ^ 1ull << 63 : a;
    struct memo *m = &fs->s->memo[hash_mix(fs->salt, key) & (MEMO_SIZE - 1)];
    if (m->key == key && m->gen == fs->s->gen && m->pid == fs->pid && m->out == fs->out)
        return m->loc;
    return frame_lookup(fs, m, key, a, leaf);
}

/* Turns a callchain (or the lone IP) into location refs, leaf first:
 * kernel entries map through the kernel's mappings, user ones through p's.
 * With a user context (dwarf mode) the user part comes from unwinding its
 * stack copy instead. The user part under kernel frames starts where the
 * program entered the kernel (the interrupted instruction, or the one
 * after a syscall), taken as it is, as perf takes it: moved back it could
 * name the function before (a fault at a function's first instruction). */
static uint32_t stack_locations(struct perf_session *s, struct out *o, const struct process *p,
                                uint16_t misc, uint64_t ip, const uint8_t *chain, uint64_t nr,
                                const struct user_context *uc, uint32_t *locs)
{
    const struct frame_scope user = scope_of(s, o, p), kern = scope_of(s, o, NULL);
    bool kernel = (misc & 7) == 1;
    uint32_t n = 0;
    if (!chain && (!uc || kernel))
        locs[n++] = frame_location(kernel ? &kern : &user, ip, true);
    bool exact = true;   /* the next address is where execution stopped, not a return address */
    for (uint64_t i = 0; chain && i < nr && n < MAX_FRAMES; i++) {
        uint64_t a = perf_u64(s->f, chain + 8 * i);
        if (a >= CONTEXT_MAX) {
            if (a == CONTEXT_KERNEL) {
                kernel = true;
            } else if (a == CONTEXT_USER) {
                kernel = false;
                exact = true;   /* the user part starts where the program entered the kernel */
            } else {
                kernel = a == CONTEXT_HV;   /* guest contexts: treated as unknown below */
            }
            continue;
        }
        if (uc && !kernel)
            continue;   /* the unwinder gives the user part */
        locs[n] = frame_location(kernel ? &kern : &user, a, exact);
        exact = false;
        n++;
    }
    if (uc && n < MAX_FRAMES) {
        if (!s->unwinder)
            s->unwinder = unwinder_new(s->o.binary_dirs, s->o.nbinary_dirs);
        uint64_t pcs[MAX_FRAMES];
        uint32_t got = unwinder_unwind(s->unwinder, s->f, p, uc, pcs, MAX_FRAMES - n);
        for (uint32_t i = 0; i < got; i++, n++)
            locs[n] = frame_location(&user, pcs[i], i == 0);
    }
    return n;
}

/* Skips RAW and BRANCH_STACK, then reads REGS_USER and STACK_USER into uc
 * (uc->stack stays NULL without a user stack). False when they do not fit. */
static bool take_user_context(struct cursor *c, const struct perf_attr *a, struct user_context *uc)
{
    uint64_t st = a->sample_type, n;
    if (st & PERF_SAMPLE_RAW) {
        if (c->end - c->p < 4)
            return false;
        uint32_t size = perf_u32(c->f, c->p);
        if ((uint64_t)size > (uint64_t)(c->end - c->p) - 4)
            return false;
        c->p += 4 + size;
    }
    if (st & PERF_SAMPLE_BRANCH_STACK) {
        uint64_t hw_index;
        if (!take_u64(c, &n) ||
            ((a->branch_sample_type & PERF_BRANCH_HW_INDEX) && !take_u64(c, &hw_index)))
            return false;
        size_t per = (a->branch_sample_type & PERF_BRANCH_COUNTERS) ? 32 : 24;
        if (n > (uint64_t)(c->end - c->p) / per)
            return false;
        c->p += per * n;   /* entries, then as many counters when present */
    }
    if (st & PERF_SAMPLE_REGS_USER) {
        uint64_t abi;
        if (!take_u64(c, &abi))
            return false;
        if (abi) {
            size_t bytes = 8 * (size_t)__builtin_popcountll(a->sample_regs_user);
            if (bytes > (size_t)(c->end - c->p))
                return false;
            uc->regs_mask = a->sample_regs_user;
            uc->regs = c->p;
            c->p += bytes;
        }
    }
    if (st & PERF_SAMPLE_STACK_USER) {
        uint64_t size, dyn;
        if (!take_u64(c, &size) || size > (uint64_t)(c->end - c->p))
            return false;
        const uint8_t *stack = c->p;
        c->p += size;
        if (size && (!take_u64(c, &dyn) || dyn > size))
            return false;
        if (size && dyn && uc->regs) {
            uc->stack = stack;
            uc->stack_size = dyn;
        }
    }
    return true;
}

static int add_sample(struct perf_session *s, const struct perf_record *r, char *err, size_t errlen)
{
    const struct perf_attr *a = perf_sample_attr(s->f, r);
    if (!a)
        return perf_fail(err, errlen, r->offset, "sample with an unknown attr id"), -1;
    size_t attr = (size_t)(a - s->f->attrs);
    if (!s->ncolumns)
        s->ncolumns = 2 * s->f->nattrs;
    if (2 * attr >= s->ncolumns)
        return perf_fail(err, errlen, r->offset, "sample of an event declared after the first sample"),
               -1;
    uint64_t st = a->sample_type, ip = 0, time = 0, period = 0, skip;
    uint32_t pid = 0, tid = 0, cpu = 0, res;
    struct cursor c = {s->f, r->body, r->body + r->len};
    bool ok = (!(st & PERF_SAMPLE_IDENTIFIER) || take_u64(&c, &skip)) &&
              (!(st & PERF_SAMPLE_IP) || take_u64(&c, &ip)) &&
              (!(st & PERF_SAMPLE_TID) || take_u32_pair(&c, &pid, &tid)) &&
              (!(st & PERF_SAMPLE_TIME) || take_u64(&c, &time)) &&
              (!(st & PERF_SAMPLE_ADDR) || take_u64(&c, &skip)) &&
              (!(st & PERF_SAMPLE_ID) || take_u64(&c, &skip)) &&
              (!(st & PERF_SAMPLE_STREAM_ID) || take_u64(&c, &skip)) &&
              (!(st & PERF_SAMPLE_CPU) || take_u32_pair(&c, &cpu, &res)) &&
              (!(st & PERF_SAMPLE_PERIOD) || take_u64(&c, &period));
    if (!ok)
        return perf_fail(err, errlen, r->offset, "sample truncated"), -1;
    if (st & PERF_SAMPLE_READ) {
        size_t n = read_format_size(a->read_format, c.p, s->f, (size_t)(c.end - c.p));
        if (n > (size_t)(c.end - c.p))
            return perf_fail(err, errlen, r->offset, "sample read values run past the record"), -1;
        c.p += n;
    }
    const uint8_t *chain = NULL;
    uint64_t nr = 0;
    if (st & PERF_SAMPLE_CALLCHAIN) {
        if (!take_u64(&c, &nr) || nr > (uint64_t)(c.end - c.p) / 8)
            return perf_fail(err, errlen, r->offset, "callchain of %llu entries is longer than the "
                        "record", (unsigned long long)nr), -1;
        chain = c.p;
        c.p += 8 * nr;
    }
    struct user_context uc = {.tid = (int32_t)tid};
    if (!take_user_context(&c, a, &uc))
        return perf_fail(err, errlen, r->offset, "sample raw data, branch stack, registers or "
                         "stack copy run past the record"), -1;
    if (!period)
        period = (a->flags & PERF_ATTR_FLAG_FREQ) || !a->sample_period ? 1 : a->sample_period;
    const struct thread *t = processes_thread(&s->procs, (int32_t)pid, (int32_t)tid);
    const struct process *p = processes_get(&s->procs, (int32_t)pid);
    struct out *o = out_for(s, p, attr);
    uint32_t locs[MAX_FRAMES];
    uint32_t n = stack_locations(s, o, p, r->misc, ip, chain, nr, uc.stack ? &uc : NULL, locs);
    aggregate(s, o, locs, n, attr, period, t, (int32_t)cpu, time);
    s->samples++;
    return 0;
}

/* ---- other records ---- */

/* A NUL-terminated string at p within end, or NULL. */
static const char *c_string(const uint8_t *p, const uint8_t *end)
{
    return p < end && memchr(p, 0, (size_t)(end - p)) ? (const char *)p : NULL;
}

static int add_mmap(struct perf_session *s, const struct perf_record *r, char *err, size_t errlen)
{
    const struct perf_file *f = s->f;
    bool v2 = r->type == PERF_RECORD_MMAP2;
    if (r->misc & MISC_MMAP_DATA)
        return 0;   /* a data mapping (perf record -d): no code runs there */
    size_t fixed = v2 ? 8 + 24 + 24 + 8 : 8 + 24;
    const char *name = r->len > fixed ? c_string(r->body + fixed, r->body + r->len) : NULL;
    if (!name)
        return perf_fail(err, errlen, r->offset, "mmap record without a file name"), -1;
    struct map m = {.start = perf_u64(f, r->body + 8),
                    .pgoff = perf_u64(f, r->body + 24)};
    m.limit = m.start + perf_u64(f, r->body + 16);
    if (v2 && (r->misc & 0x4000)) {   /* MMAP_BUILD_ID: the union holds the id */
        uint8_t size = r->body[32];
        perf_build_id_hex(r->body + 36, size > 20 ? 20 : size, m.build_id, false);
    }
    int32_t pid = (int32_t)perf_u32(f, r->body);
    processes_add_map(&s->procs, pid, &m, name, f);
    s->gen++;
    return 0;
}

int perf_session_add(struct perf_session *s, const struct perf_record *r, char *err,
                     size_t errlen)
{
    const struct perf_file *f = s->f;
    switch (r->type) {
    case PERF_RECORD_SAMPLE:
        return add_sample(s, r, err, errlen);
    case PERF_RECORD_MMAP:
    case PERF_RECORD_MMAP2:
        if (r->len < (r->type == PERF_RECORD_MMAP ? 33u : 65u))
            return perf_fail(err, errlen, r->offset, "mmap record too short"), -1;
        return add_mmap(s, r, err, errlen);
    case PERF_RECORD_COMM: {
        const char *comm = r->len > 8 ? c_string(r->body + 8, r->body + r->len) : NULL;
        if (!comm)
            return perf_fail(err, errlen, r->offset, "comm record without a name"), -1;
        processes_comm(&s->procs, (int32_t)perf_u32(f, r->body), (int32_t)perf_u32(f, r->body + 4),
                       comm, (r->misc & 0x2000) != 0);
        return 0;
    }
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT:
        if (r->len < 16)
            return perf_fail(err, errlen, r->offset, "fork/exit record too short"), -1;
        s->gen++;   /* a reused pid starts anew */
        if (r->type == PERF_RECORD_FORK)
            processes_fork(&s->procs, (int32_t)perf_u32(f, r->body),
                           (int32_t)perf_u32(f, r->body + 4), (int32_t)perf_u32(f, r->body + 8),
                           (int32_t)perf_u32(f, r->body + 12));
        else
            processes_exit(&s->procs, (int32_t)perf_u32(f, r->body),
                           (int32_t)perf_u32(f, r->body + 8));
        return 0;
    case PERF_RECORD_KSYMBOL: {   /* kernel code loaded later: BPF programs, JITs */
        const char *name = r->len > 16 ? c_string(r->body + 16, r->body + r->len) : NULL;
        if (!name)
            return perf_fail(err, errlen, r->offset, "ksymbol record without a name"), -1;
        if (perf_u16(f, r->body + 14) & 1)
            return 0;   /* unregistered: its old address range just goes unused */
        struct map m = {.start = perf_u64(f, r->body)};
        m.limit = m.start + perf_u32(f, r->body + 8);
        processes_add_map(&s->procs, -1, &m, name, f);
        s->gen++;
        return 0;
    }
    case PERF_RECORD_LOST:
    case PERF_RECORD_LOST_SAMPLES: {
        size_t at = r->type == PERF_RECORD_LOST ? 8 : 0;   /* after LOST's id */
        if (r->len < at + 8)
            return perf_fail(err, errlen, r->offset, "lost record too short"), -1;
        uint64_t n = perf_u64(f, r->body + at);
        s->lost += n;
        s->lost_in_window += n;
        return 0;
    }
    default:
        return 0;
    }
}

static void out_clear(struct perf_session *s, struct out *o)
{
    if (o->profile)
        s->h->profile_free(o->profile);
    free(o->locs);
    index_clear(&o->loc_index);
    free(o->maps);
    index_clear(&o->map_index);
    free(o->samples);
    index_clear(&o->sample_index);
}

struct perf_output *perf_session_flush(struct perf_session *s, size_t *n)
{
    struct perf_output *res = calloc(s->nouts + 1, sizeof(*res));
    if (!res)
        abort();
    *n = 0;
    for (size_t i = 0; i < s->nouts; i++) {
        struct out *o = &s->outs[i];
        if (o->nsamples) {
            res[*n].profile = perf_build_profile(s, o);
            perf_out_labels(s, o, &res[*n].labels);
            (*n)++;
        }
        out_clear(s, o);
    }
    free(s->outs);
    s->outs = NULL;
    s->nouts = s->outs_cap = 0;
    index_clear(&s->out_index);
    s->lost_in_window = 0;
    s->gen++;   /* the memo's frames go with the outputs */
    return res;
}

void perf_session_forget_ended(struct perf_session *s)
{
    processes_forget_ended(&s->procs);
    if (s->unwinder)
        unwinder_forget_gone(s->unwinder, &s->procs);
}

void perf_session_free(struct perf_session *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nouts; i++)
        out_clear(s, &s->outs[i]);
    free(s->outs);
    index_clear(&s->out_index);
    processes_free(&s->procs);
    unwinder_free(s->unwinder);
    free(s->memo);
    free(s);
}
