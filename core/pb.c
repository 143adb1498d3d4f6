// SPDX-License-Identifier: Apache-2.0
#include "pb.h"

#include <string.h>

#include "alloc.h"

bool pb_each_varint(const struct pb_field *f, bool (*fn)(void *arg, uint64_t v), void *arg)
{
    if (f->wire == PB_VARINT)
        return fn(arg, f->value);
    if (f->wire != PB_LEN)
        return false;
    struct pb_reader r;
    pb_reader_init(&r, f->data, f->data, f->len);
    while (r.p < r.end) {
        uint64_t v;
        if (!pb_varint(&r, &v) || !fn(arg, v))
            return false;
    }
    return true;
}

ptrdiff_t pb_packed_count(const uint8_t *data, size_t len)
{
    ptrdiff_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += !(data[i] & 0x80);
    if (len && (data[len - 1] & 0x80))
        return -1;
    return n;
}

void pb_writer_grow(struct pb_writer *w, size_t extra)
{
    size_t ncap = w->cap ? w->cap * 2 : 4096;
    while (ncap - w->len < extra)
        ncap *= 2;
    w->buf = profd_xrealloc(w->buf, ncap);
    w->cap = ncap;
}

void pb_end_long(struct pb_writer *w, size_t mark)
{
    size_t body = w->len - mark - 1;
    size_t extra = pb_varint_size(body) - 1;
    pb_writer_reserve(w, extra);
    memmove(w->buf + mark + 1 + extra, w->buf + mark + 1, body);
    w->len = mark;
    pb_put_varint_unchecked(w, body);
    w->len += body;
}

void pb_put_varint(struct pb_writer *w, uint64_t v)
{
    pb_writer_reserve(w, 10);
    pb_put_varint_unchecked(w, v);
}

void pb_put_tag(struct pb_writer *w, uint32_t field, uint32_t wire)
{
    pb_put_varint(w, ((uint64_t)field << 3) | wire);
}

void pb_put_bytes_always(struct pb_writer *w, uint32_t field, const void *data, size_t len)
{
    pb_writer_reserve(w, 15 + len);
    pb_put_varint_unchecked(w, ((uint64_t)field << 3) | PB_LEN);
    pb_put_varint_unchecked(w, len);
    if (len)
        memcpy(w->buf + w->len, data, len);
    w->len += len;
}

void pb_put_fixed64(struct pb_writer *w, uint32_t field, uint64_t v)
{
    if (!v)
        return;
    pb_writer_reserve(w, 15);
    pb_put_varint_unchecked(w, ((uint64_t)field << 3) | PB_I64);
    memcpy(w->buf + w->len, &v, 8);   /* little-endian hosts only, as the decoder */
    w->len += 8;
}

void pb_put_bytes(struct pb_writer *w, uint32_t field, const void *data, size_t len)
{
    if (len)
        pb_put_bytes_always(w, field, data, len);
}

void pb_put_packed_u32(struct pb_writer *w, uint32_t field, const uint32_t *v, size_t n)
{
    if (!n)
        return;
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += pb_varint_size(v[i]);
    pb_writer_reserve(w, 15 + bytes);
    pb_put_varint_unchecked(w, ((uint64_t)field << 3) | PB_LEN);
    pb_put_varint_unchecked(w, bytes);
    for (size_t i = 0; i < n; i++)
        pb_put_varint_unchecked(w, v[i]);
}

void pb_put_packed_i64(struct pb_writer *w, uint32_t field, const int64_t *v, size_t n)
{
    if (!n)
        return;
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += pb_varint_size((uint64_t)v[i]);
    pb_writer_reserve(w, 15 + bytes);
    pb_put_varint_unchecked(w, ((uint64_t)field << 3) | PB_LEN);
    pb_put_varint_unchecked(w, bytes);
    for (size_t i = 0; i < n; i++)
        pb_put_varint_unchecked(w, (uint64_t)v[i]);
}

