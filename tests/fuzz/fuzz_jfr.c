// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: JFR recordings as the pyroscope receiver reads them
 * (format=jfr), the same bytes offered as pyroscope-java's labels too.
 * Whatever profiles come out must encode as pprof and decode again. */
#include <stdint.h>
#include <stdlib.h>

#include "../../core/graph.h"
#include "../../core/pprof.h"
#include "../../core/profile.h"
#include "../../core/record.h"
#include "../../receivers/pyroscope/jfr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    const struct profd_host *host = &profd_host_services;
    struct profd_batch *b = profd_batch_new();
    char why[256];
    for (int with_labels = 0; with_labels < 2; with_labels++)
        jfr_records(host, data, len, with_labels ? data : NULL, len, 10000000, b, why,
                    sizeof(why));
    for (size_t i = 0; i < b->nrecords; i++) {
        uint8_t *out;
        size_t n;
        if (profd_record_pprof(b->records[i], false, true, &out, &n, why, sizeof(why)) != 0)
            abort();   /* a model that does not encode */
        struct profd_profile *p = profd_pprof_decode(out, n, 1 << 30, why, sizeof(why));
        if (!p)
            abort();   /* an encoding our own decoder refuses */
        profd_profile_free(p);
        free(out);
    }
    profd_batch_unref(b);
    return 0;
}
