// SPDX-License-Identifier: Apache-2.0
#include "thread_slot.h"

#include <stdlib.h>

#include "alloc.h"

static pthread_mutex_t making = PTHREAD_MUTEX_INITIALIZER;   /* keys, made once each */

/* Makes s's key on first use. */
static void ready(struct profd_thread_slot *s)
{
    if (atomic_load_explicit(&s->ready, memory_order_acquire))
        return;
    pthread_mutex_lock(&making);
    if (!atomic_load_explicit(&s->ready, memory_order_relaxed)) {
        if (pthread_key_create(&s->key, s->destroy) != 0)
            abort();
        atomic_store_explicit(&s->ready, true, memory_order_release);
    }
    pthread_mutex_unlock(&making);
}

void *profd_thread_slot_get(struct profd_thread_slot *s)
{
    ready(s);
    void *v = pthread_getspecific(s->key);
    if (!v) {
        v = profd_xcalloc(1, s->size);
        if (pthread_setspecific(s->key, v) != 0)
            profd_out_of_memory(sizeof(void *));
    }
    return v;
}

void profd_thread_slot_release(struct profd_thread_slot *s)
{
    if (!atomic_load_explicit(&s->ready, memory_order_acquire))
        return;
    void *v = pthread_getspecific(s->key);
    if (!v)
        return;
    pthread_setspecific(s->key, NULL);
    s->destroy(v);
}
