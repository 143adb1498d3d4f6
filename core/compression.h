// SPDX-License-Identifier: Apache-2.0
/* Content encodings by name (gzip, zstd, identity), for bodies and gRPC
 * messages; decompression is capped against bombs. */
#ifndef PROFD_COMPRESSION_H
#define PROFD_COMPRESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profd/plugin.h"   /* PROFD_DECOMPRESS_* */

/* True for the encodings below: "gzip", "zstd", "identity" and "" (none). */
bool profd_encoding_known(const char *encoding);

/* Compresses data into a new malloc'd buffer; -1 for an unknown encoding.
 * "identity" and "" copy. */
int profd_compress(const char *encoding, const uint8_t *data, size_t len, uint8_t **out,
                   size_t *out_len);

/* Decompresses into a new malloc'd buffer, refusing output above max_out.
 * 0, or a PROFD_DECOMPRESS_* code with err saying what was wrong. */
int profd_decompress(const char *encoding, const uint8_t *data, size_t len, size_t max_out,
                     uint8_t **out, size_t *out_len, char *err, size_t errlen);

#endif
