// SPDX-License-Identifier: Apache-2.0
/*
 * perf.data reader: the file header, attrs with their ids, the feature
 * sections, and the record stream, in file mode and pipe mode, in either
 * byte order. Records that describe the recording itself (HEADER_ATTR,
 * HEADER_FEATURE, HEADER_BUILD_ID, ID_INDEX, COMPRESSED, ...) are consumed
 * here; perf_next hands out the others (MMAP, COMM, SAMPLE, ...) with their
 * fixed fields in host byte order.
 *
 * Every read is bounds-checked; errors name the byte offset in the input.
 */
#ifndef PROFD_PERF_FILE_H
#define PROFD_PERF_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "index.h"

enum {
    PERF_RECORD_MMAP = 1,
    PERF_RECORD_LOST = 2,
    PERF_RECORD_COMM = 3,
    PERF_RECORD_EXIT = 4,
    PERF_RECORD_FORK = 7,
    PERF_RECORD_SAMPLE = 9,
    PERF_RECORD_MMAP2 = 10,
    PERF_RECORD_LOST_SAMPLES = 13,
    PERF_RECORD_KSYMBOL = 17,
    PERF_RECORD_FINISHED_ROUND = 68,   /* handed out for time ordering */
};

#define PERF_NO_TIME UINT64_MAX

/* sample_type bits */
enum {
    PERF_SAMPLE_IP = 1u << 0,
    PERF_SAMPLE_TID = 1u << 1,
    PERF_SAMPLE_TIME = 1u << 2,
    PERF_SAMPLE_ADDR = 1u << 3,
    PERF_SAMPLE_READ = 1u << 4,
    PERF_SAMPLE_CALLCHAIN = 1u << 5,
    PERF_SAMPLE_ID = 1u << 6,
    PERF_SAMPLE_CPU = 1u << 7,
    PERF_SAMPLE_PERIOD = 1u << 8,
    PERF_SAMPLE_STREAM_ID = 1u << 9,
    PERF_SAMPLE_RAW = 1u << 10,
    PERF_SAMPLE_BRANCH_STACK = 1u << 11,
    PERF_SAMPLE_REGS_USER = 1u << 12,
    PERF_SAMPLE_STACK_USER = 1u << 13,
    PERF_SAMPLE_WEIGHT = 1u << 14,
    PERF_SAMPLE_DATA_SRC = 1u << 15,
    PERF_SAMPLE_IDENTIFIER = 1u << 16,
    PERF_SAMPLE_TRANSACTION = 1u << 17,
    PERF_SAMPLE_REGS_INTR = 1u << 18,
    PERF_SAMPLE_PHYS_ADDR = 1u << 19,
    PERF_SAMPLE_AUX = 1u << 20,
    PERF_SAMPLE_CGROUP = 1u << 21,
    PERF_SAMPLE_DATA_PAGE_SIZE = 1u << 22,
    PERF_SAMPLE_CODE_PAGE_SIZE = 1u << 23,
    PERF_SAMPLE_WEIGHT_STRUCT = 1u << 24,
};

/* branch_sample_type bits that change a sample's layout */
#define PERF_BRANCH_HW_INDEX (1ull << 17)
#define PERF_BRANCH_COUNTERS (1ull << 19)

/* One event of the recording. */
struct perf_attr {
    uint32_t type;
    uint64_t config, sample_period, sample_type, read_format, flags;
    uint64_t branch_sample_type, sample_regs_user, sample_regs_intr;
    char *name;            /* from EVENT_DESC, else a name derived from type/config */
    uint64_t *ids;
    size_t nids;
};

#define PERF_ATTR_FLAG_FREQ (1ull << 10)
#define PERF_ATTR_FLAG_SAMPLE_ID_ALL (1ull << 18)

/* A build-id known from the BUILD_ID feature or HEADER_BUILD_ID records. */
struct perf_build_id {
    int32_t pid;
    uint8_t cpumode;
    char hex[41];          /* lowercase, trailing zero 4-byte groups trimmed */
    char *filename;
};

