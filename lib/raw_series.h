// SPDX-License-Identifier: Apache-2.0
/*
 * Series of raw pprof samples, the shape Parca's WriteRaw and Pyroscope's
 * push.v1 share: RawProfileSeries { labels = 1; samples = 2: RawSample {
 * raw_profile = 1 } }, where the labels are a LabelSet message (Parca) or
 * repeated LabelPair fields (Pyroscope), each label { name = 1, value = 2 }.
 */
#ifndef PROFD_LIB_RAW_SERIES_H
#define PROFD_LIB_RAW_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profd/plugin.h"

enum raw_labels { RAW_LABEL_SET, RAW_LABEL_PAIRS };

/* The longest label name and value a series may have, Pyroscope's
 * defaults (Parca sets none). */
#define RAW_MAX_LABEL_NAME 1024
#define RAW_MAX_LABEL_VALUE 2048

/* A growable protobuf output buffer. */
struct pb_buf {
    uint8_t *p;
    size_t len, cap;
};

/* A length-delimited field: tag, length, bytes. */
void pb_buf_bytes(struct pb_buf *b, unsigned field, const void *data, size_t len);

/*
 * Adds a record to b for every raw sample of one encoded RawProfileSeries,
 * with the series' labels (Prometheus names, none twice; in Pyroscope's
 * pairs a name's dots are made underscores, as its distributor makes them)
 * and the pprof as sent, checked by host->record_add_pprof against
 * max_decoded. When require_name, a series without __name__ is refused.
 * Returns false with why set (the series index, the sample, what) when the
 * series is refused; records added so far stay in b.
 */
bool raw_series_read(const struct profd_host *host, const uint8_t *data, size_t len,
                     enum raw_labels shape, bool require_name, size_t index, size_t max_decoded,
                     struct profd_batch *b, char *why, size_t whylen);

/* Appends record r as one RawProfileSeries (field `field` of the request)
 * to out: labels (r's own when NULL) and its pprof, gzip'd, re-encoded with
 * ids 1..N when strict_ids (else the original bytes when unchanged). False
 * with why set when the record cannot be encoded. */
bool raw_series_write(const struct profd_host *host, struct profd_record *r,
                      const struct profd_labels *labels, enum raw_labels shape, bool strict_ids,
                      unsigned field, struct pb_buf *out, char *why, size_t whylen);

/* Appends one RawProfileSeries of labels and the pprof bytes given
 * (field `field` of the request) to out. */
void raw_series_write_pprof(const struct profd_labels *labels, const uint8_t *pprof,
                            size_t pprof_len, enum raw_labels shape, unsigned field,
                            struct pb_buf *out);

#endif
