// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: finding a unary call's message in its gRPC frame, in
 * place and copied, the two forms agreeing;
 * the first byte picks the grpc-encoding (g: gzip, z: zstd, else none). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/compression.h"
#include "../../lib/grpc_frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    if (len == 0)
        return 0;
    const char *encoding = data[0] == 'g' ? "gzip" : data[0] == 'z' ? "zstd" : NULL;
    uint8_t *msg, *owned;
    const uint8_t *view;
    size_t n, view_len;
    char err[256];
    int rc = grpc_unframe(data + 1, len - 1, encoding, 1 << 20, profd_decompress, &msg, &n, err,
                          sizeof(err));
    int view_rc = grpc_unframe_view(data + 1, len - 1, encoding, 1 << 20, profd_decompress, &view,
                                    &view_len, &owned, err, sizeof(err));
    if (rc != view_rc)
        abort();   /* both forms read a frame alike */
    if (rc == 0) {
        if (n > (1 << 20) || view_len != n || memcmp(view, msg, n))
            abort();   /* the limit holds; the message in place is the copy's */
        if (!owned && len > 1 && (view < data + 1 || view + n > data + len))
            abort();   /* a message found in place lies inside the frame */
        free(msg);
        free(owned);
    }
    return 0;
}
