// SPDX-License-Identifier: Apache-2.0
/*
 * A quick proof that a raw pprof profile is valid, for receivers that check
 * what they accept without keeping the model: the checks the decoder makes
 * (pprof_decode.c), in two sweeps that store nothing but counts, for the
 * profiles every encoder we know writes, whose ids are their positions + 1.
 * It says yes only when the decoder would accept the profile; anything
 * else (any doubt, ids that are not positions) is left to the decoder,
 * which also says why. It reads every entry, so it reads the fields every
 * encoder writes (one-byte tags, in the usual order) in place and packed
 * location ids eight bytes at a time (64 on CPUs that can, see "Wide
 * reading"); anything else through next().
 */
#include "pprof.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "../lib/pb_reader.h"
#include "pprof_fields.h"

/* A varint field's limit, see within(): no limit, or the entry's id. */
#define ANY UINT64_MAX
#define ID (UINT64_MAX - 1)

/* One field: number, wire type, and its value (varint) or payload
 * (length-delimited). */
struct fld {
    uint64_t number, wire;   /* 64 bits: no store of two halves read back as one */
    uint64_t value;
    struct pb_reader sub;
};

/* The next field of c: 1, 0 at the end, -1 when malformed. */
static inline int next(struct pb_reader *c, struct fld *f)
{
    if (c->p >= c->end)
        return 0;
    uint64_t tag, len;
    if (!pb_varint(c, &tag) || (tag >> 3) == 0 || tag >> 32)
        return -1;
    f->number = (uint32_t)(tag >> 3);
    f->wire = (uint32_t)(tag & 7);
    f->value = 0;
    switch (f->wire) {
    case PB_VARINT:
        return pb_varint(c, &f->value) ? 1 : -1;
    case PB_I64:
    case PB_I32:
        len = f->wire == PB_I64 ? 8 : 4;
        break;
    case PB_LEN:
        if (!pb_varint(c, &len))
            return -1;
        break;
    default:
        return -1;
    }
    if (len > (uint64_t)(c->end - c->p))
        return -1;
    f->sub = (struct pb_reader){c->base, c->p, c->p + len};
    c->p += len;
    return 1;
}

/* Reads a varint field's value (the tag passed already): false when it
 * is malformed or above most (ANY: any value goes). */
static inline bool varint_at_most(struct pb_reader *m, uint64_t most)
{
    uint64_t v = 0;   /* set when read; 0 for compilers that cannot see it */
    return pb_varint(m, &v) && v <= most;
}

/* Whether v keeps to limit: ANY, anything; ID, equal to id; else below
 * limit (no table has UINT64_MAX - 1 entries). */
static inline bool within(uint64_t v, uint64_t limit, uint64_t id)
{
    return limit == ANY || (limit == ID ? v == id : v < limit);
}

/* A message whose fields 1..max (limit has max + 1 entries) are varints
 * keeping to their limits, with its id field when it has one (id != 0). */
static bool varints_within(struct pb_reader m, unsigned max, const uint64_t *limit, uint64_t id)
{
    struct fld f;
    bool id_seen = false;
    while (m.p < m.end) {
        unsigned tag = m.p[0];
        if (tag < 0x80 && (tag & 7) == PB_VARINT && tag >> 3 && tag >> 3 <= max) {
            m.p++;   /* the usual field: a one-byte tag, read here */
            f.number = tag >> 3;
            if (!pb_varint(&m, &f.value))
                return false;
        } else if (next(&m, &f) < 0) {
            return false;
        } else if (f.number > max) {
            continue;
        } else if (f.wire != PB_VARINT) {
            return false;
        }
        if (!within(f.value, limit[f.number], id))
            return false;
        id_seen |= limit[f.number] == ID;
    }
    return id == 0 || id_seen;
}

/* A repeated varint field, packed or not: each value below limit (ANY:
 * any value); *n counts them. */
static bool repeated_within(const struct fld *f, uint64_t limit, uint64_t *n)
{
    if (f->wire == PB_VARINT) {
        (*n)++;
        return within(f->value, limit, 0);
    }
    if (f->wire != PB_LEN)
        return false;
    struct pb_reader c = f->sub;
    uint64_t v;
    while (c.p < c.end) {
        if (!pb_varint(&c, &v) || !within(v, limit, 0))
            return false;
        (*n)++;
    }
    return true;
}

