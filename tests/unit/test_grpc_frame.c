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

TEST(an_uncompressed_message_is_found_in_place)
{
    uint8_t body[64];
    size_t n = frame(body, "hello", 5, 0);
    const uint8_t *msg;
    size_t len;
    uint8_t *owned;
    char err[256];
    CHECK_INT(grpc_unframe_view(body, n, NULL, 100, profd_decompress, &msg, &len, &owned, err,
                                sizeof(err)), GRPC_OK);
    CHECK(msg == body + 5 && len == 5 && owned == NULL);
    uint8_t *copy;   /* the copying form gives the same bytes, its own */
    CHECK_INT(grpc_unframe(body, n, NULL, 100, profd_decompress, &copy, &len, err, sizeof(err)),
              GRPC_OK);
    CHECK(copy != body + 5 && len == 5 && !memcmp(copy, "hello", 5));
    free(copy);
    CHECK_INT(grpc_unframe_view(body, n, NULL, 4, profd_decompress, &msg, &len, &owned, err,
                                sizeof(err)), GRPC_RESOURCE_EXHAUSTED);
    CHECK_CONTAINS(err, "over the limit of 4");
    CHECK_INT(grpc_unframe_view(body, 0, NULL, 4, profd_decompress, &msg, &len, &owned, err,
                                sizeof(err)), GRPC_OK);   /* an empty body: an empty message */
    CHECK(len == 0 && owned == NULL);
}

TEST(a_compressed_message_is_inflated)
{
    uint8_t *gz, body[256];
    size_t gz_len, len;
    profd_gzip((const uint8_t *)"hello, hello, hello", 19, &gz, &gz_len);
    size_t n = frame(body, gz, gz_len, 1);
    free(gz);
    const uint8_t *msg;
    uint8_t *owned;
    char err[256];
    CHECK_INT(grpc_unframe_view(body, n, "gzip", 100, profd_decompress, &msg, &len, &owned, err,
                                sizeof(err)), GRPC_OK);
    CHECK(owned != NULL && msg == owned && len == 19 && !memcmp(msg, "hello, hello, hello", 19));
    free(owned);
    CHECK_INT(grpc_unframe_view(body, n, NULL, 100, profd_decompress, &msg, &len, &owned, err,
                                sizeof(err)), GRPC_INTERNAL);
    CHECK_CONTAINS(err, "without a grpc-encoding");
    CHECK_INT(grpc_unframe_view(body, n, "gzip", 10, profd_decompress, &msg, &len, &owned, err,
                                sizeof(err)), GRPC_RESOURCE_EXHAUSTED);
    CHECK_INT(grpc_unframe_view(body, n, "br", 100, profd_decompress, &msg, &len, &owned, err,
                                sizeof(err)), GRPC_UNIMPLEMENTED);
}

TEST(bad_frames_are_refused)
{
    uint8_t body[64];
    size_t n = frame(body, "hello", 5, 0);
    const uint8_t *msg;
    size_t len;
    uint8_t *owned;
    char err[256];
    CHECK_INT(grpc_unframe_view(body, 3, NULL, 100, profd_decompress, &msg, &len, &owned, err,
                                sizeof(err)), GRPC_INVALID_ARGUMENT);
    CHECK_CONTAINS(err, "truncated gRPC message prefix");
    CHECK_INT(grpc_unframe_view(body, n - 1, NULL, 100, profd_decompress, &msg, &len, &owned,
                                err, sizeof(err)), GRPC_INVALID_ARGUMENT);
    CHECK_CONTAINS(err, "its prefix says 5 bytes, 4 came");
    n += frame(body + n, "again", 5, 0);
    CHECK_INT(grpc_unframe_view(body, n, NULL, 100, profd_decompress, &msg, &len, &owned, err,
                                sizeof(err)), GRPC_INVALID_ARGUMENT);
    CHECK_CONTAINS(err, "more than one message");
}

RUN_TESTS()
