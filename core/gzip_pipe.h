// SPDX-License-Identifier: Apache-2.0
/*
 * gzip for a large encoding made a chunk at a time: each chunk becomes a
 * gzip member of its own, compressed on the pipe's threads (one per CPU,
 * up to PROFD_GZIP_PIPE_WORKERS) while the next chunks are being encoded;
 * members go into the stream in the chunks' order. At most
 * PROFD_GZIP_PIPE_DEPTH chunks wait, so the memory it holds stays a few
 * chunks whatever the stream's size.
 */
#ifndef PROFD_GZIP_PIPE_H
#define PROFD_GZIP_PIPE_H

#include <stddef.h>
#include <stdint.h>

#include "pb.h"

#define PROFD_GZIP_PIPE_DEPTH 4
#define PROFD_GZIP_PIPE_WORKERS 4

struct profd_gzip_pipe;

/* Starts a pipe for a stream of about stream_len bytes (which sets the
 * level, as for profd_gzip_append). NULL when no thread could be started:
 * compress in the calling thread then. */
struct profd_gzip_pipe *profd_gzip_pipe_start(size_t stream_len);
/* Hands the bytes w holds to the pipe as the next member and gives w an
 * empty buffer (one the pipe is done with, when there is one) to go on. */
void profd_gzip_pipe_push(struct profd_gzip_pipe *p, struct pb_writer *w);
/* Waits until every chunk is compressed, frees the pipe and sets the
 * compressed stream (malloc'd; NULL and 0 when nothing was pushed). */
void profd_gzip_pipe_finish(struct profd_gzip_pipe *p, uint8_t **out, size_t *len);

#endif
