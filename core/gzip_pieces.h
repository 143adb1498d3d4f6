// SPDX-License-Identifier: Apache-2.0
/*
 * gzip of a stream made in pieces: a caller-supplied function writes
 * piece k's bytes, each piece becomes a gzip member of its own (RFC 1952
 * readers take a series of members as one stream), and the members go
 * into the stream in piece order. A large stream's pieces are written and
 * compressed on several threads at once (one per CPU, the calling thread
 * one of them, up to PROFD_GZIP_PIECES_THREADS), so making the bytes is
 * parallel too, not only compressing them; a thread holds one piece
 * uncompressed at a time, so the stream is never whole uncompressed.
 */
#ifndef PROFD_GZIP_PIECES_H
#define PROFD_GZIP_PIECES_H

#include <stddef.h>
#include <stdint.h>

#include "pb.h"

#define PROFD_GZIP_PIECES_THREADS 4
/* From this stream size on (about), pieces are made on several threads:
 * below it, the threads' buffers and compressors (a few MiB) cost more
 * than the time they save. */
#define PROFD_GZIP_PIECES_PARALLEL_FROM (16u << 20)

/* Writes piece `piece` of the stream at the end of w (empty on entry).
 * Called from several threads at once for different pieces: it must only
 * read what they share. */
typedef void profd_gzip_piece_fn(void *ctx, size_t piece, struct pb_writer *w);

/* Makes the gzip stream of pieces [0, npieces) written by make(ctx, ...),
 * about stream_len bytes uncompressed in all (which sets the level, as for
 * profd_gzip_append, and whether threads are used). Sets *out (malloc'd;
 * NULL and 0 when npieces is 0) and *len. */
void profd_gzip_pieces(size_t npieces, profd_gzip_piece_fn *make, void *ctx, size_t stream_len,
                       uint8_t **out, size_t *len);

#endif
