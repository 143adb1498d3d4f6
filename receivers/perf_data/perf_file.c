// SPDX-License-Identifier: Apache-2.0
#include "perf_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "util.h"

#define PERF_MAGIC 0x32454c4946524550ull   /* "PERFILE2" */
#define FILE_HEADER_SIZE 104
#define PIPE_HEADER_SIZE 16
#define ATTR_KNOWN_SIZE 136                /* VER8 */
#define MAX_INFLATED (1u << 30)           /* a COMPRESSED record's output */

enum {
    FEAT_BUILD_ID = 2,
    FEAT_HOSTNAME = 3,
    FEAT_OSRELEASE = 4,
    FEAT_VERSION = 5,
    FEAT_ARCH = 6,
    FEAT_NRCPUS = 7,
    FEAT_CMDLINE = 11,
    FEAT_EVENT_DESC = 12,
    FEAT_SAMPLE_TIME = 21,
    FEAT_CLOCK_DATA = 29,
    FEAT_BITS = 256,
};

enum {
    USER_HEADER_ATTR = 64,
    USER_HEADER_EVENT_TYPE = 65,
    USER_HEADER_TRACING_DATA = 66,
    USER_HEADER_BUILD_ID = 67,
    USER_ID_INDEX = 69,
    USER_AUXTRACE = 71,
    USER_HEADER_FEATURE = 80,
    USER_COMPRESSED = 81,
    USER_COMPRESSED2 = 83,
};

/* True when [off, off + n) lies inside [0, limit). */
static bool fits(uint64_t off, uint64_t n, uint64_t limit)
{
    return off <= limit && n <= limit - off;
}

/* ---- attrs ---- */

static const char *derived_name(uint32_t type, uint64_t config)
{
    static const char *const hw[] = {"cycles", "instructions", "cache-references", "cache-misses",
                                     "branches", "branch-misses", "bus-cycles"};
    static const char *const sw[] = {"cpu-clock", "task-clock", "page-faults",
                                     "context-switches", "cpu-migrations", "minor-faults",
                                     "major-faults"};
    if (type == 0 && config < sizeof(hw) / sizeof(*hw))
        return hw[config];
    if (type == 1 && config < sizeof(sw) / sizeof(*sw))
        return sw[config];
    return NULL;
}

/* The name an attr was given (EVENT_DESC), or perf's name for its type. */
static const char *given_name(const struct perf_attr *a)
{
    return a->name && *a->name ? a->name : derived_name(a->type, a->config);
}

/* True when another attr's name shares the first len bytes of attr i's. */
static bool base_shared(const struct perf_file *f, size_t i, size_t len)
{
    for (size_t k = 0; k < f->nattrs; k++) {
        const char *other = k == i ? NULL : given_name(&f->attrs[k]);
        if (other && !strncmp(other, given_name(&f->attrs[i]), len) &&
            (other[len] == ':' || !other[len]))
            return true;
    }
    return false;
}

const char *perf_event_name(const struct perf_file *f, size_t i, char *buf, size_t n)
{
    const char *name = given_name(&f->attrs[i]);
    if (!name) {
        snprintf(buf, n, "event_%zu", i);
        return buf;
    }
    /* "cpu-clock:ppp" is cpu-clock unless another event is cpu-clock too. */
    const char *colon = strchr(name, ':');
    if (colon && colon != name && !base_shared(f, i, (size_t)(colon - name))) {
        snprintf(buf, n, "%.*s", (int)(colon - name), name);
        return buf;
    }
    return name;
}

