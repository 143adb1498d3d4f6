// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: OTLP/JSON requests through the transcoder into the
 * OTLP decoder, and the protobuf it makes back into JSON. */
#include <stdint.h>
#include <stdlib.h>

#include "../../core/otlp.h"
#include "../../core/otlp_json.h"
#include "../../core/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    uint8_t *pb;
    size_t pb_len, json_len;
    char err[512];
    if (profd_otlp_from_json(PROFD_OTLP_REQUEST, (const char *)data, len, &pb, &pb_len, err,
                             sizeof(err)) != 0)
        return 0;
    struct profd_batch *b = profd_batch_new();
    struct profd_otlp_result res;
    profd_otlp_decode(pb, pb_len, b, &res, err, sizeof(err));
    profd_batch_unref(b);
    free(profd_otlp_to_json(PROFD_OTLP_REQUEST, pb, pb_len, &json_len));
    free(pb);
    return 0;
}