/* What the header and the features say about the recording. */
struct perf_meta {
    char *hostname, *osrelease, *arch, *version, *cmdline;
    uint32_t nrcpus_online, nrcpus_available;
    struct perf_build_id *build_ids;
    size_t nbuild_ids;
    uint64_t sample_time_first, sample_time_last;   /* SAMPLE_TIME feature, or 0 */
    uint64_t clock_wall_ns, clock_ref_ns;   /* CLOCK_DATA: one instant on both clocks, or 0 */
};

/* One record handed out by perf_next. body points after the 8-byte header;
 * multi-byte fields are in the input's byte order (use perf_u32/perf_u64). */
struct perf_record {
    uint32_t type;
    uint16_t misc;
    const uint8_t *body;
    size_t len;            /* bytes after the header */
    uint64_t offset;       /* of the record in the input (in a COMPRESSED
                            * record's data: of that COMPRESSED record) */
};

struct perf_file {
    const uint8_t *data;
    size_t len;
    bool swap;             /* the input is of the other byte order */
    bool pipe;
    struct perf_attr *attrs;
    size_t nattrs;
    struct index attr_by_id;   /* event id -> attr position */
    struct perf_meta meta;

    size_t pos, end;       /* record stream cursor */
    bool stream;           /* data arrives through perf_feed */
    bool header_read, ended;
    uint8_t *buf;          /* a stream's unread bytes (data points here) */
    size_t buf_cap;
    uint64_t discarded;    /* bytes of a stream dropped before buf */
    uint8_t *inflated;     /* records of the COMPRESSED record being read */
    size_t inflated_len, inflated_pos;
    uint64_t inflated_at;  /* offset of that COMPRESSED record */
    void *zstd;            /* ZSTD_DCtx, created on the first COMPRESSED record */
};

/*
 * Opens perf.data held in data[len] (kept by the caller until perf_close):
 * reads the header, attrs and features (file mode). Returns 0, or -1 with
 * err naming the problem and its byte offset.
 */
int perf_open(struct perf_file *f, const uint8_t *data, size_t len, char *err, size_t errlen);
/* Starts reading a pipe-mode stream whose bytes come through perf_feed. */
void perf_open_stream(struct perf_file *f);
/* Appends n bytes of a stream. Records handed out before are invalidated. */
void perf_feed(struct perf_file *f, const uint8_t *bytes, size_t n);
/* Marks a stream's end: the bytes left must now be whole records. */
void perf_end_stream(struct perf_file *f);

#define PERF_MORE 2
/*
 * Reads the next record the caller should see. Returns 1 with *r filled, 0
 * at the end of the input, PERF_MORE when a stream needs more bytes (feed
 * them and call again), -1 with err on malformed input.
 */
int perf_next(struct perf_file *f, struct perf_record *r, char *err, size_t errlen);
/* Frees what perf_open and perf_next allocated. */
void perf_close(struct perf_file *f);

/* Reads a field of the input at p, in host byte order. */
static inline uint16_t perf_u16(const struct perf_file *f, const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return f->swap ? __builtin_bswap16(v) : v;
}

static inline uint32_t perf_u32(const struct perf_file *f, const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return f->swap ? __builtin_bswap32(v) : v;
}

static inline uint64_t perf_u64(const struct perf_file *f, const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return f->swap ? __builtin_bswap64(v) : v;
}

/* The event name of attr number i: from EVENT_DESC, else the name perf
 * gives its type and config, else event_<i>; modifiers (":ppp") are left
 * out unless another event has the same base name. Writes into buf when
 * needed. */
const char *perf_event_name(const struct perf_file *f, size_t i, char *buf, size_t n);

/* n (at most 20) build-id bytes as lowercase hex into out; with trim, the
 * trailing all-zero 4-byte groups of a 20-byte slot are left out. */
void perf_build_id_hex(const uint8_t *id, size_t n, char out[41], bool trim);

/* The attr whose ids include id, or NULL. */
const struct perf_attr *perf_attr_by_id(const struct perf_file *f, uint64_t id);
/* The attr a SAMPLE record belongs to (by IDENTIFIER or the ID position
 * rule; the only attr when there is one), or NULL. */
const struct perf_attr *perf_sample_attr(const struct perf_file *f, const struct perf_record *r);
/* The timestamp of r: a sample's TIME field, or the sample_id trailer of
 * other records when the attrs have sample_id_all. PERF_NO_TIME if none. */
uint64_t perf_record_time(const struct perf_file *f, const struct perf_record *r);

#endif
