// SPDX-License-Identifier: Apache-2.0
/* The downsample processor's merge: entries the same in content shared,
 * samples of one stack and labels summed, the profile-wide fields as pprof
 * merges them, and the cut (kept types, stack depth). Compiled in from the
 * module sources. */
#include "check.h"

#include "../../core/graph.h"
#include "../../core/profile.h"
#include "../../lib/grow.c"
#include "../../lib/key_map.c"
#include "../../processors/downsample/merge.c"

static uint32_t intern(struct profd_profile *p, const char *s)
{
    return profd_profile_intern(p, s, strlen(s));
}

/* A location of function name at offset in /bin/app loaded at base (its
 * own function and mapping) in p. */
static uint32_t location(struct profd_profile *p, const char *name, uint64_t base,
                         uint64_t offset)
{
    struct profd_mapping *m = profd_profile_add_mapping(p);
    m->memory_start = base;
    m->memory_limit = base + 0x8000;
    m->filename = intern(p, "/bin/app");
    struct profd_function *f = profd_profile_add_function(p);
    f->name = f->system_name = intern(p, name);
    struct profd_line *line = profd_host_services.profile_alloc(p, sizeof(*line));
    *line = (struct profd_line){.function = p->nfunctions, .line = 7};
    struct profd_location *l = profd_profile_add_location(p);
    *l = (struct profd_location){.address = base + offset, .mapping = p->nmappings, .nlines = 1,
                                 .lines = line};
    return p->nlocations;
}

/* A sample of stack (n refs, leaf first) with values a and b, and a
 * label thread=value when value is not NULL. */
static void sample(struct profd_profile *p, const uint32_t *stack, uint32_t n, int64_t a,
                   int64_t b, const char *thread)
{
    struct profd_sample *s = profd_profile_add_sample(p);
    s->locations = profd_host_services.profile_alloc(p, n * sizeof(*s->locations));
    memcpy(s->locations, stack, n * sizeof(*stack));
    s->nlocations = n;
    s->values = profd_host_services.profile_alloc(p, 2 * sizeof(*s->values));
    s->values[0] = a;
    s->values[1] = b;
    if (thread) {
        s->labels = profd_host_services.profile_alloc(p, sizeof(*s->labels));
        s->labels[0] = (struct profd_sample_label){intern(p, "thread"), intern(p, thread), 0, 0};
        s->nlabels = 1;
    }
}

/* An empty profile of the sample types samples/count and cpu/nanoseconds. */
static struct profd_profile *cpu_types(void)
{
    struct profd_profile *p = profd_profile_new(1024);
    p->nsample_types = 2;
    p->sample_types = profd_host_services.profile_alloc(p, 2 * sizeof(*p->sample_types));
    p->sample_types[0] = (struct profd_value_type){intern(p, "samples"), intern(p, "count")};
    p->sample_types[1] = (struct profd_value_type){intern(p, "cpu"), intern(p, "nanoseconds")};
    return p;
}

/* A CPU profile of main -> work -> leaf (and main -> work) in /bin/app
 * loaded at base, its entries made in the order given (first, a function
 * no sample uses). */
static struct profd_profile *cpu_profile(const char *unused, int64_t time, int64_t scale,
                                         uint64_t base)
{
    struct profd_profile *p = cpu_types();
    p->period_type = p->sample_types[1];
    p->period = 10000000 * scale;
    p->time_nanos = time;
    p->duration_nanos = 10000000000;
    location(p, unused, base, 0x100);
    uint32_t leaf = location(p, "leaf", base, 0x200), work = location(p, "work", base, 0x300),
             main_ = location(p, "main", base, 0x400);
    sample(p, (uint32_t[]){leaf, work, main_}, 3, 3 * scale, 30000000 * scale, NULL);
    sample(p, (uint32_t[]){work, main_}, 2, scale, 10000000 * scale, "t1");
    sample(p, (uint32_t[]){work, main_}, 2, 2 * scale, 20000000 * scale, "t2");
    p->comments = profd_host_services.profile_alloc(p, sizeof(*p->comments));
    p->comments[0] = intern(p, "made by a test");
    p->ncomments = 1;
    return p;
}