/* Reads a perf_event_attr of at most avail bytes at p into a. */
static bool read_attr(const struct perf_file *f, const uint8_t *p, size_t avail,
                      struct perf_attr *a, uint64_t off, char *err, size_t errlen)
{
    if (avail < 8)
        return perf_fail(err, errlen, off, "attr truncated");
    uint32_t size = perf_u32(f, p + 4);
    if (size == 0)
        size = 64;   /* VER0 writers left it 0 */
    if (size < 64 || size > avail)
        return perf_fail(err, errlen, off, "attr size %u does not fit (%zu bytes left)", size, avail);
    uint8_t buf[ATTR_KNOWN_SIZE] = {0};
    memcpy(buf, p, size < sizeof(buf) ? size : sizeof(buf));
    a->type = perf_u32(f, buf);
    a->config = perf_u64(f, buf + 8);
    a->sample_period = perf_u64(f, buf + 16);
    a->sample_type = perf_u64(f, buf + 24);
    a->read_format = perf_u64(f, buf + 32);
    a->flags = perf_u64(f, buf + 40);
    a->branch_sample_type = perf_u64(f, buf + 72);
    a->sample_regs_user = perf_u64(f, buf + 80);
    a->sample_regs_intr = perf_u64(f, buf + 96);
    return true;
}

static struct perf_attr *add_attr(struct perf_file *f)
{
    struct perf_attr *n = realloc(f->attrs, (f->nattrs + 1) * sizeof(*n));
    if (!n)
        abort();
    f->attrs = n;
    memset(&f->attrs[f->nattrs], 0, sizeof(*n));
    return &f->attrs[f->nattrs++];
}

/* Sets the ids of a new attr a and indexes them. */
static void set_ids(struct perf_file *f, struct perf_attr *a, const uint8_t *p, size_t n)
{
    a->ids = calloc(n ? n : 1, sizeof(*a->ids));
    if (!a->ids)
        abort();
    for (size_t i = 0; i < n; i++) {
        a->ids[i] = perf_u64(f, p + 8 * i);
        index_add(&f->attr_by_id, hash_mix(0, a->ids[i]), (uint32_t)(a - f->attrs));
    }
    a->nids = n;
}

struct id_key {
    const struct perf_file *f;
    uint64_t id;
};

static bool has_id(void *arg, uint32_t pos)
{
    const struct id_key *k = arg;
    const struct perf_attr *a = &k->f->attrs[pos];
    for (size_t i = 0; i < a->nids; i++)
        if (a->ids[i] == k->id)
            return true;
    return false;
}

const struct perf_attr *perf_attr_by_id(const struct perf_file *f, uint64_t id)
{
    struct id_key k = {f, id};
    int64_t at = index_find(&f->attr_by_id, hash_mix(0, id), has_id, &k);
    return at >= 0 ? &f->attrs[at] : NULL;
}

static bool read_attrs_section(struct perf_file *f, uint64_t off, uint64_t size,
                               uint64_t entry_size, char *err, size_t errlen)
{
    if (!fits(off, size, f->len))
        return perf_fail(err, errlen, 16, "attrs section [%llu, +%llu) runs past the end (%zu bytes)",
                    (unsigned long long)off, (unsigned long long)size, f->len);
    if (entry_size < 64 + 16)
        return perf_fail(err, errlen, 16, "attr_size %llu is too small",
                    (unsigned long long)entry_size);
    for (uint64_t at = off; at + entry_size <= off + size; at += entry_size) {
        struct perf_attr *a = add_attr(f);
        if (!read_attr(f, f->data + at, entry_size - 16, a, at, err, errlen))
            return false;
        uint64_t ids_off = perf_u64(f, f->data + at + entry_size - 16);
        uint64_t ids_size = perf_u64(f, f->data + at + entry_size - 8);
        if (!fits(ids_off, ids_size, f->len))
            return perf_fail(err, errlen, at + entry_size - 16, "attr ids run past the end");
        set_ids(f, a, f->data + ids_off, ids_size / 8);
    }
    return true;
}

/* ---- features ---- */