/* Sweep 1: the tables' sizes, the wire types of the top-level fields, one
 * time_nanos at most. */
static bool count(struct pb_reader top, uint64_t *n)
{
    static const uint8_t wire_of[F_LAST_] = {
        [F_SAMPLE_TYPE] = PB_LEN, [F_SAMPLE] = PB_LEN, [F_MAPPING] = PB_LEN,
        [F_LOCATION] = PB_LEN, [F_FUNCTION] = PB_LEN, [F_STRING] = PB_LEN,
        [F_PERIOD_TYPE] = PB_LEN,
    };
    struct fld f;
    int rc;
    while ((rc = next(&top, &f)) > 0) {
        if (f.number >= F_LAST_ || (f.number == F_COMMENT && f.wire == PB_LEN))
            continue;
        if (f.wire != wire_of[f.number] || (f.number == F_TIME && n[F_TIME]))
            return false;
        n[f.number]++;
    }
    return rc == 0 && n[F_STRING] > 0 && n[F_STRING] <= UINT32_MAX && n[F_LOCATION] < UINT32_MAX &&
           n[F_FUNCTION] < UINT32_MAX && n[F_MAPPING] < UINT32_MAX;
}

/* Eight bytes at a time (SWAR) where bytes are little-endian words. */
#define BYTE_ONES 0x0101010101010101ull
#define BYTE_HIGHS 0x8080808080808080ull

/* Of x, bytes below 0x80 each: a high bit in each byte that is k or more
 * (0 <= k <= 128). x | 0x80 is at least k, so no byte borrows from the next. */
static inline uint64_t bytes_at_least(uint64_t x, uint64_t k)
{
    return ((x | BYTE_HIGHS) - k * BYTE_ONES) & BYTE_HIGHS;
}

/* Of x, bytes below 0x80 each: a high bit in each byte that is not 0. */
static inline uint64_t bytes_nonzero(uint64_t x)
{
    return (x + 0x7f * BYTE_ONES) & BYTE_HIGHS;
}

/* What a sample is checked against, made once a profile: the strings its
 * labels may name, its values' count, and its location ids' limits (the
 * word-at-a-time reading's too, see ids_word_sure). */
struct sample_limits {
    uint64_t nstrings;
    uint64_t nvalues;
    uint64_t nlocations;
    uint64_t one_byte_limit;    /* a one-byte id is surely in range below this */
    uint64_t high_byte_limit;   /* a two-byte id is when its high byte is below this */
};

static struct sample_limits sample_limits_of(const uint64_t *n)
{
    uint64_t locs = n[F_LOCATION];
    return (struct sample_limits){
        .nstrings = n[F_STRING],
        .nvalues = n[F_SAMPLE_TYPE],
        .nlocations = locs,
        .one_byte_limit = locs < 127 ? locs + 1 : 128,
        .high_byte_limit = locs < 16383 ? (locs + 1) >> 7 : 128,
    };
}

