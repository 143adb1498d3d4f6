// SPDX-License-Identifier: Apache-2.0
/*
 * Protocol-buffers wire format: the reader of lib/pb_reader.h, helpers for
 * repeated fields, and an append-only writer.
 */
#ifndef PROFD_PB_H
#define PROFD_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../lib/pb_reader.h"

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

/* Grows w so that extra more bytes fit (pb_writer_reserve's slow path). */
void pb_writer_grow(struct pb_writer *w, size_t extra);
void pb_put_varint(struct pb_writer *w, uint64_t v);
void pb_put_tag(struct pb_writer *w, uint32_t field, uint32_t wire);
void pb_put_bytes(struct pb_writer *w, uint32_t field, const void *data, size_t len);
/* A fixed64 field (wire type 1); omitted when v is 0. */
void pb_put_fixed64(struct pb_writer *w, uint32_t field, uint64_t v);
/* Always writes the field, even when empty (repeated strings). */
void pb_put_bytes_always(struct pb_writer *w, uint32_t field, const void *data, size_t len);
/* Packed repeated fields; nothing written when n == 0. */
void pb_put_packed_u32(struct pb_writer *w, uint32_t field, const uint32_t *v, size_t n);
void pb_put_packed_i64(struct pb_writer *w, uint32_t field, const int64_t *v, size_t n);

static inline size_t pb_varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* The writers every message field goes through are inline: an encoder
 * spends most of its time in them. */

/* Makes room for extra more bytes. */
static inline void pb_writer_reserve(struct pb_writer *w, size_t extra)
{
    if (w->cap - w->len < extra)
        pb_writer_grow(w, extra);
}

/* Writes v; the caller has reserved room (10 bytes at most). The bytes go
 * through a local pointer: stored through w->buf, each would make the
 * compiler read w->buf and w->len again (a byte store may alias them). */
static inline void pb_put_varint_unchecked(struct pb_writer *w, uint64_t v)
{
    uint8_t *out = w->buf + w->len;
    while (v >= 0x80) {
        *out++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *out++ = (uint8_t)v;
    w->len = (size_t)(out - w->buf);
}

/* Field helpers; zero values are omitted as proto3 does. */
static inline void pb_put_uint(struct pb_writer *w, uint32_t field, uint64_t v)
{
    if (!v)
        return;
    pb_writer_reserve(w, 15);
    pb_put_varint_unchecked(w, ((uint64_t)field << 3) | PB_VARINT);
    pb_put_varint_unchecked(w, v);
}

static inline void pb_put_int(struct pb_writer *w, uint32_t field, int64_t v)
{
    pb_put_uint(w, field, (uint64_t)v);
}

static inline void pb_put_bool(struct pb_writer *w, uint32_t field, bool v)
{
    pb_put_uint(w, field, v ? 1 : 0);
}

/* A nested message's length is written in front of it once it is known,
 * in one byte kept for it: enough below 128 bytes, as most messages are;
 * a longer body moves up to make room (pb_end_long). */
static inline size_t pb_begin(struct pb_writer *w, uint32_t field)
{
    pb_writer_reserve(w, 6);
    pb_put_varint_unchecked(w, ((uint64_t)field << 3) | PB_LEN);
    return w->len++;
}

/* pb_end for a body of 128 bytes or more. */
void pb_end_long(struct pb_writer *w, size_t mark);

/* Ends the nested message begun at mark (pb_begin's), filling in its
 * length. */
static inline void pb_end(struct pb_writer *w, size_t mark)
{
    size_t body = w->len - mark - 1;
    if (body < 0x80)
        w->buf[mark] = (uint8_t)body;
    else
        pb_end_long(w, mark);
}

#endif
