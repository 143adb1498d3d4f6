// SPDX-License-Identifier: Apache-2.0
/* gzip through libdeflate (and ISA-L's igzip for large streams), with a
 * hard cap on the decompressed size. */
#ifndef PROFD_GZIP_H
#define PROFD_GZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True when data starts with the gzip magic 1f 8b. */
bool profd_is_gzip(const uint8_t *data, size_t len);

/*
 * Decompresses every gzip member of data into a new malloc'd buffer. Refuses
 * output above max_out bytes. Returns 0, or with err filled -2 when the
 * output would exceed max_out and -1 when the data is not gzip.
 */
int profd_gunzip(const uint8_t *data, size_t len, size_t max_out, uint8_t **out, size_t *out_len,
                 char *err, size_t errlen);

/* Same, into *buf (malloc'd, *cap bytes, or NULL), grown or replaced as
 * needed and kept by the caller whatever the result. */
int profd_gunzip_into(const uint8_t *data, size_t len, size_t max_out, uint8_t **buf,
                      size_t *cap, size_t *out_len, char *err, size_t errlen);

/* Compresses data into a new malloc'd gzip buffer, at a level by its size
 * (5 up to 4 MiB, then faster ones). */
void profd_gzip(const uint8_t *data, size_t len, uint8_t **out, size_t *out_len);

/* Compresses data as one more gzip member at the end of *out (*out_len
 * bytes used of *out_cap, grown as needed; *out NULL to start), at the
 * level profd_gzip picks for stream_len bytes (the whole stream's, about).
 * Readers of gzip take a series of members as one stream (RFC 1952). */
void profd_gzip_append(const uint8_t *data, size_t len, size_t stream_len, uint8_t **out,
                       size_t *out_len, size_t *out_cap);

/* Frees the calling thread's (de)compressors. Other threads' go as they
 * exit; the main thread, whose exit does not free them, calls this. */
void profd_gzip_thread_cleanup(void);

#endif
