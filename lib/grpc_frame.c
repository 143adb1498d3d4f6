// SPDX-License-Identifier: Apache-2.0
#include "grpc_frame.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "profd/plugin.h"

void grpc_frame_prefix(uint8_t prefix[5], int compressed, size_t len)
{
    prefix[0] = compressed ? 1 : 0;
    prefix[1] = (uint8_t)(len >> 24);
    prefix[2] = (uint8_t)(len >> 16);
    prefix[3] = (uint8_t)(len >> 8);
    prefix[4] = (uint8_t)len;
}

size_t grpc_frame_length(const uint8_t prefix[5])
{
    return (size_t)prefix[1] << 24 | (size_t)prefix[2] << 16 | (size_t)prefix[3] << 8 | prefix[4];
}

int grpc_unframe_view(const uint8_t *body, size_t len, const char *encoding, size_t max_out,
                      grpc_decompress_fn decompress, const uint8_t **msg, size_t *msg_len,
                      uint8_t **owned, char *err, size_t errlen)
{
    *owned = NULL;
    if (len > 0 && len < 5) {
        snprintf(err, errlen, "truncated gRPC message prefix (%zu bytes)", len);
        return GRPC_INVALID_ARGUMENT;
    }
    size_t mlen = len ? grpc_frame_length(body) : 0;
    if (len && mlen + 5 != len) {
        snprintf(err, errlen, mlen + 5 > len
                     ? "truncated gRPC message: its prefix says %zu bytes, %zu came"
                     : "more than one message in a unary call (first of %zu bytes, %zu in all)",
                 mlen, len - 5);
        return GRPC_INVALID_ARGUMENT;
    }
    bool compressed = len && (body[0] & 1);
    if (compressed && (!encoding || !*encoding || !strcasecmp(encoding, "identity"))) {
        snprintf(err, errlen, "compressed message without a grpc-encoding");
        return GRPC_INTERNAL;
    }
    if (!compressed) {
        if (mlen > max_out) {
            snprintf(err, errlen, "message of %zu bytes over the limit of %zu", mlen, max_out);
            return GRPC_RESOURCE_EXHAUSTED;
        }
        *msg = len ? body + 5 : (const uint8_t *)"";
        *msg_len = mlen;
        return GRPC_OK;
    }
    int rc = decompress(encoding, body + 5, mlen, max_out, owned, msg_len, err, errlen);
    if (rc == PROFD_DECOMPRESS_UNSUPPORTED) {
        snprintf(err, errlen, "grpc-encoding \"%s\" is not supported (gzip, zstd)", encoding);
        return GRPC_UNIMPLEMENTED;
    }
    if (rc == PROFD_DECOMPRESS_TOO_LARGE)
        return GRPC_RESOURCE_EXHAUSTED;
    *msg = *owned;
    return rc < 0 ? GRPC_INTERNAL : GRPC_OK;
}

int grpc_unframe(const uint8_t *body, size_t len, const char *encoding, size_t max_out,
                 grpc_decompress_fn decompress, uint8_t **out, size_t *out_len, char *err,
                 size_t errlen)
{
    const uint8_t *msg;
    int rc = grpc_unframe_view(body, len, encoding, max_out, decompress, &msg, out_len, out, err,
                               errlen);
    if (rc == GRPC_OK && !*out &&   /* uncompressed: copied by the decompressor's identity */
        decompress("", msg, *out_len, max_out, out, out_len, err, errlen) < 0)
        return GRPC_INTERNAL;
    return rc;
}
