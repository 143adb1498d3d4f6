// SPDX-License-Identifier: Apache-2.0
/* gRPC length-prefixed messages (1 flag byte, 4-byte big-endian length), for
 * the daemon's server and the modules' clients. */
#ifndef PROFD_GRPC_FRAME_H
#define PROFD_GRPC_FRAME_H

#include <stddef.h>
#include <stdint.h>

enum {
    GRPC_OK = 0, GRPC_CANCELLED = 1, GRPC_UNKNOWN = 2, GRPC_INVALID_ARGUMENT = 3,
    GRPC_DEADLINE_EXCEEDED = 4, GRPC_PERMISSION_DENIED = 7, GRPC_RESOURCE_EXHAUSTED = 8,
    GRPC_ABORTED = 10, GRPC_OUT_OF_RANGE = 11, GRPC_UNIMPLEMENTED = 12, GRPC_INTERNAL = 13,
    GRPC_UNAVAILABLE = 14, GRPC_DATA_LOSS = 15, GRPC_UNAUTHENTICATED = 16,
};

/* A decompressor with the contract of struct profd_host.decompress (0,
 * PROFD_DECOMPRESS_TOO_LARGE, PROFD_DECOMPRESS_UNSUPPORTED or another
 * negative for corrupt input): the daemon's own, or the host table's. */
typedef int (*grpc_decompress_fn)(const char *encoding, const uint8_t *data, size_t len,
                                  size_t max_out, uint8_t **out, size_t *out_len, char *err,
                                  size_t errlen);

/*
 * Finds the one message of a unary call in its frame: checks the prefix
 * against the bytes that came, and decompresses with encoding (the
 * grpc-encoding header, or NULL) when the flag says so, refusing more than
 * max_out bytes. Returns GRPC_OK with the message in *msg: inside body when
 * it came uncompressed (*owned NULL), else in *owned (malloc'd); or the
 * status to answer with and why in err. An empty body is an empty message.
 */
int grpc_unframe_view(const uint8_t *body, size_t len, const char *encoding, size_t max_out,
                      grpc_decompress_fn decompress, const uint8_t **msg, size_t *msg_len,
                      uint8_t **owned, char *err, size_t errlen);

/* grpc_unframe_view that always gives the message in a malloc'd *out. */
int grpc_unframe(const uint8_t *body, size_t len, const char *encoding, size_t max_out,
                 grpc_decompress_fn decompress, uint8_t **out, size_t *out_len, char *err,
                 size_t errlen);

/* The message length a 5-byte prefix gives (the prefix not counted). */
size_t grpc_frame_length(const uint8_t prefix[5]);

/* Writes the 5-byte prefix of an uncompressed or compressed message. */
void grpc_frame_prefix(uint8_t prefix[5], int compressed, size_t len);

#endif
