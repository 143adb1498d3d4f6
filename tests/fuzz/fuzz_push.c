// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: what agents push. The first byte picks the reader: Parca
 * WriteRaw series (0), Pyroscope push.v1 series (1), Pyroscope stacks (2,
 * units samples; the first byte / 5 % 5 picks folded, lines, trie, tree or
 * a speedscope file), an SDK's multipart upload (3, boundary "b"), or the query of an
 * /ingest (4: its times, sample rate and units); the rest is the input.
 * Whatever records come out must encode as pprof and have a profile
 * family. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/graph.h"
#include "../../core/pprof.h"
#include "../../core/record.h"
#include "../../lib/pb_reader.h"
#include "../../lib/profile_family.h"
#include "../../lib/raw_series.h"
#include "../../receivers/pyroscope/folded.h"
#include "../../receivers/pyroscope/ingest_query.h"
#include "../../receivers/pyroscope/multipart.h"
#include "../../receivers/pyroscope/speedscope.h"
#include "../../receivers/pyroscope/trie_tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    if (len == 0)
        return 0;
    const struct profd_host *host = &profd_host_services;
    struct profd_batch *b = profd_batch_new();
    char why[256];
    if (data[0] % 5 == 4) {
        char *query = strndup((const char *)data + 1, len - 1);
        char units[32];
        int64_t t;
        ingest_time(query, "from", 0, &t);
        ingest_time(query, "until", INT64_MAX, &t);
        ingest_cpu_period(query);
        ingest_units(query, units, sizeof(units));
        free(query);
    } else if (data[0] % 5 == 3) {
        multipart_record(host, "multipart/form-data; boundary=b", data + 1, len - 1, 1 << 24, b,
                         why, sizeof(why));
    } else if (data[0] % 5 == 2 && data[0] / 5 % 5 == 4) {
        speedscope_records(host, (const char *)data + 1, len - 1, 10000000, b, why, sizeof(why));
    } else if (data[0] % 5 == 2) {
        int form = data[0] / 5 % 5;   /* folded, lines, trie, tree */
        struct folded_meta meta = {"samples", 10000000, 0, 0, form == 1};
        struct profd_profile *p =
            form >= 2 ? binary_stacks_profile(host, form == 2 ? STACKS_TRIE : STACKS_TREE,
                                              data + 1, len - 1, &meta, why, sizeof(why))
                      : folded_profile(host, (const char *)data + 1, len - 1, &meta, why,
                                       sizeof(why));
        if (p)
            profd_record_add_profile(b, p);
    } else {
        struct pb_reader r;
        struct pb_field f = {0};
        const char *err;
        pb_reader_init(&r, data + 1, data + 1, len - 1);
        enum raw_labels shape = data[0] % 5 ? RAW_LABEL_PAIRS : RAW_LABEL_SET;
        for (size_t n = 0; pb_next(&r, &f, &err) > 0; n++)
            if (f.wire == PB_LEN)
                raw_series_read(host, f.data, f.len, shape, true, n, 1 << 24, b, why, sizeof(why));
    }
    for (size_t i = 0; i < b->nrecords; i++) {
        uint8_t *out;
        size_t n;
        struct profd_profile *p = profd_record_profile(b->records[i], why, sizeof(why));
        if (p && profd_record_pprof(b->records[i], true, true, &out, &n, why, sizeof(why)) == 0)
            free(out);
        struct profd_type_names types;
        if (p) {
            profd_profile_type_names(p, &types);
            profile_family_of_types(&types, "block", why, sizeof(why));
        }
    }
    profd_batch_unref(b);
    return 0;
}
