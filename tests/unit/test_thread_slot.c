// SPDX-License-Identifier: Apache-2.0
/* Per-thread state: made once per thread, its own for each thread, freed
 * as a thread exits or when released. */
#include <pthread.h>
#include <stdatomic.h>

#include "../../core/thread_slot.h"
#include "check.h"

static atomic_int destroyed;

struct state {
    int uses;
};

static void destroy(void *arg)
{
    atomic_fetch_add(&destroyed, 1);
    free(arg);
}

static struct profd_thread_slot slot = PROFD_THREAD_SLOT(sizeof(struct state), destroy);

static void *use_twice(void *out)
{
    struct state *a = profd_thread_slot_get(&slot), *b = profd_thread_slot_get(&slot);
    a->uses++;
    b->uses++;
    *(struct state **)out = a == b && a->uses == 2 ? a : NULL;
    return NULL;
}

TEST(each_thread_has_its_own_freed_as_it_exits)
{
    struct state *seen[4] = {0};
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        CHECK_INT(pthread_create(&t[i], NULL, use_twice, &seen[i]), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    CHECK_INT(atomic_load(&destroyed), 4);
    for (int i = 0; i < 4; i++)
        CHECK(seen[i] != NULL);   /* made once, kept between uses */
}

TEST(releasing_frees_now_and_a_next_use_starts_anew)
{
    int before = atomic_load(&destroyed);
    struct state *s = profd_thread_slot_get(&slot);
    s->uses = 7;
    profd_thread_slot_release(&slot);
    CHECK_INT(atomic_load(&destroyed), before + 1);
    profd_thread_slot_release(&slot);   /* nothing held: nothing done */
    CHECK_INT(atomic_load(&destroyed), before + 1);
    CHECK_INT(((struct state *)profd_thread_slot_get(&slot))->uses, 0);
    profd_thread_slot_release(&slot);
}

RUN_TESTS()
