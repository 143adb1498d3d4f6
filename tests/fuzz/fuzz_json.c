// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: the JSON transcoder. The first byte picks the message:
 * an OTLP request (0, then through the OTLP decoder), a Pyroscope
 * PushRequest (1) or a Parca WriteRawRequest (2); the rest is the JSON.
 * Whatever protobuf comes out is made JSON again. */
#include <stdint.h>
#include <stdlib.h>

#include "../../core/otlp.h"
#include "../../core/proto_json.h"
#include "../../core/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    static const enum profd_message which[] = {PROFD_MSG_OTLP_REQUEST, PROFD_MSG_PUSH_REQUEST,
                                               PROFD_MSG_WRITERAW_REQUEST};
    if (len == 0)
        return 0;
    enum profd_message m = which[data[0] % 3];
    uint8_t *pb;
    size_t pb_len, json_len;
    char err[512];
    if (profd_json_to_proto(m, (const char *)data + 1, len - 1, &pb, &pb_len, err,
                            sizeof(err)) != 0)
        return 0;
    if (m == PROFD_MSG_OTLP_REQUEST) {
        struct profd_batch *b = profd_batch_new();
        struct profd_otlp_result res;
        profd_otlp_decode(pb, pb_len, 0, b, &res, err, sizeof(err));
        profd_batch_unref(b);
    }
    free(profd_proto_to_json(m, pb, pb_len, &json_len));
    free(pb);
    return 0;
}
