// SPDX-License-Identifier: Apache-2.0
#include "gzip_pipe.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "alloc.h"
#include "gzip.h"

struct profd_gzip_pipe {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t changed;   /* a chunk pushed or compressed, or the end */
    /* Chunks in order; the first stays queued while it is compressed. */
    struct pb_writer queue[PROFD_GZIP_PIPE_DEPTH];
    size_t head, count;
    /* Buffers the thread is done with, for the encoder to fill again. */
    struct pb_writer spare[PROFD_GZIP_PIPE_DEPTH];
    size_t nspare;
    bool closing;
    size_t stream_len;
    uint8_t *gz;              /* written by the thread alone until it ends */
    size_t gz_len, gz_cap;
};

static void *compress_chunks(void *arg)
{
    struct profd_gzip_pipe *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->count && !p->closing)
            pthread_cond_wait(&p->changed, &p->mu);
        if (!p->count)
            break;
        struct pb_writer chunk = p->queue[p->head];
        pthread_mutex_unlock(&p->mu);
        profd_gzip_append(chunk.buf, chunk.len, p->stream_len, &p->gz, &p->gz_len, &p->gz_cap);
        chunk.len = 0;
        pthread_mutex_lock(&p->mu);
        p->head = (p->head + 1) % PROFD_GZIP_PIPE_DEPTH;
        p->count--;
        p->spare[p->nspare++] = chunk;
        pthread_cond_broadcast(&p->changed);
    }
    pthread_mutex_unlock(&p->mu);
    profd_gzip_thread_cleanup();
    return NULL;
}

struct profd_gzip_pipe *profd_gzip_pipe_start(size_t stream_len)
{
    struct profd_gzip_pipe *p = profd_xcalloc(1, sizeof(*p));
    p->stream_len = stream_len;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->changed, NULL);
    if (pthread_create(&p->thread, NULL, compress_chunks, p) != 0) {
        pthread_cond_destroy(&p->changed);
        pthread_mutex_destroy(&p->mu);
        free(p);
        return NULL;
    }
    return p;
}

void profd_gzip_pipe_push(struct profd_gzip_pipe *p, struct pb_writer *w)
{
    pthread_mutex_lock(&p->mu);
    while (p->count == PROFD_GZIP_PIPE_DEPTH)
        pthread_cond_wait(&p->changed, &p->mu);
    p->queue[(p->head + p->count++) % PROFD_GZIP_PIPE_DEPTH] = *w;
    *w = p->nspare ? p->spare[--p->nspare] : (struct pb_writer){0};
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->mu);
}

void profd_gzip_pipe_finish(struct profd_gzip_pipe *p, uint8_t **out, size_t *len)
{
    pthread_mutex_lock(&p->mu);
    p->closing = true;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    for (size_t i = 0; i < p->nspare; i++)
        free(p->spare[i].buf);
    pthread_cond_destroy(&p->changed);
    pthread_mutex_destroy(&p->mu);
    *out = p->gz;
    *len = p->gz_len;
    free(p);
}
