// SPDX-License-Identifier: Apache-2.0
/* gRPC frames: the one message of a unary call found in place when it
 * came uncompressed, inflated when not, and the bad frames refused. */
#include "check.h"

#include "../../core/compression.h"
#include "../../core/gzip.h"
#include "../../lib/grpc_frame.h"

/* A frame of the len bytes at msg, flagged compressed or not, into out. */
static size_t frame(uint8_t *out, const void *msg, size_t len, int compressed)
{
    grpc_frame_prefix(out, compressed, len);
    memcpy(out + 5, msg, len);
    return len + 5;
}

/* What grpc_unframe_view finds. */
struct found {
    const uint8_t *msg;
    size_t len;
    uint8_t *owned;
    char err[256];
};

static int view(const uint8_t *body, size_t n, const char *encoding, size_t max_out,
                struct found *f)
{
    return grpc_unframe_view(body, n, encoding, max_out, profd_decompress, &f->msg, &f->len,
                             &f->owned, f->err, sizeof(f->err));
}

TEST(an_uncompressed_message_is_found_in_place)
{
    uint8_t body[64];
    size_t n = frame(body, "hello", 5, 0);
    struct found f;
    CHECK_INT(view(body, n, NULL, 100, &f), GRPC_OK);
    CHECK(f.msg == body + 5 && f.len == 5 && f.owned == NULL);
    uint8_t *copy;   /* the copying form gives the same bytes, its own */
    size_t len;
    CHECK_INT(grpc_unframe(body, n, NULL, 100, profd_decompress, &copy, &len, f.err,
                           sizeof(f.err)), GRPC_OK);
    CHECK(copy != body + 5 && len == 5 && !memcmp(copy, "hello", 5));
    free(copy);
    CHECK_INT(view(body, n, NULL, 4, &f), GRPC_RESOURCE_EXHAUSTED);
    CHECK_CONTAINS(f.err, "over the limit of 4");
    CHECK_INT(view(body, 0, NULL, 4, &f), GRPC_OK);   /* an empty body: an empty message */
    CHECK(f.len == 0 && f.owned == NULL);
}

TEST(a_compressed_message_is_inflated)
{
    uint8_t *gz, body[256];
    size_t gz_len;
    profd_gzip((const uint8_t *)"hello, hello, hello", 19, &gz, &gz_len);
    size_t n = frame(body, gz, gz_len, 1);
    free(gz);
    struct found f;
    CHECK_INT(view(body, n, "gzip", 100, &f), GRPC_OK);
    CHECK(f.owned != NULL && f.msg == f.owned && f.len == 19);
    CHECK(!memcmp(f.msg, "hello, hello, hello", 19));
    free(f.owned);
    CHECK_INT(view(body, n, NULL, 100, &f), GRPC_INTERNAL);
    CHECK_CONTAINS(f.err, "without a grpc-encoding");
    CHECK_INT(view(body, n, "gzip", 10, &f), GRPC_RESOURCE_EXHAUSTED);
    CHECK_INT(view(body, n, "br", 100, &f), GRPC_UNIMPLEMENTED);
    profd_gzip_thread_cleanup();
}

TEST(bad_frames_are_refused)
{
    uint8_t body[64];
    size_t n = frame(body, "hello", 5, 0);
    struct found f;
    CHECK_INT(view(body, 3, NULL, 100, &f), GRPC_INVALID_ARGUMENT);
    CHECK_CONTAINS(f.err, "truncated gRPC message prefix");
    CHECK_INT(view(body, n - 1, NULL, 100, &f), GRPC_INVALID_ARGUMENT);
    CHECK_CONTAINS(f.err, "its prefix says 5 bytes, 4 came");
    n += frame(body + n, "again", 5, 0);
    CHECK_INT(view(body, n, NULL, 100, &f), GRPC_INVALID_ARGUMENT);
    CHECK_CONTAINS(f.err, "more than one message");
}

RUN_TESTS()
