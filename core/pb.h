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
