// SPDX-License-Identifier: Apache-2.0
/* Client-side delta: priming, subtraction by stack and labels, instant
 * columns untouched, zero samples removed, restarts, duplicated stacks. */
#include "check.h"

#include "../../core/arena.h"
#include "../../core/delta.h"
#include "../../core/profile.h"

/* A profile with columns alloc_space (cumulative) and inuse_space (instant)
 * and one sample per entry of values: stack {function f<i>}, value pairs. */
static struct profd_profile *make(size_t n, const char *const *funcs, const int64_t (*values)[2],
                                  const char *label)
{
    struct profd_profile *p = profd_profile_new(0);
    struct profd_arena *a = p->arena;
    p->nsample_types = 2;
    p->sample_types = profd_arena_alloc(a, 2 * sizeof(*p->sample_types));
    p->sample_types[0] = (struct profd_value_type){profd_profile_intern(p, "alloc_space", 11),
                                                   profd_profile_intern(p, "bytes", 5)};
    p->sample_types[1] = (struct profd_value_type){profd_profile_intern(p, "inuse_space", 11),
                                                   profd_profile_intern(p, "bytes", 5)};
    p->functions = profd_arena_zalloc(a, n * sizeof(*p->functions));
    p->locations = profd_arena_zalloc(a, n * sizeof(*p->locations));
    p->samples = profd_arena_zalloc(a, n * sizeof(*p->samples));
    for (size_t i = 0; i < n; i++) {
        p->functions[i].name = profd_profile_intern(p, funcs[i], strlen(funcs[i]));
        p->locations[i].lines = profd_arena_zalloc(a, sizeof(struct profd_line));
        p->locations[i].lines[0].function = (uint32_t)i + 1;
        p->locations[i].nlines = 1;
        p->locations[i].address = 0x1000 + (uint64_t)funcs[i][0] * 16;   /* one per function */
        struct profd_sample *s = &p->samples[i];
        s->locations = profd_arena_alloc(a, sizeof(uint32_t));
        s->locations[0] = (uint32_t)i + 1;
        s->nlocations = 1;
        s->values = profd_arena_alloc(a, 2 * sizeof(int64_t));
        s->values[0] = values[i][0];
        s->values[1] = values[i][1];
        if (label) {
            s->labels = profd_arena_zalloc(a, sizeof(*s->labels));
            s->labels[0].key = profd_profile_intern(p, "tenant", 6);
            s->labels[0].str = profd_profile_intern(p, label, strlen(label));
            s->nlabels = 1;
        }
    }
    p->nfunctions = p->nlocations = (uint32_t)n;
    p->nsamples = n;
    return p;
}

static const bool cumulative[2] = {true, false};

TEST(prime_then_subtract_keeping_instant_columns)
{
    struct profd_delta_state *st = NULL;
    const char *f[] = {"a", "b", "c"};
    struct profd_profile *p1 = make(3, f, (const int64_t[][2]){{100, 7}, {50, 5}, {10, 1}}, NULL);
    CHECK_INT(profd_profile_delta(&st, p1, cumulative), PROFD_DELTA_PRIMED);
    CHECK_INT(p1->samples[0].values[0], 100);   /* untouched */
    /* Same stacks in another order, with new ids: matched by meaning. */
    const char *g[] = {"c", "a", "b", "d"};
    struct profd_profile *p2 =
        make(4, g, (const int64_t[][2]){{10, 9}, {130, 8}, {50, 0}, {5, 2}}, NULL);
    CHECK_INT(profd_profile_delta(&st, p2, cumulative), PROFD_DELTA_OK);
    /* c: 10-10=0 but inuse 9 -> kept; a: 30, inuse 8; b: 0 and 0 -> removed; d: new, 5. */
    CHECK_INT(p2->nsamples, 3);
    CHECK_INT(p2->samples[0].values[0], 0);
    CHECK_INT(p2->samples[0].values[1], 9);
    CHECK_INT(p2->samples[1].values[0], 30);
    CHECK_INT(p2->samples[1].values[1], 8);
    CHECK_INT(p2->samples[2].values[0], 5);
    CHECK(profd_delta_state_size(st) > 0);
    profd_profile_free(p1);
    profd_profile_free(p2);
    profd_delta_state_free(st);
}

