// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: taking a unary call's message out of its gRPC frame;
 * the first byte picks the grpc-encoding (g: gzip, z: zstd, else none). */
#include <stdint.h>
#include <stdlib.h>

#include "../../core/compression.h"
#include "../../lib/grpc_frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    if (len == 0)
        return 0;
    const char *encoding = data[0] == 'g' ? "gzip" : data[0] == 'z' ? "zstd" : NULL;
    uint8_t *msg;
    size_t n;
    char err[256];
    if (grpc_unframe(data + 1, len - 1, encoding, 1 << 20, profd_decompress, &msg, &n, err,
                     sizeof(err)) == 0) {
        if (n > (1 << 20))
            abort();   /* the limit holds */
        free(msg);
    }
    return 0;
}
