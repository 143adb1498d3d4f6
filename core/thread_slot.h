// SPDX-License-Identifier: Apache-2.0
/*
 * State each thread makes on first use and keeps for its next use (a
 * decode's arrays, a check's buffers, (de)compressors, match data), freed
 * as the thread exits, whoever started it. The main thread's is freed by
 * no one unless it releases it: reachable to the end, not a leak.
 */
#ifndef PROFD_THREAD_SLOT_H
#define PROFD_THREAD_SLOT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct profd_thread_slot {
    size_t size;                 /* what each thread's state takes, zeroed to start */
    void (*destroy)(void *);     /* frees a thread's state (what it holds, and itself) */
    atomic_bool ready;           /* key made */
    pthread_key_t key;
};

/* A slot for state of size bytes freed by destroy, as a static's initializer. */
#define PROFD_THREAD_SLOT(size_, destroy_) {.size = (size_), .destroy = (destroy_)}

/* The calling thread's state in s, made (zeroed) on its first call. */
void *profd_thread_slot_get(struct profd_thread_slot *s);
/* Frees the calling thread's state in s now, if it has any (a next get
 * makes it anew). */
void profd_thread_slot_release(struct profd_thread_slot *s);

#endif