static const char *str(const struct profd_profile *p, uint32_t i)
{
    static char out[4][64];
    static int next;
    char *s = out[next++ % 4];
    snprintf(s, sizeof(out[0]), "%.*s", (int)p->strings[i].len, p->strings[i].ptr);
    return s;
}

/* The values (type t) of out's sample whose stack is the functions named,
 * leaf first (';' between), with thread label thread or none; -1: none. */
static int64_t value_of(const struct profd_profile *out, const char *stack, const char *thread,
                        uint32_t t)
{
    for (size_t i = 0; i < out->nsamples; i++) {
        const struct profd_sample *s = &out->samples[i];
        char names[128] = "";
        for (uint32_t k = 0; k < s->nlocations; k++) {
            const struct profd_location *l = &out->locations[s->locations[k] - 1];
            snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", k ? ";" : "",
                     str(out, out->functions[l->lines[0].function - 1].name));
        }
        const char *label = s->nlabels ? str(out, s->labels[0].str) : NULL;
        if (!strcmp(names, stack) && (thread ? label && !strcmp(label, thread) : !label))
            return s->values[t];
    }
    return -1;
}

TEST(profiles_merge_as_pprof_merges_them)
{
    struct merged m;
    merged_init(&m, &profd_host_services);
    struct profd_profile *a = cpu_profile("init", 2000, 1, 0x1000),
                         *b = cpu_profile("other", 1000, 2, 0x1000);
    struct merge_cut all = {(uint32_t[]){0, 1}, 2, 0};
    merged_add(&m, a, &all);
    merged_add(&m, b, &all);
    merged_add(&m, a, &all);
    struct profd_profile *out = merged_take(&m, NULL);
    CHECK_INT(out->nsamples, 3);   /* one per stack and labels */
    CHECK_INT(value_of(out, "leaf;work;main", NULL, 0), 3 + 6 + 3);
    CHECK_INT(value_of(out, "leaf;work;main", NULL, 1), 120000000);
    CHECK_INT(value_of(out, "work;main", "t1", 0), 1 + 2 + 1);
    CHECK_INT(value_of(out, "work;main", "t2", 0), 2 + 4 + 2);
    /* the functions no sample uses are not added; the others once each */
    CHECK_INT(out->nfunctions, 3);
    CHECK_INT(out->nlocations, 3);
    CHECK_INT(out->nmappings, 1);   /* the same mapping in content */
    CHECK_INT(out->time_nanos, 1000);                 /* the earliest */
    CHECK_INT(out->duration_nanos, 30000000000);      /* the sum */
    CHECK_INT(out->period, 20000000);                 /* the largest */
    CHECK_INT(out->ncomments, 1);
    CHECK_STR(str(out, (uint32_t)out->comments[0]), "made by a test");
    CHECK_STR(str(out, out->period_type.type), "cpu");
    CHECK_STR(str(out, out->sample_types[1].unit), "nanoseconds");
    CHECK_INT(m.nadded, 0);   /* taken: empty for another merge */
    merged_add(&m, a, &all);
    struct profd_profile *again = merged_take(&m, NULL);
    CHECK_INT(value_of(again, "leaf;work;main", NULL, 0), 3);
    profd_profile_free(again);
    profd_profile_free(out);
    profd_profile_free(a);
    profd_profile_free(b);
}

