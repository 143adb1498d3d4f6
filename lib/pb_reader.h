// SPDX-License-Identifier: Apache-2.0
/*
 * Protocol-buffers wire format reading: a bounds-checked reader that
 * remembers byte offsets for error messages. Header-only, so the daemon and
 * the modules that read protobuf share it.
 */
#ifndef PROFD_LIB_PB_READER_H
#define PROFD_LIB_PB_READER_H

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
    if (r->end - r->p >= 10) {   /* a whole varint fits: no bounds check per byte */
        const uint8_t *p = r->p;
        uint64_t v = p[0] & 0x7f;
        for (unsigned i = 1; i < 10; i++) {
            v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
            if (!(p[i] & 0x80)) {
                r->p = p + i + 1;
                *out = v;
                return true;
            }
        }
        return false;
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
    f->value = 0;   /* every member is set, whatever the wire type */
    f->data = NULL;
    f->len = 0;
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

/* The payload of the first length-delimited field number of the message m
 * into *out (its bytes, or a message to read); false when m has none
 * before its end or a malformed field. */
static inline bool pb_find_len(struct pb_reader m, uint32_t number, struct pb_reader *out)
{
    struct pb_field f;
    const char *err;
    while (pb_next(&m, &f, &err) > 0)
        if (f.number == number && f.wire == PB_LEN) {
            pb_reader_init(out, m.base, f.data, f.len);
            return true;
        }
    return false;
}

/* The value of the varint field number of the message m (the last one, as
 * protobuf takes a field given twice), else 0. */
static inline uint64_t pb_find_varint(struct pb_reader m, uint32_t number)
{
    struct pb_field f;
    const char *err;
    uint64_t v = 0;
    while (pb_next(&m, &f, &err) > 0)
        if (f.number == number && f.wire == PB_VARINT)
            v = f.value;
    return v;
}

#endif