/* Reads a perf_header_string at *p (advancing it) into a new C string. */
static char *read_string(const struct perf_file *f, const uint8_t **p, const uint8_t *end)
{
    if (end - *p < 4)
        return NULL;
    uint32_t n = perf_u32(f, *p);
    if ((size_t)(end - *p - 4) < n)
        return NULL;
    const char *s = (const char *)*p + 4;
    *p += 4 + n;
    return strndup(s, n);   /* stops at the first NUL of the padding */
}

static void set_string(char **dst, char *s)
{
    if (s) {
        free(*dst);
        *dst = s;
    }
}

void perf_build_id_hex(const uint8_t *id, size_t n, char out[41], bool trim)
{
    if (n > 20)
        n = 20;
    while (trim && n >= 4 && !memcmp(id + n - 4, "\0\0\0\0", 4))
        n -= 4;
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", id[i]);
    out[2 * n] = 0;
}

/* One build_id record at p (len bytes, header included). */
static void add_build_id(struct perf_file *f, const uint8_t *p, size_t len)
{
    if (len < 8 + 4 + 24)
        return;
    uint16_t misc = perf_u16(f, p + 4);
    struct perf_meta *m = &f->meta;
    struct perf_build_id *n = realloc(m->build_ids, (m->nbuild_ids + 1) * sizeof(*n));
    if (!n)
        abort();
    m->build_ids = n;
    struct perf_build_id *b = &m->build_ids[m->nbuild_ids++];
    b->pid = (int32_t)perf_u32(f, p + 8);
    b->cpumode = misc & 7;
    size_t idlen = (misc & 0x8000) ? p[12 + 20] : 20;
    perf_build_id_hex(p + 12, idlen, b->hex, !(misc & 0x8000));
    b->filename = strndup((const char *)p + 36, len - 36);
}

static void read_event_desc(struct perf_file *f, const uint8_t *p, const uint8_t *end)
{
    if (end - p < 8)
        return;
    uint32_t nr = perf_u32(f, p), attr_size = perf_u32(f, p + 4);
    p += 8;
    for (uint32_t i = 0; i < nr; i++) {
        if ((size_t)(end - p) < (size_t)attr_size + 4)
            return;
        struct perf_attr a = {0};
        char ignored[8];
        if (!read_attr(f, p, attr_size, &a, 0, ignored, sizeof(ignored)))
            return;
        p += attr_size;
        uint32_t nids = perf_u32(f, p);
        p += 4;
        char *name = read_string(f, &p, end);
        if (!name || (size_t)(end - p) / 8 < nids) {
            free(name);
            return;
        }
        /* Name the attr with the same ids (or, without ids, the same position). */
        const struct perf_attr *known = nids ? perf_attr_by_id(f, perf_u64(f, p)) : NULL;
        struct perf_attr *match = known ? &f->attrs[known - f->attrs] : NULL;
        if (!match && i < f->nattrs)
            match = &f->attrs[i];
        if (match)
            set_string(&match->name, name);
        else
            free(name);
        p += 8 * (size_t)nids;
    }
}

