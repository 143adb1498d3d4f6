// SPDX-License-Identifier: Apache-2.0
#include "gzip_pieces.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/cpus.h"
#include "alloc.h"
#include "gzip.h"
#include "huge_arena.h"

/* Pieces compressed and not yet in the stream, at most: a thread that
 * would go further ahead of the stream waits. */
#define WINDOW (2 * PROFD_GZIP_PIECES_THREADS)

/* A piece's member, compressed and waiting for the members before it. */
struct member {
    uint8_t *buf;
    size_t len, cap;
    bool ready;
};

/* A stream being made: what its threads share. */
struct stream {
    size_t npieces;
    profd_gzip_piece_fn *make;
    void *ctx;
    size_t stream_len;
    pthread_mutex_t mu;
    pthread_cond_t committed_some;  /* members went into the stream */
    size_t taken;                   /* pieces taken by threads */
    size_t committed;               /* members in gz, in piece order */
    struct member window[WINDOW];   /* piece k's at k % WINDOW */
    uint8_t *gz;
    size_t gz_len, gz_cap;
};

/* Appends the members that are ready, in order, from the next one the
 * stream lacks. Called with s->mu held. */
static void commit_ready(struct stream *s)
{
    struct member *m;
    while ((m = &s->window[s->committed % WINDOW])->ready) {
        if (s->gz_len + m->len > s->gz_cap) {
            s->gz_cap = profd_grown_cap(s->gz_cap, s->gz_len + m->len);
            s->gz = profd_xrealloc_large(s->gz, s->gz_cap);
        }
        memcpy(s->gz + s->gz_len, m->buf, m->len);
        s->gz_len += m->len;
        m->ready = false;
        s->committed++;
    }
}

/* One thread's part: takes the next piece (once it is less than WINDOW
 * ahead of the stream), writes and compresses it into its member, then
 * puts in the stream whatever members are ready in order; until no piece
 * is left. No thread waits for another's piece to be done. */
static void *make_pieces(void *arg)
{
    struct stream *s = arg;
    struct pb_writer w = {0};
    int arena = profd_huge_arena_enter();   /* its piece and member, tens of MiB in all */
    pthread_mutex_lock(&s->mu);
    while (s->taken < s->npieces) {
        size_t piece = s->taken;
        if (piece >= s->committed + WINDOW) {
            pthread_cond_wait(&s->committed_some, &s->mu);
            continue;
        }
        s->taken++;
        struct member *m = &s->window[piece % WINDOW];
        pthread_mutex_unlock(&s->mu);
        w.len = 0;
        s->make(s->ctx, piece, &w);
        m->len = 0;
        profd_gzip_append(w.buf, w.len, s->stream_len, &m->buf, &m->len, &m->cap);
        pthread_mutex_lock(&s->mu);
        m->ready = true;
        size_t before = s->committed;
        commit_ready(s);
        if (s->committed != before)
            pthread_cond_broadcast(&s->committed_some);
    }
    pthread_mutex_unlock(&s->mu);
    free(w.buf);
    profd_huge_arena_leave(arena);
    return NULL;
}

/* A thread of its own: make_pieces (its compressor freed as it exits). */
static void *piece_thread(void *arg)
{
    make_pieces(arg);
    return NULL;
}

/* Threads besides the calling one: one per other CPU, at most
 * PROFD_GZIP_PIECES_THREADS in all, none for a small stream. */
static size_t extra_threads(size_t stream_len, size_t npieces)
{
    size_t cpus = cpus_usable();
    if (stream_len < PROFD_GZIP_PIECES_PARALLEL_FROM || cpus < 2 || npieces < 2)
        return 0;
    size_t n = cpus < PROFD_GZIP_PIECES_THREADS ? cpus : PROFD_GZIP_PIECES_THREADS;
    return (n < npieces ? n : npieces) - 1;
}

/* Every piece in order on the calling thread, each member compressed
 * straight into the stream. */
static void make_pieces_here(struct stream *s)
{
    struct pb_writer w = {0};
    for (size_t piece = 0; piece < s->npieces; piece++) {
        w.len = 0;
        s->make(s->ctx, piece, &w);
        profd_gzip_append(w.buf, w.len, s->stream_len, &s->gz, &s->gz_len, &s->gz_cap);
    }
    free(w.buf);
}

/* Gives a large stream room for all of it at once, as if nothing
 * compressed, in huge pages: room never written costs address space alone,
 * where a buffer grown as members come would be copied into pages faulted
 * in one by one (thousands of faults for a stream of tens of MiB). A small
 * stream grows as it goes. */
static void reserve_stream(struct stream *s)
{
    size_t room = s->stream_len + s->stream_len / 16 + s->npieces * 64 + 4096;
    if (room < HUGE_PAGES_FROM)
        return;
    s->gz = profd_xmalloc_large(room);
    s->gz_cap = room;
}

void profd_gzip_pieces(size_t npieces, profd_gzip_piece_fn *make, void *ctx, size_t stream_len,
                       uint8_t **out, size_t *len)
{
    struct stream s = {.npieces = npieces, .make = make, .ctx = ctx, .stream_len = stream_len};
    reserve_stream(&s);
    pthread_t threads[PROFD_GZIP_PIECES_THREADS];
    size_t nthreads = 0, want = extra_threads(stream_len, npieces);
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.committed_some, NULL);
    while (nthreads < want && pthread_create(&threads[nthreads], NULL, piece_thread, &s) == 0)
        nthreads++;
    if (nthreads)
        make_pieces(&s);
    else
        make_pieces_here(&s);
    for (size_t i = 0; i < nthreads; i++)
        pthread_join(threads[i], NULL);
    pthread_cond_destroy(&s.committed_some);
    for (size_t i = 0; i < WINDOW; i++)
        free(s.window[i].buf);
    pthread_mutex_destroy(&s.mu);
    *out = s.gz;
    *len = s.gz_len;
}
