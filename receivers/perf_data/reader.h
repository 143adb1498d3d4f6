// SPDX-License-Identifier: Apache-2.0
/*
 * One perf.data input, whole file or stream, from records to emitted
 * profiles: perf_file hands out records, the order queue puts them in time
 * order, the session aggregates them, and each flush emits a batch with the
 * profiles built since the last one.
 */
#ifndef PROFD_PERF_READER_H
#define PROFD_PERF_READER_H

#include <stdbool.h>
#include <stdint.h>

#include "order.h"
#include "perf_file.h"
#include "profd/plugin.h"
#include "session.h"

struct perf_reader {
    const struct profd_host *h;
    struct profd_component *self;
    char *path;                  /* for logs and the __file__ label */
    struct perf_file file;       /* opened by the caller before perf_reader_start */
    struct perf_session *session;
    struct perf_order *order;
    uint64_t skipped;            /* malformed records skipped */
    bool progress;               /* show a progress line on stderr */
    bool mapped;                 /* file.data is a private file mapping */
    size_t released;             /* its bytes below this were dropped */
    int shown_percent;
};

/* A reader for path; the caller then opens rd->file (perf_open or
 * perf_open_stream) and calls perf_reader_start. */
struct perf_reader *perf_reader_new(const struct profd_host *h, struct profd_component *self,
                                    const char *path);
/* Starts the session over the opened file. */
void perf_reader_start(struct perf_reader *rd, const struct perf_session_options *o);
/* Reads records until the input needs more bytes (PERF_MORE), ends (0) or
 * is malformed (-1, err filled). Malformed single records are logged and
 * skipped, not fatal. */
int perf_reader_pump(struct perf_reader *rd, char *err, size_t errlen);
/* Emits the profiles aggregated since the last flush. With final, the
 * records still waiting for their turn in the time order go in first.
 * With discard, the profiles are dropped instead (a failed input).
 * Returns the number of profiles emitted. */
size_t perf_reader_flush(struct perf_reader *rd, bool final, bool discard);
/* Closes the file and frees everything. */
void perf_reader_free(struct perf_reader *rd);

#endif