static void read_feature(struct perf_file *f, int bit, const uint8_t *p, const uint8_t *end)
{
    struct perf_meta *m = &f->meta;
    const uint8_t *q = p;
    switch (bit) {
    case FEAT_HOSTNAME:
        set_string(&m->hostname, read_string(f, &q, end));
        break;
    case FEAT_OSRELEASE:
        set_string(&m->osrelease, read_string(f, &q, end));
        break;
    case FEAT_VERSION:
        set_string(&m->version, read_string(f, &q, end));
        break;
    case FEAT_ARCH:
        set_string(&m->arch, read_string(f, &q, end));
        break;
    case FEAT_NRCPUS:
        if (end - p >= 8) {
            m->nrcpus_available = perf_u32(f, p);
            m->nrcpus_online = perf_u32(f, p + 4);
        }
        break;
    case FEAT_CMDLINE: {
        if (end - p < 4)
            break;
        uint32_t nr = perf_u32(f, p);
        q = p + 4;
        size_t len = 0;
        char *line = NULL;
        for (uint32_t i = 0; i < nr; i++) {
            char *arg = read_string(f, &q, end);
            if (!arg)
                break;
            size_t n = strlen(arg);
            char *grown = realloc(line, len + n + 2);
            if (!grown)
                abort();
            line = grown;
            if (len)
                line[len++] = ' ';
            memcpy(line + len, arg, n + 1);
            len += n;
            free(arg);
        }
        set_string(&m->cmdline, line);
        break;
    }
    case FEAT_EVENT_DESC:
        read_event_desc(f, p, end);
        break;
    case FEAT_BUILD_ID:
        while (end - q >= 8) {
            uint16_t size = perf_u16(f, q + 6);
            if (size < 8 || size > end - q)
                break;
            add_build_id(f, q, size);
            q += size;
        }
        break;
    case FEAT_SAMPLE_TIME:
        if (end - p >= 16) {
            m->sample_time_first = perf_u64(f, p);
            m->sample_time_last = perf_u64(f, p + 8);
        }
        break;
    case FEAT_CLOCK_DATA:
        if (end - p >= 24 && perf_u32(f, p) >= 1) {
            m->clock_wall_ns = perf_u64(f, p + 8);
            m->clock_ref_ns = perf_u64(f, p + 16);
        }
        break;
    }
}

static bool read_features(struct perf_file *f, const uint8_t *bitmap, char *err, size_t errlen)
{
    uint64_t words[4];
    for (int i = 0; i < 4; i++)
        words[i] = perf_u64(f, bitmap + 8 * i);
    if (f->swap && !(words[0] & (1ull << FEAT_HOSTNAME))) {
        /* Written as 32-bit longs: swap those instead. */
        for (int i = 0; i < 4; i++) {
            uint64_t raw;
            memcpy(&raw, bitmap + 8 * i, 8);
            uint32_t lo = __builtin_bswap32((uint32_t)raw), hi = __builtin_bswap32((uint32_t)(raw >> 32));
            words[i] = (uint64_t)hi << 32 | lo;
        }
    }
    uint64_t table = f->end;   /* right after the data section */
    for (int bit = 1; bit < FEAT_BITS; bit++) {
        if (!(words[bit / 64] >> (bit % 64) & 1))
            continue;
        if (!fits(table, 16, f->len))
            return perf_fail(err, errlen, table, "feature table runs past the end");
        uint64_t off = perf_u64(f, f->data + table), size = perf_u64(f, f->data + table + 8);
        table += 16;
        if (!fits(off, size, f->len))
            return perf_fail(err, errlen, table - 16, "feature %d section runs past the end", bit);
        read_feature(f, bit, f->data + off, f->data + off + size);
    }
    return true;
}

/* ---- open ---- */

/* Checks the magic at the start of data and sets the byte order. */
static bool read_magic(struct perf_file *f, const uint8_t *data, char *err, size_t errlen)
{
    uint64_t magic;
    memcpy(&magic, data, 8);
    if (magic == __builtin_bswap64(PERF_MAGIC))
        f->swap = true;
    else if (magic != PERF_MAGIC)
        return perf_fail(err, errlen, 0, "not a perf.data file (bad magic)");
    return true;
}

