// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: the OTLP profiles decoder; whatever it accepts is encoded
 * again and must decode to as many records. */
#include <stdint.h>
#include <stdlib.h>

#include "../../core/otlp.h"
#include "../../core/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    char err[512];
    struct profd_otlp_result res;
    struct profd_batch *b = profd_batch_new();
    if (profd_otlp_decode(data, len, 0, b, &res, err, sizeof(err)) == 0 && b->nrecords) {
        uint8_t *out;
        size_t n, skipped;
        profd_otlp_encode(b->records, b->nrecords, &out, &n, &skipped, err, sizeof(err));
        struct profd_batch *again = profd_batch_new();
        if (profd_otlp_decode(out, n, 0, again, &res, err, sizeof(err)) != 0 ||
            again->nrecords + skipped < b->nrecords)
            abort();   /* our own output must decode to the same records */
        profd_batch_unref(again);
        free(out);
    }
    profd_batch_unref(b);
    return 0;
}
