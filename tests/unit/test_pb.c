// SPDX-License-Identifier: Apache-2.0
#include "../../lib/pb_reader.h"
#include "../../core/pb.h"
#include "check.h"

/* Field 1, a nested message whose field 2 holds inner bytes (each i &
 * 0xff), then a varint 7 in field 3. Returns the nested body's size. */
static size_t put_nested(struct pb_writer *w, size_t inner)
{
    size_t mark = pb_begin(w, 1);
    uint8_t *bytes = malloc(inner);
    for (size_t i = 0; i < inner; i++)
        bytes[i] = (uint8_t)i;
    pb_put_bytes(w, 2, bytes, inner);
    free(bytes);
    pb_end(w, mark);
    pb_put_uint(w, 3, 7);
    return 1 + pb_varint_size(inner) + inner;
}

/* Lengths of one byte, and of two and three once the body moves up. */
TEST(nested_lengths_of_every_size_read_back)
{
    /* bodies of 3, 127, 128, 129, 16383, 16384, 16385 and 2 MiB + 4 bytes */
    const size_t inner[] = {1, 125, 126, 127, 16380, 16381, 16382, 1 << 21};
    for (size_t k = 0; k < sizeof(inner) / sizeof(*inner); k++) {
        struct pb_writer w = {0};
        size_t body = put_nested(&w, inner[k]);
        struct pb_reader r;
        struct pb_field f;
        const char *err;
        pb_reader_init(&r, w.buf, w.buf, w.len);
        CHECK_INT(pb_next(&r, &f, &err), 1);
        CHECK_INT(f.number, 1);
        CHECK_INT(f.len, body);
        CHECK_INT(f.offset + 1 + pb_varint_size(body) + body + 2, w.len);
        struct pb_reader in;
        struct pb_field g;
        pb_reader_init(&in, w.buf, f.data, f.len);
        CHECK_INT(pb_next(&in, &g, &err), 1);
        CHECK_INT(g.number, 2);
        CHECK_INT(g.len, inner[k]);
        CHECK(in.p == in.end);
        bool same = true;
        for (size_t i = 0; i < g.len; i++)
            same = same && g.data[i] == (uint8_t)i;
        CHECK(same);
        CHECK_INT(pb_next(&r, &f, &err), 1);
        CHECK_INT(f.number, 3);
        CHECK_INT(f.value, 7);
        CHECK_INT(pb_next(&r, &f, &err), 0);
        free(w.buf);
    }
}

/* An inner message that moves up inside an outer one that moves too. */
TEST(nested_long_inside_long)
{
    struct pb_writer w = {0};
    size_t outer = pb_begin(&w, 4);
    pb_put_uint(&w, 1, 300);
    size_t body = put_nested(&w, 20000);
    pb_end(&w, outer);
    struct pb_reader r, in;
    struct pb_field f, g;
    const char *err;
    pb_reader_init(&r, w.buf, w.buf, w.len);
    CHECK_INT(pb_next(&r, &f, &err), 1);
    CHECK_INT(f.number, 4);
    CHECK(r.p == r.end);
    pb_reader_init(&in, w.buf, f.data, f.len);
    CHECK_INT(pb_next(&in, &g, &err), 1);
    CHECK_INT(g.value, 300);
    CHECK_INT(pb_next(&in, &g, &err), 1);
    CHECK_INT(g.len, body);
    CHECK_INT(pb_next(&in, &g, &err), 1);
    CHECK_INT(g.value, 7);
    CHECK_INT(pb_next(&in, &g, &err), 0);
    free(w.buf);
}

RUN_TESTS()