TEST(restart_resets_without_negative_values)
{
    struct profd_delta_state *st = NULL;
    const char *f[] = {"a", "b"};
    struct profd_profile *p1 = make(2, f, (const int64_t[][2]){{100, 1}, {50, 1}}, NULL);
    struct profd_profile *p2 = make(2, f, (const int64_t[][2]){{20, 1}, {60, 1}}, NULL);
    struct profd_profile *p3 = make(2, f, (const int64_t[][2]){{25, 1}, {70, 1}}, NULL);
    profd_profile_delta(&st, p1, cumulative);
    CHECK_INT(profd_profile_delta(&st, p2, cumulative), PROFD_DELTA_RESET);
    CHECK_INT(p2->samples[0].values[0], 20);   /* everything since the restart */
    CHECK_INT(p2->samples[1].values[0], 60);
    CHECK_INT(profd_profile_delta(&st, p3, cumulative), PROFD_DELTA_OK);   /* from the new base */
    CHECK_INT(p3->samples[0].values[0], 5);
    CHECK_INT(p3->samples[1].values[0], 10);
    /* A stack that disappears is a restart too (cumulative counts never vanish). */
    const char *only_a[] = {"a"};
    struct profd_profile *p4 = make(1, only_a, (const int64_t[][2]){{30, 1}}, NULL);
    CHECK_INT(profd_profile_delta(&st, p4, cumulative), PROFD_DELTA_RESET);
    profd_profile_free(p1);
    profd_profile_free(p2);
    profd_profile_free(p3);
    profd_profile_free(p4);
    profd_delta_state_free(st);
}

TEST(labels_are_part_of_the_identity_and_duplicates_sum)
{
    struct profd_delta_state *st = NULL;
    const char *f[] = {"a", "a"};
    struct profd_profile *p1 = make(2, f, (const int64_t[][2]){{10, 0}, {20, 0}}, "x");
    CHECK_INT(profd_profile_delta(&st, p1, cumulative), PROFD_DELTA_PRIMED);
    struct profd_profile *p2 = make(2, f, (const int64_t[][2]){{15, 0}, {20, 0}}, "x");
    CHECK_INT(profd_profile_delta(&st, p2, cumulative), PROFD_DELTA_OK);
    /* Both samples are the same identity: 35 - 30 = 5 in all. */
    int64_t total = 0;
    for (size_t i = 0; i < p2->nsamples; i++)
        total += p2->samples[i].values[0];
    CHECK_INT(total, 5);
    struct profd_profile *p3 = make(2, f, (const int64_t[][2]){{15, 0}, {20, 0}}, "y");
    CHECK_INT(profd_profile_delta(&st, p3, cumulative), PROFD_DELTA_RESET);   /* x vanished */
    profd_profile_free(p1);
    profd_profile_free(p2);
    profd_profile_free(p3);
    profd_delta_state_free(st);
}

TEST(sums_past_int64_are_held_at_its_limit)
{
    /* a target's hostile profiles: duplicates whose values add up past
     * INT64_MAX, then a first duplicate far below what they summed */
    struct profd_delta_state *st = NULL;
    const char *f[] = {"a", "a", "a"};
    struct profd_profile *p1 =
        make(3, f, (const int64_t[][2]){{INT64_MAX - 1, 0}, {INT64_MAX - 1, 0}, {5, 0}}, NULL);
    CHECK_INT(profd_profile_delta(&st, p1, cumulative), PROFD_DELTA_PRIMED);   /* INT64_MAX */
    const int64_t low_first[][2] = {{INT64_MIN, 0}, {INT64_MAX, 0}, {INT64_MAX, 0}};
    struct profd_profile *p2 = make(3, f, low_first, NULL);
    CHECK_INT(profd_profile_delta(&st, p2, cumulative), PROFD_DELTA_RESET);   /* INT64_MAX - 1 */
    struct profd_profile *p3 = make(3, f, low_first, NULL);
    CHECK_INT(profd_profile_delta(&st, p3, cumulative), PROFD_DELTA_OK);
    CHECK_INT(p3->samples[0].values[0], INT64_MIN);   /* INT64_MIN - (INT64_MAX - 1), held */
    profd_profile_free(p1);
    profd_profile_free(p2);
    profd_profile_free(p3);
    profd_delta_state_free(st);
}

RUN_TESTS()