/* The eight bytes at p, the first the lowest. */
static inline uint64_t load8(const uint8_t *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

/*
 * Whether the packed ids whose bytes are marked so (a mark a byte, the
 * same bit of each byte's mark in every mask) are surely each in
 * 1..nlocations: of one or two bytes, a one-byte id at most nlocations, a
 * two-byte one whose high byte (1 or more) leaves it at most nlocations
 * whatever its low seven bits. more: bytes a next byte follows;
 * after_more: bytes that follow one; last: a varint's last bytes; the
 * others: bytes whose low seven bits are 0, reach one_byte_limit, reach
 * high_byte_limit. Both readings below decide by it.
 */
static inline bool ids_marks_sure(uint64_t more, uint64_t after_more, uint64_t last,
                                  uint64_t zero, uint64_t past_one, uint64_t past_high)
{
    uint64_t single = last & ~after_more, second = last & after_more;
    return !(more & after_more) &&   /* no varint of three bytes or more */
           !(single & (zero | past_one)) && !(second & (zero | past_high));
}

/* ids_marks_sure of eight bytes of packed ids w, a byte's mark its high
 * bit. after marks the byte of w that a byte before w goes on into, or
 * is 0. */
static inline bool ids_word_sure(uint64_t w, uint64_t after, const struct sample_limits *lim)
{
    uint64_t more = w & BYTE_HIGHS, low = w & ~BYTE_HIGHS;
    return ids_marks_sure(more, more << 8 | after, ~w & BYTE_HIGHS,
                          ~bytes_nonzero(low) & BYTE_HIGHS,
                          bytes_at_least(low, lim->one_byte_limit),
                          bytes_at_least(low, lim->high_byte_limit));
}

/*
 * Whether the packed location ids [p, end) of a buffer that starts at base
 * are surely each in 1..nlocations, read eight bytes at a time whatever
 * the varints' lengths, the last word ending at end (and overlapping the
 * one before, or bytes before p, which it reads as ids 1). False leaves
 * them to the exact reading.
 */
static bool location_ids_sure(const uint8_t *base, const uint8_t *p, const uint8_t *end,
                              const struct sample_limits *lim)
{
    if (p == end || end[-1] >= 0x80 || end - base < 8)
        return false;
    uint64_t after = 0;
    for (; end - p > 8; p += 8) {
        uint64_t w = load8(p);
        if (!ids_word_sure(w, after, lim))
            return false;
        after = (w >> 56) & 0x80;
    }
    /* The last word, its first 8 - (end - p) bytes read already or not ids. */
    unsigned seen = (unsigned)(8 - (end - p)) * 8;
    uint64_t seen_mask = seen ? ~0ull >> (64 - seen) : 0;
    uint64_t w = (load8(end - 8) & ~seen_mask) | (BYTE_ONES & seen_mask);
    return ids_word_sure(w, after << seen, lim);
}

/*
 * Wide reading of packed location ids, 64 bytes at a time where the CPU
 * has AVX-512BW and BMI2: ids_marks_sure of 64 bytes, a byte's mark one
 * bit, the last bytes read by a masked load (nothing past end). Long
 * stacks are many bytes of ids: the compiler's CPU profile has 176 KB of
 * them in 421 KB.
 */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define WIDE_IDS

static atomic_bool wide_allowed = true;

void profd_pprof_quick_valid_wide(bool allowed)
{
    atomic_store(&wide_allowed, allowed);
}

/* Whether this CPU reads wide, and it is allowed. */
static bool wide_usable(void)
{
    static atomic_int cpu = -1;   /* every thread that asks finds the same */
    int has = atomic_load_explicit(&cpu, memory_order_relaxed);
    if (has < 0) {
        has = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("bmi2");
        atomic_store_explicit(&cpu, has, memory_order_relaxed);
    }
    return has && atomic_load_explicit(&wide_allowed, memory_order_relaxed);
}

/* location_ids_sure of the packed ids [p, end), 64 bytes at a time. */
__attribute__((target("avx512bw,bmi,bmi2"))) static bool
location_ids_sure_wide(const uint8_t *p, const uint8_t *end, const struct sample_limits *lim)
{
    if (p == end || end[-1] >= 0x80)
        return false;
    const __m512i lows = _mm512_set1_epi8(0x7f);
    const __m512i one_byte_limit = _mm512_set1_epi8((char)lim->one_byte_limit);
    const __m512i high_byte_limit = _mm512_set1_epi8((char)lim->high_byte_limit);
    uint64_t carry = 0;   /* 1 when the last byte read goes on into the next */
    for (size_t at = 0, len = (size_t)(end - p); at < len; at += 64) {
        uint64_t in = _bzhi_u64(~0ull, len - at < 64 ? (unsigned)(len - at) : 64);
        __m512i bytes = _mm512_maskz_loadu_epi8(in, p + at), low = _mm512_and_si512(bytes, lows);
        uint64_t more = _mm512_movepi8_mask(bytes) & in;
        if (!ids_marks_sure(more, (more << 1 | carry) & in, ~more & in,
                            _mm512_cmpeq_epi8_mask(low, _mm512_setzero_si512()),
                            _mm512_cmpge_epu8_mask(low, one_byte_limit),
                            _mm512_cmpge_epu8_mask(low, high_byte_limit)))
            return false;
        carry = more >> 63;
    }
    return true;
}
#else
void profd_pprof_quick_valid_wide(bool allowed)
{
    (void)allowed;
}
#endif

/* Whether the packed location ids of c are surely each in 1..nlocations:
 * read wide where the CPU can, else eight bytes at a time, as are ids of
 * fewer than 16 bytes, which two words take as quickly. */
static bool packed_ids_sure(struct pb_reader c, const struct sample_limits *lim)
{
#ifdef WIDE_IDS
    if (c.end - c.p >= 16 && wide_usable())
        return location_ids_sure_wide(c.p, c.end, lim);
#endif
    return location_ids_sure(c.base, c.p, c.end, lim);
}

/* A sample's location ids, packed or not: each in 1..nlocations. Those
 * surely so are proven many bytes at a time, the rest read one by one. */
static bool location_ids_within(const struct fld *f, const struct sample_limits *lim)
{
    const uint64_t nlocations = lim->nlocations;
    if (f->wire == PB_VARINT)
        return f->value - 1 < nlocations;
    if (f->wire != PB_LEN)
        return false;
    struct pb_reader c = f->sub;
    if (packed_ids_sure(c, lim))
        return true;
    uint64_t v;
    while (c.p < c.end) {
        if (c.p[0] < 0x80) {
            v = c.p[0];
            c.p++;
        } else if (c.end - c.p >= 2 && c.p[1] < 0x80) {
            v = (uint64_t)(c.p[0] & 0x7f) | (uint64_t)c.p[1] << 7;
            c.p += 2;
        } else if (!pb_varint(&c, &v)) {
            return false;
        }
        if (v - 1 >= nlocations)
            return false;
    }
    return true;
}

/* Reads the varint field whose one-byte tag is at m->p: false when it is
 * malformed or above most. */
static inline bool field_at_most(struct pb_reader *m, uint64_t most)
{
    m->p++;
    return varint_at_most(m, most);
}

/* Reads the id field whose one-byte tag is at m->p: false when it is
 * malformed or not id; *seen once it is. */
static inline bool id_field(struct pb_reader *m, uint64_t id, bool *seen)
{
    uint64_t v = 0;   /* as in varint_at_most */
    m->p++;
    *seen = true;
    return pb_varint(m, &v) && v == id;
}

/*
 * Labels, locations, their lines and functions are read field by field in
 * place where a field has the one-byte tag every encoder writes; any other
 * field through next(), and then only one these messages do not define (a
 * field they do, encoded otherwise, is left to the decoder).
 */

/* A sample's label: its key, string value and unit, string indexes; its
 * number. */
static bool label_valid(struct pb_reader m, uint64_t nstrings)
{
    struct fld f;
    bool ok = true;
    while (ok && m.p < m.end) {
        switch (m.p[0]) {
        case 1 << 3 | PB_VARINT:
        case 2 << 3 | PB_VARINT:
        case 4 << 3 | PB_VARINT: ok = field_at_most(&m, nstrings - 1); break;
        case 3 << 3 | PB_VARINT: ok = field_at_most(&m, ANY); break;
        default: ok = next(&m, &f) > 0 && f.number > 4;
        }
    }
    return ok;
}

/* A sample: its location ids, its values (as many as the sample types),
 * its labels. Values not packed, the most common field of many profiles,
 * are passed in place. */
static bool sample_valid(struct pb_reader m, const struct sample_limits *lim)
{
    struct fld f;
    uint64_t nvalues = 0;
    while (m.p < m.end) {
        if (m.p[0] == (2 << 3 | PB_VARINT)) {   /* a value not packed, read here */
            if (!field_at_most(&m, ANY))
                return false;
            nvalues++;
            continue;
        }
        if (next(&m, &f) < 0)
            return false;
        bool ok = f.number == 1   ? location_ids_within(&f, lim)
                  : f.number == 2 ? repeated_within(&f, ANY, &nvalues)
                  : f.number == 3 ? f.wire == PB_LEN && label_valid(f.sub, lim->nstrings)
                                  : true;
        if (!ok)
            return false;
    }
    return nvalues == lim->nvalues;
}

/* A line: its function id, at most the functions' count; its line and
 * column. */
static bool line_valid(struct pb_reader m, uint64_t nfunctions)
{
    struct fld f;
    bool ok = true;
    while (ok && m.p < m.end) {
        switch (m.p[0]) {
        case 1 << 3 | PB_VARINT: ok = field_at_most(&m, nfunctions); break;
        case 2 << 3 | PB_VARINT:
        case 3 << 3 | PB_VARINT: ok = field_at_most(&m, ANY); break;
        default: ok = next(&m, &f) > 0 && f.number > 3;
        }
    }
    return ok;
}

/* A location: its id, which must be id; its mapping id, at most the
 * mappings' count; its address, folded flag and lines. */
static bool location_valid(struct pb_reader m, const uint64_t *n, uint64_t id)
{
    struct fld f;
    bool ok = true, id_seen = false;
    while (ok && m.p < m.end) {
        switch (m.p[0]) {
        case 1 << 3 | PB_VARINT: ok = id_field(&m, id, &id_seen); break;
        case 2 << 3 | PB_VARINT: ok = field_at_most(&m, n[F_MAPPING]); break;
        case 3 << 3 | PB_VARINT:
        case 5 << 3 | PB_VARINT: ok = field_at_most(&m, ANY); break;
        case 4 << 3 | PB_LEN: ok = next(&m, &f) > 0 && line_valid(f.sub, n[F_FUNCTION]); break;
        default: ok = next(&m, &f) > 0 && f.number > 5;
        }
    }
    return ok && id_seen;
}

/* A function: its id, which must be id; its name, system name and file
 * name, string indexes; its start line. */
static bool function_valid(struct pb_reader m, uint64_t nstrings, uint64_t id)
{
    struct fld f;
    bool ok = true, id_seen = false;
    while (ok && m.p < m.end) {
        switch (m.p[0]) {
        case 1 << 3 | PB_VARINT: ok = id_field(&m, id, &id_seen); break;
        case 2 << 3 | PB_VARINT:
        case 3 << 3 | PB_VARINT:
        case 4 << 3 | PB_VARINT: ok = field_at_most(&m, nstrings - 1); break;
        case 5 << 3 | PB_VARINT: ok = field_at_most(&m, ANY); break;
        default: ok = next(&m, &f) > 0 && f.number > 5;
        }
    }
    return ok && id_seen;
}

/* Sweep 2: every entry and single value, against the sizes of sweep 1. */
static bool entries_valid(struct pb_reader top, const uint64_t *n, int64_t *time_nanos,
                          int64_t *duration_nanos)
{
    const uint64_t s = n[F_STRING];
    const uint64_t value_type[3] = {ANY, s, s};
    const uint64_t mapping[11] = {ANY, ID, ANY, ANY, ANY, s, s, ANY, ANY, ANY, ANY};
    const struct sample_limits samples = sample_limits_of(n);
    uint64_t at[F_LAST_] = {0}, comments = 0;
    struct fld f;
    int rc;
    bool first_string = true;
    while ((rc = next(&top, &f)) > 0) {
        bool ok = true;
        switch (f.number) {
        case F_STRING:
            ok = !first_string || f.sub.p == f.sub.end;   /* string_table[0] == "" */
            first_string = false;
            break;
        case F_SAMPLE_TYPE:
        case F_PERIOD_TYPE: ok = varints_within(f.sub, 2, value_type, 0); break;
        case F_MAPPING: ok = varints_within(f.sub, 10, mapping, ++at[F_MAPPING]); break;
        case F_FUNCTION: ok = function_valid(f.sub, s, ++at[F_FUNCTION]); break;
        case F_LOCATION: ok = location_valid(f.sub, n, ++at[F_LOCATION]); break;
        case F_SAMPLE: ok = sample_valid(f.sub, &samples); break;
        case F_DROP_FRAMES:
        case F_KEEP_FRAMES:
        case F_DEFAULT_TYPE:
        case F_DOC_URL: ok = f.value < s; break;
        case F_COMMENT: ok = repeated_within(&f, s, &comments); break;
        case F_TIME: *time_nanos = (int64_t)f.value; break;
        case F_DURATION: *duration_nanos = (int64_t)f.value; break;
        }
        if (!ok)
            return false;
    }
    return rc == 0;
}

bool profd_pprof_quick_valid(const uint8_t *raw, size_t len, int64_t *time_nanos,
                             int64_t *duration_nanos)
{
    uint64_t n[F_LAST_] = {0};
    struct pb_reader top = {raw, raw, raw + len};
    *time_nanos = *duration_nanos = 0;
    return count(top, n) && entries_valid(top, n, time_nanos, duration_nanos);
}
