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
    FEAT_BITS = 256,
};

enum {
    USER_HEADER_ATTR = 64,
    USER_HEADER_EVENT_TYPE = 65,
    USER_HEADER_TRACING_DATA = 66,
    USER_HEADER_BUILD_ID = 67,
    USER_FINISHED_ROUND = 68,
    USER_ID_INDEX = 69,
    USER_AUXTRACE = 71,
    USER_HEADER_FEATURE = 80,
    USER_COMPRESSED = 81,
    USER_COMPRESSED2 = 83,
};

uint16_t perf_u16(const struct perf_file *f, const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return f->swap ? __builtin_bswap16(v) : v;
}

uint32_t perf_u32(const struct perf_file *f, const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return f->swap ? __builtin_bswap32(v) : v;
}

uint64_t perf_u64(const struct perf_file *f, const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return f->swap ? __builtin_bswap64(v) : v;
}

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

const char *perf_event_name(const struct perf_file *f, size_t i, char *buf, size_t n)
{
    const struct perf_attr *a = &f->attrs[i];
    const char *derived = derived_name(a->type, a->config);
    if (a->name && *a->name)
        return a->name;
    if (derived)
        return derived;
    snprintf(buf, n, "event_%zu", i);
    return buf;
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
        index_add(&f->attr_by_id, index_mix(0, a->ids[i]), (uint32_t)(a - f->attrs));
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
    int64_t at = index_find(&f->attr_by_id, index_mix(0, id), has_id, &k);
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
        if ((size_t)(end - p) < attr_size + 4)
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

int perf_open(struct perf_file *f, const uint8_t *data, size_t len, char *err, size_t errlen)
{
    memset(f, 0, sizeof(*f));
    f->data = data;
    f->len = len;
    if (len < PIPE_HEADER_SIZE)
        return perf_fail(err, errlen, 0, "too short for a perf.data header (%zu bytes)", len), -1;
    uint64_t magic;
    memcpy(&magic, data, 8);
    if (magic == __builtin_bswap64(PERF_MAGIC))
        f->swap = true;
    else if (magic != PERF_MAGIC)
        return perf_fail(err, errlen, 0, "not a perf.data file (bad magic)"), -1;
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

/* ---- records ---- */

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

/* Handles a record that describes the recording. False on malformed input. */
static bool consume_user_record(struct perf_file *f, uint32_t type, const uint8_t *rec, size_t size,
                                uint64_t off, size_t *skip_extra, char *err, size_t errlen)
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
    case USER_HEADER_TRACING_DATA:
        if (len >= 4)
            *skip_extra = (perf_u32(f, body) + 7u) & ~7u;
        return true;
    case USER_AUXTRACE:
        if (len >= 8)
            *skip_extra = perf_u64(f, body);
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
    default:   /* FINISHED_ROUND, ID_INDEX, TIME_CONV, FINISHED_INIT, unknown: nothing needed */
        return true;
    }
}

int perf_next(struct perf_file *f, struct perf_record *r, char *err, size_t errlen)
{
    for (;;) {
        const uint8_t *rec;
        size_t avail;
        uint64_t off;
        bool inflated = f->inflated_pos < f->inflated_len;
        if (inflated) {
            rec = f->inflated + f->inflated_pos;
            avail = f->inflated_len - f->inflated_pos;
            off = f->inflated_at;
        } else {
            if (f->pos >= f->end)
                return 0;
            rec = f->data + f->pos;
            avail = f->end - f->pos;
            off = f->pos;
        }
        if (avail < 8)
            return perf_fail(err, errlen, off, "record header truncated (%zu bytes left)", avail), -1;
        uint32_t type = perf_u32(f, rec);
        uint16_t misc = perf_u16(f, rec + 4), size = perf_u16(f, rec + 6);
        if (size < 8)
            return perf_fail(err, errlen, off, "record of type %u has size %u", type, size), -1;
        if (size > avail)
            return perf_fail(err, errlen, off, "record of type %u (%u bytes) runs past its section "
                        "(%zu bytes left)", type, size, avail), -1;
        size_t extra = 0;
        if (inflated)
            f->inflated_pos += size;
        else
            f->pos += size;
        if (type >= 64) {
            if (!consume_user_record(f, type, rec, size, off, &extra, err, errlen))
                return -1;
            if (extra) {
                if (inflated || extra > f->end - f->pos)
                    return perf_fail(err, errlen, off, "payload of record type %u runs past the end",
                                type), -1;
                f->pos += extra;
            }
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
    ZSTD_freeDCtx(f->zstd);
    memset(f, 0, sizeof(*f));
}
