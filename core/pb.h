// SPDX-License-Identifier: Apache-2.0
/*
 * Protocol-buffers wire format: a bounds-checked reader that remembers byte
 * offsets for error messages, and an append-only writer.
 */
#ifndef PROFD_PB_H
#define PROFD_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

struct pb_reader {
    const uint8_t *base;   /* start of the whole buffer, for offsets */
    const uint8_t *p, *end;
};

/* One field as read by pb_next. For PB_LEN, data/len give the payload. */
struct pb_field {
    uint32_t number;
    uint32_t wire;
    uint64_t value;        /* VARINT, I64, I32 */
    const uint8_t *data;   /* LEN */
    size_t len;
    size_t offset;         /* byte offset of the tag in the whole buffer */
};

static inline void pb_reader_init(struct pb_reader *r, const uint8_t *base, const uint8_t *p,
                                  size_t len)
{
    r->base = base;
    r->p = p;
    r->end = p + len;
}

/* Reads a varint; false when truncated or longer than 10 bytes. */
static inline bool pb_varint(struct pb_reader *r, uint64_t *out)
{
    if (r->p < r->end && *r->p < 0x80) {   /* most varints are one byte */
        *out = *r->p++;
        return true;
    }
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 70 && r->p < r->end; shift += 7) {
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/*
 * Reads the next field. Returns 1 on success, 0 at the end of the buffer, and
 * -1 on malformed input (with *err naming the problem and f->offset set).
 * Group wire types (3, 4) are refused: no message we read uses them.
 */
static inline int pb_next(struct pb_reader *r, struct pb_field *f, const char **err)
{
    if (r->p >= r->end)
        return 0;
    f->offset = (size_t)(r->p - r->base);
    uint64_t tag;
    if (!pb_varint(r, &tag)) {
        *err = "truncated field tag";
        return -1;
    }
    f->number = (uint32_t)(tag >> 3);
    f->wire = (uint32_t)(tag & 7);
    if (f->number == 0 || tag >> 32) {
        *err = "invalid field number";
        return -1;
    }
    switch (f->wire) {
    case PB_VARINT:
        if (!pb_varint(r, &f->value)) {
            *err = "truncated varint";
            return -1;
        }
        return 1;
    case PB_I64:
        if (r->end - r->p < 8) {
            *err = "truncated fixed64";
            return -1;
        }
        memcpy(&f->value, r->p, 8);
        r->p += 8;
        return 1;
    case PB_I32: {
        if (r->end - r->p < 4) {
            *err = "truncated fixed32";
            return -1;
        }
        uint32_t v;
        memcpy(&v, r->p, 4);
        f->value = v;
        r->p += 4;
        return 1;
    }
    case PB_LEN: {
        uint64_t len;
        if (!pb_varint(r, &len)) {
            *err = "truncated length";
            return -1;
        }
        if (len > (uint64_t)(r->end - r->p)) {
            *err = "length runs past the end of the message";
            return -1;
        }
        f->data = r->p;
        f->len = (size_t)len;
        r->p += len;
        return 1;
    }
    default:
        *err = "unsupported wire type";
        return -1;
    }
}

/*
 * Calls fn for each value of a repeated int field given in either packed
 * (PB_LEN) or unpacked (PB_VARINT) form. Returns false when malformed.
 */
bool pb_each_varint(const struct pb_field *f, bool (*fn)(void *arg, uint64_t v), void *arg);
/* Counts the values of a packed varint payload; -1 when malformed. */
ptrdiff_t pb_packed_count(const uint8_t *data, size_t len);

/* A growable output buffer. */
struct pb_writer {
    uint8_t *buf;
    size_t len, cap;
};

void pb_writer_reserve(struct pb_writer *w, size_t extra);
void pb_put_varint(struct pb_writer *w, uint64_t v);
void pb_put_tag(struct pb_writer *w, uint32_t field, uint32_t wire);
/* Field helpers; zero values are omitted as proto3 does. */
void pb_put_uint(struct pb_writer *w, uint32_t field, uint64_t v);
void pb_put_int(struct pb_writer *w, uint32_t field, int64_t v);
void pb_put_bool(struct pb_writer *w, uint32_t field, bool v);
void pb_put_bytes(struct pb_writer *w, uint32_t field, const void *data, size_t len);
/* A fixed64 field (wire type 1); omitted when v is 0. */
void pb_put_fixed64(struct pb_writer *w, uint32_t field, uint64_t v);
/* Always writes the field, even when empty (repeated strings). */
void pb_put_bytes_always(struct pb_writer *w, uint32_t field, const void *data, size_t len);
/* Packed repeated fields; nothing written when n == 0. */
void pb_put_packed_u32(struct pb_writer *w, uint32_t field, const uint32_t *v, size_t n);
void pb_put_packed_i64(struct pb_writer *w, uint32_t field, const int64_t *v, size_t n);
/* Nested message: begin returns a mark; end fills in the length. */
size_t pb_begin(struct pb_writer *w, uint32_t field);
void pb_end(struct pb_writer *w, size_t mark);

static inline size_t pb_varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

#endif
