// SPDX-License-Identifier: Apache-2.0
/* pprof codec: perftools.profiles.Profile <-> the profile model. */
#ifndef PROFD_PPROF_H
#define PROFD_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profd/model.h"

/* Decompressed size above which a gzip'd profile is refused (gzip bombs). */
#define PROFD_PPROF_MAX_DECODED ((size_t)1 << 30)

/*
 * Decodes a pprof profile, gzip'd (sniffed by magic) or raw, and validates it
 * the way pprof's CheckValid does: string_table[0] == "", nonzero unique ids,
 * every reference resolvable, one value per sample type. On failure returns
 * NULL and writes a message naming the field and byte offset into err.
 * The input is not retained.
 */
struct profd_profile *profd_pprof_decode(const uint8_t *data, size_t len, size_t max_decoded,
                                         char *err, size_t errlen);

/*
 * Checks a profile as profd_pprof_decode would, with the same errors, and
 * keeps nothing but its time and duration, and its type names into *types
 * when types is not NULL: the model is built where the thread's previous
 * check built its own, and dropped. 0, or -1 with err filled.
 */
int profd_pprof_check(const uint8_t *data, size_t len, size_t max_decoded, int64_t *time_nanos,
                      int64_t *duration_nanos, struct profd_type_names *types, char *err,
                      size_t errlen);

/* The type names of raw[0..len), a profile already checked, read without
 * decoding it (pprof_types.c). */
void profd_pprof_type_names(const uint8_t *raw, size_t len, struct profd_type_names *out);
/* profd_pprof_type_names of a pprof as stored (gzip'd or not, inflating
 * to at most max_decoded bytes, into the buffer the thread's checks keep).
 * 0, or -1 with err filled. */
int profd_pprof_read_type_names(const uint8_t *data, size_t len, size_t max_decoded,
                                struct profd_type_names *out, char *err, size_t errlen);
/* The same names of a decoded profile. */
void profd_profile_type_names(const struct profd_profile *p, struct profd_type_names *out);

/*
 * Whether raw[0..len) is a profile profd_pprof_decode accepts, proven
 * without building it, for profiles whose ids are their positions + 1; its
 * time and duration then. False leaves the question to the decoder: the
 * profile may still be valid, or is not and the decoder says why.
 */
bool profd_pprof_quick_valid(const uint8_t *raw, size_t len, int64_t *time_nanos,
                             int64_t *duration_nanos);
/* Whether profd_pprof_quick_valid may read packed location ids 64 bytes
 * at a time where the CPU can (x86-64 with AVX-512BW and BMI2): yes unless
 * turned off. Its answers are the same either way; tests turn it off to
 * check the reading every CPU has. */
void profd_pprof_quick_valid_wide(bool allowed);

/* Same as profd_pprof_decode, taking ownership of a raw (uncompressed)
 * malloc'd buffer. */
struct profd_profile *profd_pprof_decode_owned(uint8_t *raw, size_t len, char *err, size_t errlen);

/*
 * Encodes p as raw pprof with ids 1..N in table order and string_table[0] ==
 * "". Returns a malloc'd buffer in *out. Never fails for a valid model.
 */
void profd_pprof_encode_raw(const struct profd_profile *p, uint8_t **out, size_t *len);

/* Encodes and gzips (or not); returns 0. gzip'd output is a member per
 * MiB of encoding, compressed as it is encoded. */
int profd_pprof_encode(const struct profd_profile *p, bool gzip, uint8_t **out, size_t *len);

#endif