TEST(snapshot_types_hold_the_average_the_others_the_sum)
{
    struct profd_profile *a = cpu_profile("init", 2000, 1, 0x1000),
                         *b = cpu_profile("other", 1000, 2, 0x1000), *c = cpu_types();
    uint32_t leaf = location(c, "leaf", 0x1000, 0x200), work = location(c, "work", 0x1000, 0x300),
             main_ = location(c, "main", 0x1000, 0x400);
    sample(c, (uint32_t[]){leaf, work, main_}, 3, 1, -5, NULL);
    char *names[] = {"cpu", "nothing"};   /* cpu taken for a snapshot here */
    struct profd_str_list snapshots = {2, names};
    struct merge_cut all = {(uint32_t[]){0, 1}, 2, 0};
    struct merged m;
    merged_init(&m, &profd_host_services);
    struct profd_profile *window[] = {a, b, b};
    for (size_t i = 0; i < 3; i++)
        merged_add(&m, window[i], &all);
    struct profd_profile *out = merged_take(&m, &snapshots);
    CHECK_INT(value_of(out, "leaf;work;main", NULL, 0), 3 + 6 + 6);   /* samples: summed */
    CHECK_INT(value_of(out, "leaf;work;main", NULL, 1), 50000000);    /* 150e6 / 3 */
    CHECK_INT(value_of(out, "work;main", "t1", 1), 16666667);         /* 50e6 / 3, rounded */
    profd_profile_free(out);
    /* a stack in one profile of two: half its value, to the nearest */
    merged_add(&m, a, &all);
    merged_add(&m, c, &all);
    out = merged_take(&m, &snapshots);
    CHECK_INT(value_of(out, "leaf;work;main", NULL, 1), 15000000 - 2);   /* (30e6 - 5) / 2 */
    CHECK_INT(value_of(out, "work;main", "t2", 1), 10000000);
    profd_profile_free(out);
    CHECK_INT(rounded_quotient(-5, 2), -3);   /* halves away from zero */
    CHECK_INT(rounded_quotient(5, 2), 3);
    CHECK_INT(rounded_quotient(-4, 3), -1);
    CHECK_INT(rounded_quotient(INT64_MAX, 1), INT64_MAX);
    profd_profile_free(a);
    profd_profile_free(b);
    profd_profile_free(c);
}

TEST(the_cut_keeps_chosen_types_and_the_frames_nearest_the_leaf)
{
    struct merged m;
    merged_init(&m, &profd_host_services);
    struct profd_profile *a = cpu_profile("init", 1, 1, 0x1000);
    struct merge_cut cpu_only = {(uint32_t[]){1}, 1, 2};
    merged_add(&m, a, &cpu_only);
    merged_add(&m, a, &cpu_only);
    struct profd_profile *out = merged_take(&m, NULL);
    CHECK_INT(out->nsample_types, 1);
    CHECK_STR(str(out, out->sample_types[0].type), "cpu");
    CHECK_INT(value_of(out, "leaf;work", NULL, 0), 60000000);   /* main cut off */
    CHECK_INT(value_of(out, "work;main", "t1", 0), 20000000);
    CHECK_INT(value_of(out, "leaf;work;main", NULL, 0), -1);
    profd_profile_free(out);
    profd_profile_free(a);
}

/* One binary loaded at two addresses (address space randomization) is one
 * mapping, the second profile's addresses rebased to the first's. */
TEST(a_binary_loaded_elsewhere_is_one_mapping)
{
    struct merged m;
    merged_init(&m, &profd_host_services);
    struct profd_profile *a = cpu_profile("init", 1, 1, 0x400000),
                         *b = cpu_profile("init", 1, 1, 0x7f0000);
    struct merge_cut all = {(uint32_t[]){0, 1}, 2, 0};
    merged_add(&m, a, &all);
    merged_add(&m, b, &all);
    struct profd_profile *out = merged_take(&m, NULL);
    CHECK_INT(out->nmappings, 1);
    CHECK_INT(out->mappings[0].memory_start, 0x400000);
    CHECK_INT(out->nlocations, 3);   /* the same three: rebased, they are alike */
    CHECK_INT(value_of(out, "leaf;work;main", NULL, 0), 6);
    bool rebased = true;
    for (uint32_t i = 0; i < out->nlocations; i++)
        rebased &= out->locations[i].address >= 0x400000 && out->locations[i].address < 0x408000;
    CHECK(rebased);
    profd_profile_free(out);
    profd_profile_free(a);
    profd_profile_free(b);
}

/* Sums held at the int64 limits rather than wrapping. */
TEST(sums_stop_at_the_limits)
{
    struct merged m;
    merged_init(&m, &profd_host_services);
    struct profd_profile *a = cpu_profile("init", 1, 1, 0x1000);
    a->samples[0].values[0] = INT64_MAX - 1;
    struct merge_cut all = {(uint32_t[]){0, 1}, 2, 0};
    merged_add(&m, a, &all);
    merged_add(&m, a, &all);
    struct profd_profile *out = merged_take(&m, NULL);
    CHECK(value_of(out, "leaf;work;main", NULL, 0) == INT64_MAX);
    profd_profile_free(out);
    merged_add(&m, a, &all);
    merged_free(&m);   /* a merge let go of before it was taken */
    profd_profile_free(a);
}

RUN_TESTS()
