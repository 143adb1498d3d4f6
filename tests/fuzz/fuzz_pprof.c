// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: the pprof decoder (gzip or raw), then re-encode and
 * decode again: whatever decodes must survive a round trip. The quick
 * validity proof must never accept what the decoder refuses, must agree
 * with it on the time and duration, and must say the same read wide or
 * not (profd_pprof_quick_valid_wide); the type names a check reads
 * must be the decoded profile's. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/pprof.h"
#include "../../core/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    char err[256];
    struct profd_profile *p = profd_pprof_decode(data, len, 16 << 20, err, sizeof(err));
    int64_t time_nanos, duration_nanos, narrow_time, narrow_duration;
    bool quick = profd_pprof_quick_valid(data, len, &time_nanos, &duration_nanos);
    if (quick && (!p || p->time_nanos != time_nanos || p->duration_nanos != duration_nanos))
        abort();   /* proven valid, yet refused or read otherwise */
    profd_pprof_quick_valid_wide(false);
    bool narrow = profd_pprof_quick_valid(data, len, &narrow_time, &narrow_duration);
    profd_pprof_quick_valid_wide(true);
    if (narrow != quick ||
        (quick && (narrow_time != time_nanos || narrow_duration != duration_nanos)))
        abort();   /* read wide (where the CPU can) and not, the same answer */
    if (!p)
        return 0;
    struct profd_type_names t;
    if (profd_pprof_check(data, len, 16 << 20, &time_nanos, &duration_nanos, &t, err,
                          sizeof(err)) != 0)
        abort();   /* decoded, yet refused by the check */
    for (uint32_t i = 0; i < t.nsample; i++) {
        const struct profd_str *s = &p->strings[p->sample_types[i].type];
        if (strncmp(t.sample[i], s->ptr, strlen(t.sample[i])))
            abort();   /* not the name the decoder found (cut, or up to a NUL) */
    }
    uint8_t *out;
    size_t n;
    profd_pprof_encode_raw(p, &out, &n);
    struct profd_profile *q = profd_pprof_decode(out, n, 64 << 20, err, sizeof(err));
    if (!q || q->nsamples != p->nsamples || q->nlocations != p->nlocations)
        abort();   /* our own output must decode to the same shape */
    profd_profile_free(q);
    free(out);
    profd_profile_free(p);
    return 0;
}
