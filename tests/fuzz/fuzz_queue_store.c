// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: an exporter queue's stored record (core/queue_store.c)
 * read back; whatever reads must be written again to the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/queue_store.h"
#include "../../core/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    char err[256];
    struct profd_batch *b = profd_batch_new();
    struct profd_record *r = queue_store_decode(b, data, len, err, sizeof(err));
    if (!r && !err[0])
        abort();   /* refused without saying why */
    uint8_t *again;
    size_t n;
    if (r && queue_store_encode(r, &again, &n, err, sizeof(err)) == 0) {
        /* labels come back sorted and once each: the same bytes only when
         * they were so, and the profile's bytes are kept as they came */
        struct profd_batch *b2 = profd_batch_new();
        struct profd_record *r2 = queue_store_decode(b2, again, n, err, sizeof(err));
        if (!r2 || r2->labels.n != r->labels.n || r2->time_nanos != r->time_nanos ||
            r2->duration_nanos != r->duration_nanos || r2->payload_len != r->payload_len)
            abort();   /* what it wrote does not read back the same */
        profd_batch_unref(b2);
        free(again);
    }
    profd_batch_unref(b);
    return 0;
}