int perf_open(struct perf_file *f, const uint8_t *data, size_t len, char *err, size_t errlen)
{
    memset(f, 0, sizeof(*f));
    f->data = data;
    f->len = len;
    if (len < PIPE_HEADER_SIZE)
        return perf_fail(err, errlen, 0, "too short for a perf.data header (%zu bytes)", len), -1;
    if (!read_magic(f, data, err, errlen))
        return -1;
    uint64_t hsize = perf_u64(f, data + 8);
    if (hsize == PIPE_HEADER_SIZE) {
        f->pipe = true;
        f->pos = PIPE_HEADER_SIZE;
        f->end = len;
        return 0;
    }
    if (hsize != FILE_HEADER_SIZE || len < FILE_HEADER_SIZE)
        return perf_fail(err, errlen, 8, "unsupported header size %llu", (unsigned long long)hsize),
               -1;
    uint64_t attr_size = perf_u64(f, data + 16);
    uint64_t data_off = perf_u64(f, data + 40), data_size = perf_u64(f, data + 48);
    if (!fits(data_off, data_size, len))
        return perf_fail(err, errlen, 40, "data section [%llu, +%llu) runs past the end (%zu bytes)",
                    (unsigned long long)data_off, (unsigned long long)data_size, len),
               -1;
    f->pos = data_off;
    f->end = data_off + data_size;
    if (!read_attrs_section(f, perf_u64(f, data + 24), perf_u64(f, data + 32), attr_size, err,
                            errlen) ||
        !read_features(f, data + 72, err, errlen))
        return -1;
    return 0;
}

void perf_open_stream(struct perf_file *f)
{
    memset(f, 0, sizeof(*f));
    f->pipe = f->stream = true;
}

void perf_feed(struct perf_file *f, const uint8_t *bytes, size_t n)
{
    if (f->pos) {   /* drop what has been read */
        memmove(f->buf, f->buf + f->pos, f->len - f->pos);
        f->discarded += f->pos;
        f->len -= f->pos;
        f->pos = 0;
    }
    f->buf = grow_array(f->buf, &f->buf_cap, f->len + n, 1);
    memcpy(f->buf + f->len, bytes, n);
    f->len += n;
    f->end = f->len;
    f->data = f->buf;
}

void perf_end_stream(struct perf_file *f)
{
    f->ended = true;
}

/* A stream's pipe header, once its 16 bytes have arrived: 1 read, 0 more
 * bytes needed, -1 bad. */
static int read_stream_header(struct perf_file *f, char *err, size_t errlen)
{
    if (f->len < PIPE_HEADER_SIZE)
        return 0;
    if (!read_magic(f, f->data, err, errlen))
        return -1;
    uint64_t hsize = perf_u64(f, f->data + 8);
    if (hsize != PIPE_HEADER_SIZE)
        return perf_fail(err, errlen, 8, "a stream must be in pipe mode (perf record -o -), "
                         "not a file-mode header of %llu bytes", (unsigned long long)hsize), -1;
    f->pos = PIPE_HEADER_SIZE;
    f->header_read = true;
    return 1;
}

/* ---- records ---- */

const struct perf_attr *perf_sample_attr(const struct perf_file *f, const struct perf_record *r)
{
    if (f->nattrs == 1)
        return &f->attrs[0];
    if (!f->nattrs)
        return NULL;
    uint64_t st = f->attrs[0].sample_type;
    size_t at;
    if (st & PERF_SAMPLE_IDENTIFIER)
        at = 0;
    else if (st & PERF_SAMPLE_ID)
        at = 8 * (!!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) +
                  !!(st & PERF_SAMPLE_ADDR));
    else
        return NULL;
    if (r->len < at + 8)
        return NULL;
    return perf_attr_by_id(f, perf_u64(f, r->body + at));
}

