// SPDX-License-Identifier: Apache-2.0
/* A record's pprof as Pyroscope takes it. Pyroscope refuses a whole
 * request when one of its profiles has a sample type whose name holds a
 * '-' ("sample type contains -"), and perf names its events so (cpu-clock,
 * page-faults, L1-dcache-load-misses). */
#ifndef PROFD_PYROSCOPE_TYPE_NAMES_H
#define PROFD_PYROSCOPE_TYPE_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profd/plugin.h"

/* pprof bytes to send: borrowed from the record, or owned (freed with
 * pyroscope_pprof_free). */
struct pyroscope_pprof {
    const uint8_t *data;
    size_t len;
    uint8_t *owned;
};

/*
 * r's pprof, gzip'd, into *out: its own bytes when its type names (types,
 * read by host->record_type_names) hold no '-', else its model re-encoded
 * with each '-' in a sample or period type's name made '_' (*fixed set).
 * When types were cut, the names are read in full from r's model. 0, or
 * -1 with why set.
 */
int pyroscope_pprof_of(const struct profd_host *host, struct profd_record *r,
                       const struct profd_type_names *types, struct pyroscope_pprof *out,
                       bool *fixed, char *why, size_t whylen);

void pyroscope_pprof_free(struct pyroscope_pprof *pp);

#endif
