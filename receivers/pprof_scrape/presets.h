// SPDX-License-Identifier: Apache-2.0
/* The profiles a job scrapes: presets as Go serves them, plus custom ones. */
#ifndef PPROF_SCRAPE_PRESETS_H
#define PPROF_SCRAPE_PRESETS_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

struct profile_def {
    char *name;              /* __name__ */
    char *path;              /* without the job's path_prefix */
    bool delta;              /* client-side delta of cumulative columns */
    bool profiler_deltas;    /* the profiler serves deltas of them itself (godeltaprof) */
    int64_t seconds;         /* ?seconds=, 0 for none */
    const char *expect;      /* a sample type name the response must have, or NULL */
    struct profd_str_list keep_sample_types;   /* borrowed from the config */
};

/* The profiles of job, in a new array (*n of them). Returns NULL with err
 * set for an unknown preset name. */
struct profile_def *presets_resolve(const struct job *job, size_t *n, char *err, size_t errlen);
void presets_free(struct profile_def *defs, size_t n);

#endif
