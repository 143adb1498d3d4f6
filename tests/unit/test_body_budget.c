// SPDX-License-Identifier: Apache-2.0
/* The bytes of request bodies a server holds (core/body_budget.c):
 * counted from 64 KiB, only ever upwards for a request, refused past the
 * limit with nothing taken, given back once; and threads counting and
 * giving back at once never take the total past the limit. */
#include "check.h"

#include <pthread.h>

#include "../../core/body_budget.h"

#define KIB ((size_t)1 << 10)

TEST(bodies_count_from_64_kib_and_only_upwards)
{
    struct profd_body_budget b = {.limit = 1024 * KIB};
    size_t counted = 0;
    CHECK(profd_body_budget_count(&b, &counted, 64 * KIB - 1));
    CHECK_INT(counted, 0);
    CHECK_INT(atomic_load(&b.held), 0);
    CHECK(profd_body_budget_count(&b, &counted, 100 * KIB));   /* announced */
    CHECK_INT(counted, 100 * KIB);
    CHECK(profd_body_budget_count(&b, &counted, 70 * KIB));    /* what came of it so far */
    CHECK_INT(atomic_load(&b.held), 100 * KIB);
    CHECK(profd_body_budget_count(&b, &counted, 300 * KIB));   /* a chunked body's next chunk */
    CHECK_INT(atomic_load(&b.held), 300 * KIB);
    profd_body_budget_release(&b, &counted);
    CHECK_INT(counted, 0);
    CHECK_INT(atomic_load(&b.held), 0);
    profd_body_budget_release(&b, &counted);                   /* a second time: nothing */
    CHECK_INT(atomic_load(&b.held), 0);
}

TEST(a_body_with_no_room_takes_nothing)
{
    struct profd_body_budget b = {.limit = 1024 * KIB};
    size_t first = 0, second = 0, third = 0;
    CHECK(profd_body_budget_count(&b, &first, 900 * KIB));
    CHECK(!profd_body_budget_count(&b, &second, 200 * KIB));
    CHECK_INT(second, 0);
    CHECK_INT(atomic_load(&b.held), 900 * KIB);
    CHECK(profd_body_budget_count(&b, &third, 124 * KIB));     /* exactly the room left */
    CHECK(!profd_body_budget_count(&b, &first, 901 * KIB));    /* growing past it, neither */
    CHECK_INT(first, 900 * KIB);
    CHECK(profd_body_budget_count(&b, &second, 10 * KIB));     /* small ones always */
    profd_body_budget_release(&b, &first);
    CHECK(profd_body_budget_count(&b, &second, 200 * KIB));
    CHECK_INT(atomic_load(&b.held), 324 * KIB);
}

TEST(no_limit_still_counts)
{
    struct profd_body_budget b = {.limit = 0};
    size_t counted = 0;
    CHECK(profd_body_budget_count(&b, &counted, (size_t)1 << 40));
    CHECK_INT(atomic_load(&b.held), (size_t)1 << 40);
    profd_body_budget_release(&b, &counted);
    CHECK_INT(atomic_load(&b.held), 0);
}

/* Threads taking and giving back bodies as fast as they can. */
struct racer {
    struct profd_body_budget *b;
    size_t taken, over;   /* bodies counted; times the total seen past the limit */
};

static void *race(void *arg)
{
    struct racer *r = arg;
    for (int i = 0; i < 200000; i++) {
        size_t counted = 0;
        if (profd_body_budget_count(r->b, &counted, 300 * KIB)) {
            r->taken++;
            if (atomic_load(&r->b->held) > r->b->limit)
                r->over++;
            profd_body_budget_release(r->b, &counted);
        }
    }
    return NULL;
}

TEST(threads_at_once_never_pass_the_limit)
{
    struct profd_body_budget b = {.limit = 1000 * KIB};   /* room for three at a time */
    struct racer racers[4];
    pthread_t threads[4];
    for (int i = 0; i < 4; i++) {
        racers[i] = (struct racer){&b, 0, 0};
        CHECK(pthread_create(&threads[i], NULL, race, &racers[i]) == 0);
    }
    size_t taken = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(threads[i], NULL);
        CHECK_INT(racers[i].over, 0);
        taken += racers[i].taken;
    }
    CHECK(taken > 0);
    CHECK_INT(atomic_load(&b.held), 0);
}

RUN_TESTS()