uint64_t perf_record_time(const struct perf_file *f, const struct perf_record *r)
{
    if (r->type == PERF_RECORD_SAMPLE) {
        const struct perf_attr *a = perf_sample_attr(f, r);
        if (!a || !(a->sample_type & PERF_SAMPLE_TIME))
            return PERF_NO_TIME;
        uint64_t st = a->sample_type;
        size_t at = 8 * (!!(st & PERF_SAMPLE_IDENTIFIER) + !!(st & PERF_SAMPLE_IP) +
                         !!(st & PERF_SAMPLE_TID));
        return r->len >= at + 8 ? perf_u64(f, r->body + at) : PERF_NO_TIME;
    }
    if (r->type >= 64 || !f->nattrs || !(f->attrs[0].flags & PERF_ATTR_FLAG_SAMPLE_ID_ALL))
        return PERF_NO_TIME;
    /* The trailer ends with [time] [id] [stream_id] [cpu, res] [identifier]. */
    const struct perf_attr *a = &f->attrs[0];
    if ((a->sample_type & PERF_SAMPLE_IDENTIFIER) && r->len >= 8) {
        const struct perf_attr *by_id = perf_attr_by_id(f, perf_u64(f, r->body + r->len - 8));
        if (by_id)
            a = by_id;
    }
    uint64_t st = a->sample_type;
    if (!(st & PERF_SAMPLE_TIME))
        return PERF_NO_TIME;
    size_t back = 8 * (1 + !!(st & PERF_SAMPLE_ID) + !!(st & PERF_SAMPLE_STREAM_ID) +
                       !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_IDENTIFIER));
    return r->len >= back ? perf_u64(f, r->body + r->len - back) : PERF_NO_TIME;
}

/* Decompresses a COMPRESSED record's zstd data into f->inflated. */
static bool inflate(struct perf_file *f, const uint8_t *p, size_t n, uint64_t off, char *err,
                    size_t errlen)
{
    if (!f->zstd && !(f->zstd = ZSTD_createDCtx()))
        abort();
    ZSTD_inBuffer in = {p, n, 0};
    f->inflated_len = f->inflated_pos = 0;
    size_t cap = 0;
    while (in.pos < in.size) {
        if (f->inflated_len == cap) {
            cap = cap ? cap * 2 : (n * 8 > 65536 ? n * 8 : 65536);
            if (cap > MAX_INFLATED)
                return perf_fail(err, errlen, off, "compressed records inflate past %u bytes",
                            MAX_INFLATED);
            uint8_t *grown = realloc(f->inflated, cap);
            if (!grown)
                abort();
            f->inflated = grown;
        }
        ZSTD_outBuffer out = {f->inflated, cap, f->inflated_len};
        size_t rc = ZSTD_decompressStream(f->zstd, &out, &in);
        if (ZSTD_isError(rc))
            return perf_fail(err, errlen, off, "zstd: %s", ZSTD_getErrorName(rc));
        if (out.pos == f->inflated_len && in.pos < in.size && out.pos < cap)
            return perf_fail(err, errlen, off, "zstd made no progress");
        f->inflated_len = out.pos;
    }
    f->inflated_at = off;
    return true;
}

/* Bytes that follow a record outside its size: TRACING_DATA and AUXTRACE
 * carry their payload after the record. */
static uint64_t payload_after(const struct perf_file *f, uint32_t type, const uint8_t *body,
                              size_t len)
{
    if (type == USER_HEADER_TRACING_DATA && len >= 4)
        return ((uint64_t)perf_u32(f, body) + 7) & ~7ull;
    if (type == USER_AUXTRACE && len >= 8)
        return perf_u64(f, body);
    return 0;
}

/* Handles a record that describes the recording. False on malformed input. */
static bool consume_user_record(struct perf_file *f, uint32_t type, const uint8_t *rec, size_t size,
                                uint64_t off, char *err, size_t errlen)
{
    const uint8_t *body = rec + 8;
    size_t len = size - 8;
    switch (type) {
    case USER_HEADER_ATTR: {
        struct perf_attr *a = add_attr(f);
        if (!read_attr(f, body, len, a, off + 8, err, errlen))
            return false;
        uint32_t asize = perf_u32(f, body + 4) ? perf_u32(f, body + 4) : 64;
        set_ids(f, a, body + asize, (len - asize) / 8);
        return true;
    }
    case USER_HEADER_FEATURE:
        if (len >= 8)
            read_feature(f, (int)perf_u64(f, body), body + 8, body + len);
        return true;
    case USER_HEADER_BUILD_ID:
        add_build_id(f, rec, size);
        return true;
    case USER_COMPRESSED:
        if (f->inflated_pos < f->inflated_len)
            return perf_fail(err, errlen, off, "COMPRESSED record inside compressed data");
        return inflate(f, body, len, off, err, errlen);
    case USER_COMPRESSED2: {
        if (len < 8)
            return perf_fail(err, errlen, off, "COMPRESSED2 record too short");
        uint64_t n = perf_u64(f, body);
        if (n > len - 8)
            return perf_fail(err, errlen, off, "COMPRESSED2 data size %llu runs past the record",
                        (unsigned long long)n);
        if (f->inflated_pos < f->inflated_len)
            return perf_fail(err, errlen, off, "COMPRESSED2 record inside compressed data");
        return inflate(f, body + 8, n, off, err, errlen);
    }
    default:   /* ID_INDEX, TIME_CONV, FINISHED_INIT, TRACING_DATA, AUXTRACE, unknown */
        return true;
    }
}

