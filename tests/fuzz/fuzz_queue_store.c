// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: an exporter queue's stored record (core/queue_store.c)
 * read back; what it writes of what it read must read back and be written
 * again to the same bytes. */
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
        /* the first writing is the canonical one (labels sorted and once
         * each, the profile gzipped), so it is written again unchanged:
         * the same labels, times, limit and profile, byte for byte */
        struct profd_batch *b2 = profd_batch_new();
        struct profd_record *r2 = queue_store_decode(b2, again, n, err, sizeof(err));
        uint8_t *third;
        size_t n3;
        if (!r2 || queue_store_encode(r2, &third, &n3, err, sizeof(err)) < 0 || n3 != n ||
            memcmp(third, again, n))
            abort();   /* what it wrote does not read back the same */
        free(third);
        profd_batch_unref(b2);
        free(again);
    }
    profd_batch_unref(b);
    return 0;
}
