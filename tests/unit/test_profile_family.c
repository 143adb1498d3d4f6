// SPDX-License-Identifier: Apache-2.0
#include "check.h"

#include <string.h>

#include "../../core/arena.h"
#include "../../core/pprof.h"
#include "../../core/profile.h"
#include "../../lib/profile_family.c"

/* The family of p's types, as a receiver reads them from its record. */
static const char *family_of(const struct profd_profile *p, const char *hint, char *buf,
                                  size_t buflen)
{
    struct profd_type_names types;
    profd_profile_type_names(p, &types);
    return profile_family_of_types(&types, hint, buf, buflen);
}

/* A profile with one sample type and a period type. */
static struct profd_profile *typed(const char *period_type, const char *sample_type)
{
    struct profd_profile *p = profd_profile_new(0);
    p->period_type.type = profd_profile_intern(p, period_type, strlen(period_type));
    p->sample_types = profd_arena_alloc(p->arena, sizeof(*p->sample_types));
    p->sample_types[0].type = profd_profile_intern(p, sample_type, strlen(sample_type));
    p->nsample_types = 1;
    return p;
}

TEST(families_from_types)
{
    struct {
        const char *period, *sample, *hint, *want;
    } cases[] = {
        {"cpu", "samples", "x.pb.gz", "process_cpu"},
        {"", "process_cpu_time", NULL, "process_cpu"},
        {"space", "alloc_objects", "x.pb.gz", "memory"},
        {"", "inuse_space", "x.pb.gz", "memory"},
        {"", "objects", NULL, "memory"},
        {"goroutine", "goroutine", "x.pb.gz", "goroutine"},
        {"", "goroutines", NULL, "goroutine"},
        {"threadcreate", "threadcreate", "x", "threadcreate"},
        {"contentions", "delay", "app-block.pb.gz", "block"},
        {"contentions", "delay", "app.pb.gz", "mutex"},
        {"contentions", "delay", NULL, "mutex"},
        {"", "block_count", "app", "block"},
        {"", "mutex_duration", "app-block", "mutex"},
        {"wall", "samples", "x", "wall"},   /* fgprof: wall before the cpu rule */
        {"", "wall", "x", "wall"},
        {"", "exceptions", "x", "exceptions"},
        {"", "", "x", "unknown"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        struct profd_profile *p = typed(cases[i].period, cases[i].sample);
        char buf[64];
        CHECK_STR(family_of(p, cases[i].hint, buf, sizeof(buf)), cases[i].want);
        profd_profile_free(p);
    }
}

TEST(a_long_first_type_is_cut_to_the_buffer)
{
    struct profd_profile *p = typed("", "a_sample_type_longer_than_the_buffer");
    char buf[8];
    CHECK_STR(family_of(p, NULL, buf, sizeof(buf)), "a_sampl");
    profd_profile_free(p);
}

RUN_TESTS()
