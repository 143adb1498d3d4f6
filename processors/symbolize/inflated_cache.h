// SPDX-License-Identifier: Apache-2.0
/*
 * Inflated copies of ELF files whose sections are compressed
 * (SHF_COMPRESSED, zlib or zstd: most distributions' debug files), kept in
 * a directory under their build-ids. elfutils inflates every compressed
 * DWARF section of a file it opens into memory (glibc's debug file: 2.6 MB
 * become 10 MB, for a profile that needs a few of its units); a copy with
 * the sections stored plainly is mapped instead, so only the pages a
 * profile reads are brought in, from the page cache, and given back after
 * it. elfutils 0.188 cannot read zstd-compressed sections at all: the copy
 * makes such files readable.
 *
 * A copy is made once per build-id, with bounded memory (sections are
 * inflated in chunks), under a temporary name renamed into place, so that
 * processes sharing the directory never see half a copy. The directory is
 * kept within a size by removing the least recently used copies (a copy's
 * modification time is its last use).
 */
#ifndef PROFD_SYMBOLIZE_INFLATED_CACHE_H
#define PROFD_SYMBOLIZE_INFLATED_CACHE_H

#include <stddef.h>
#include <stdint.h>

struct inflated_cache;

/* How the cache answered since it was made. */
struct inflated_cache_stats {
    uint64_t found, made, failed;
};

/* The cache in dir (made with its parents on the first copy) holding at
 * most max_bytes of copies. */
struct inflated_cache *inflated_cache_new(const char *dir, uint64_t max_bytes);
void inflated_cache_free(struct inflated_cache *c);

/* A descriptor of the inflated copy of the ELF file open as fd, which is
 * then closed; the copy is made when the cache has none. Returns fd itself
 * when the file has no compressed section or no build-id, when its layout
 * is not one this copies (byte order other than the host's, segments
 * reaching compressed sections), or when the copy cannot be made (disk
 * full, bad compressed data): elfutils then reads the file as it is. */
int inflated_cache_open(struct inflated_cache *c, int fd);

struct inflated_cache_stats inflated_cache_stats(const struct inflated_cache *c);
/* Why the last copy that failed could not be made ("" before any). */
const char *inflated_cache_last_error(const struct inflated_cache *c);

#endif
