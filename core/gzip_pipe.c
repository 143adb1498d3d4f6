// SPDX-License-Identifier: Apache-2.0
#include "gzip_pipe.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "gzip.h"

struct profd_gzip_pipe {
    pthread_t threads[PROFD_GZIP_PIPE_WORKERS];
    size_t nthreads;
    pthread_mutex_t mu;
    pthread_cond_t changed;   /* a chunk pushed, taken or committed, or the end */
    /* Chunks pushed and not yet taken by a worker, in order. */
    struct pb_writer queue[PROFD_GZIP_PIPE_DEPTH];
    size_t head, count;
    /* Buffers the workers are done with, for the encoder to fill again. */
    struct pb_writer spare[PROFD_GZIP_PIPE_DEPTH + PROFD_GZIP_PIPE_WORKERS];
    size_t nspare;
    size_t taken, committed;  /* chunks taken by workers; members in gz */
    bool closing;
    size_t stream_len;
    uint8_t *gz;              /* members in chunk order */
    size_t gz_len, gz_cap;
};

/* A worker: takes the next chunk, compresses it into a member of its own,
 * then waits for the members before it to be in the stream and appends. */
static void *compress_chunks(void *arg)
{
    struct profd_gzip_pipe *p = arg;
    uint8_t *member = NULL;
    size_t member_cap = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->count && !p->closing)
            pthread_cond_wait(&p->changed, &p->mu);
        if (!p->count)
            break;
        struct pb_writer chunk = p->queue[p->head];
        p->head = (p->head + 1) % PROFD_GZIP_PIPE_DEPTH;
        p->count--;
        size_t seq = p->taken++;
        pthread_cond_broadcast(&p->changed);   /* room for the encoder */
        pthread_mutex_unlock(&p->mu);
        size_t member_len = 0;
        profd_gzip_append(chunk.buf, chunk.len, p->stream_len, &member, &member_len, &member_cap);
        chunk.len = 0;
        pthread_mutex_lock(&p->mu);
        while (p->committed != seq)
            pthread_cond_wait(&p->changed, &p->mu);
        profd_grow(&p->gz, &p->gz_cap, p->gz_len + member_len, 1);
        memcpy(p->gz + p->gz_len, member, member_len);
        p->gz_len += member_len;
        p->committed++;
        p->spare[p->nspare++] = chunk;
        pthread_cond_broadcast(&p->changed);
    }
    pthread_mutex_unlock(&p->mu);
    free(member);
    profd_gzip_thread_cleanup();
    return NULL;
}

/* Workers: one per CPU (the encoding thread shares them), at most
 * PROFD_GZIP_PIPE_WORKERS. */
static size_t worker_count(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 2)
        return 1;
    return (size_t)cpus > PROFD_GZIP_PIPE_WORKERS ? PROFD_GZIP_PIPE_WORKERS : (size_t)cpus;
}

struct profd_gzip_pipe *profd_gzip_pipe_start(size_t stream_len)
{
    struct profd_gzip_pipe *p = profd_xcalloc(1, sizeof(*p));
    p->stream_len = stream_len;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->changed, NULL);
    for (size_t want = worker_count(); p->nthreads < want; p->nthreads++)
        if (pthread_create(&p->threads[p->nthreads], NULL, compress_chunks, p) != 0)
            break;
    if (!p->nthreads) {
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
    for (size_t i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    for (size_t i = 0; i < p->nspare; i++)
        free(p->spare[i].buf);
    pthread_cond_destroy(&p->changed);
    pthread_mutex_destroy(&p->mu);
    *out = p->gz;
    *len = p->gz_len;
    free(p);
}