int perf_next(struct perf_file *f, struct perf_record *r, char *err, size_t errlen)
{
    if (f->stream && !f->header_read) {
        int rc = read_stream_header(f, err, errlen);
        if (rc == 0 && f->ended)
            return perf_fail(err, errlen, 0, "stream ended inside its header (%zu bytes)", f->len), -1;
        if (rc <= 0)
            return rc < 0 ? -1 : PERF_MORE;
    }
    for (;;) {
        const uint8_t *rec;
        size_t avail;
        uint64_t off;
        bool inflated = f->inflated_pos < f->inflated_len;
        bool more_may_come = f->stream && !f->ended && !inflated;
        if (inflated) {
            rec = f->inflated + f->inflated_pos;
            avail = f->inflated_len - f->inflated_pos;
            off = f->inflated_at;
        } else {
            if (f->pos >= f->end)
                return more_may_come ? PERF_MORE : 0;
            rec = f->data + f->pos;
            avail = f->end - f->pos;
            off = f->discarded + f->pos;
        }
        if (avail < 8) {
            if (more_may_come)
                return PERF_MORE;
            return perf_fail(err, errlen, off, "record header truncated (%zu bytes left)", avail), -1;
        }
        uint32_t type = perf_u32(f, rec);
        uint16_t misc = perf_u16(f, rec + 4), size = perf_u16(f, rec + 6);
        if (size < 8)
            return perf_fail(err, errlen, off, "record of type %u has size %u", type, size), -1;
        uint64_t extra = size <= avail ? payload_after(f, type, rec + 8, size - 8u) : 0;
        if (size > avail || extra > avail - size) {
            if (more_may_come)
                return PERF_MORE;
            if (size > avail)
                return perf_fail(err, errlen, off, "record of type %u (%u bytes) runs past its "
                                 "section (%zu bytes left)", type, size, avail), -1;
            return perf_fail(err, errlen, off, "payload of record type %u runs past the end", type),
                   -1;
        }
        if (inflated)
            f->inflated_pos += size + extra;
        else
            f->pos += size + extra;
        if (type >= 64 && type != PERF_RECORD_FINISHED_ROUND) {
            if (!consume_user_record(f, type, rec, size, off, err, errlen))
                return -1;
            continue;
        }
        *r = (struct perf_record){type, misc, rec + 8, size - 8u, off};
        return 1;
    }
}

void perf_close(struct perf_file *f)
{
    for (size_t i = 0; i < f->nattrs; i++) {
        free(f->attrs[i].name);
        free(f->attrs[i].ids);
    }
    free(f->attrs);
    index_clear(&f->attr_by_id);
    struct perf_meta *m = &f->meta;
    free(m->hostname);
    free(m->osrelease);
    free(m->arch);
    free(m->version);
    free(m->cmdline);
    for (size_t i = 0; i < m->nbuild_ids; i++)
        free(m->build_ids[i].filename);
    free(m->build_ids);
    free(f->inflated);
    free(f->buf);
    ZSTD_freeDCtx(f->zstd);
    memset(f, 0, sizeof(*f));
}
