// SPDX-License-Identifier: Apache-2.0
/* speedscope files as the pyroscope receiver reads them (format=speedscope):
 * sampled and evented profiles, their units, the profiles Pyroscope merges,
 * and the errors a broken file gets. Compiled in from the module sources. */
#include "check.h"

#include "../../core/graph.h"
#include "../../core/profile.h"
#include "../../core/record.h"
#include "../../lib/grow.c"
#include "../../lib/json_pull.c"
#include "../../lib/key_map.c"
#include "../../receivers/pyroscope/speedscope.c"

#define FILE_HEAD                                                                       \
    "{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\", "              \
    "\"shared\": {\"frames\": [{\"name\": \"main\", \"file\": \"m.py\", \"line\": 3}, " \
    "{\"name\": \"work\", \"file\": \"w.py\", \"line\": 10, \"col\": 5}, "               \
    "{\"name\": \"leaf\"}]}, \"profiles\": ["

/* The records of FILE_HEAD with profiles (a JSON list's items), or NULL
 * with why set. */
static struct profd_batch *convert(const char *profiles, char *why, size_t whylen)
{
    char json[4096];
    snprintf(json, sizeof(json), "%s%s]}", FILE_HEAD, profiles);
    struct profd_batch *b = profd_batch_new();
    if (speedscope_records(&profd_host_services, json, strlen(json), 10000000, b, why,
                           whylen) < 0) {
        CHECK_INT(b->nrecords, 0);
        profd_batch_unref(b);
        return NULL;
    }
    return b;
}

static struct profd_profile *profile_of(struct profd_batch *b, size_t i)
{
    char why[256];
    struct profd_profile *p = profd_record_profile(b->records[i], why, sizeof(why));
    CHECK(p != NULL);
    return p;
}

/* The one record of FILE_HEAD with profile into *b, and its profile. */
static struct profd_profile *only_profile(const char *profile, struct profd_batch **b)
{
    char why[256] = "";
    *b = convert(profile, why, sizeof(why));
    CHECK_STR(why, "");
    if (!*b || (*b)->nrecords != 1) {
        fprintf(stderr, "  %s: not one record\n", profile);
        exit(1);
    }
    return profile_of(*b, 0);
}

/* String i of p's table, NUL-terminated (the last four returned stay valid). */
static const char *string(const struct profd_profile *p, uint32_t i)
{
    static char out[4][64];
    static int next;
    char *s = out[next++ % 4];
    snprintf(s, sizeof(out[0]), "%.*s", (int)p->strings[i].len, p->strings[i].ptr);
    return s;
}

/* The frame names of sample s, leaf first, joined by ';'. */
static const char *stack_of(const struct profd_profile *p, const struct profd_sample *s)
{
    static char out[256];
    out[0] = '\0';
    for (uint32_t i = 0; i < s->nlocations; i++) {
        const struct profd_location *l = &p->locations[s->locations[i] - 1];
        const struct profd_function *f = &p->functions[l->lines[0].function - 1];
        snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", i ? ";" : "",
                 string(p, f->name));
    }
    return out;
}

/* The value of sample type t of the sample whose stack (leaf first) is
 * stack; -1 when there is none. */
static int64_t value_of(const struct profd_profile *p, const char *stack, uint32_t t)
{
    for (uint32_t i = 0; i < p->nsamples; i++)
        if (!strcmp(stack_of(p, &p->samples[i]), stack))
            return p->samples[i].values[t];
    return -1;
}

TEST(sampled_weights_are_cpu_nanoseconds_by_stack)
{
    struct profd_batch *b;
    struct profd_profile *p = only_profile(
        "{\"type\": \"sampled\", \"name\": \"thread 1\", \"unit\": \"milliseconds\", "
        "\"startValue\": 0, \"endValue\": 9, \"samples\": [[0, 1, 2], [0, 1], [0, 1, 2]], "
        "\"weights\": [1.5, 2, 3.25]}",
        &b);
    CHECK_INT(p->nsample_types, 1);
    CHECK_STR(string(p, p->sample_types[0].type), "cpu");
    CHECK_STR(string(p, p->sample_types[0].unit), "nanoseconds");
    CHECK_INT(p->nsamples, 2);   /* the same stack twice is one sample */
    CHECK_INT(value_of(p, "leaf;work;main", 0), 4750000);
    CHECK_INT(value_of(p, "work;main", 0), 2000000);
    CHECK_STR(profd_record_label(b->records[0], "profile_name"), "thread 1");
    const struct profd_location *work = &p->locations[p->samples[0].locations[1] - 1];
    const struct profd_function *f = &p->functions[work->lines[0].function - 1];
    CHECK_STR(string(p, f->filename), "w.py");
    CHECK_INT(work->lines[0].line, 10);
    CHECK_INT(work->lines[0].column, 5);
    profd_batch_unref(b);
}

/* Between two events, the time goes to the frames open then: main alone
 * 10 us, main and work 20 us, main alone again 70 us. */
TEST(evented_time_goes_to_the_frames_open)
{
    struct profd_batch *b;
    struct profd_profile *p = only_profile(
        "{\"type\": \"evented\", \"name\": \"e\", \"unit\": \"microseconds\", "
        "\"startValue\": 0, \"endValue\": 100, \"events\": ["
        "{\"type\": \"O\", \"frame\": 0, \"at\": 0}, "
        "{\"type\": \"O\", \"frame\": 1, \"at\": 10}, "
        "{\"type\": \"C\", \"frame\": 1, \"at\": 30}, "
        "{\"type\": \"C\", \"frame\": 0, \"at\": 100}]}",
        &b);
    CHECK_INT(p->nsamples, 2);
    CHECK_INT(value_of(p, "main", 0), 80000);
    CHECK_INT(value_of(p, "work;main", 0), 20000);
    profd_batch_unref(b);
}

/* none counts samples at the CPU period; bytes are in use. Profiles of the
 * same name, type, unit and startValue are one record, as in Pyroscope. */
TEST(units_and_the_profiles_merged)
{
    char why[256];
    const char *none = "{\"type\": \"sampled\", \"name\": \"n\", \"unit\": \"none\", "
                       "\"startValue\": 0, \"samples\": [[0, 2]], \"weights\": [7]}";
    char profiles[1024];
    snprintf(profiles, sizeof(profiles),
             "%s, {\"type\": \"sampled\", \"name\": \"b\", \"unit\": \"bytes\", "
             "\"startValue\": 0, \"samples\": [[0]], \"weights\": [4096]}, %s",
             none, none);
    struct profd_batch *b = convert(profiles, why, sizeof(why));
    CHECK(b && b->nrecords == 2);
    struct profd_profile *n = profile_of(b, 0), *m = profile_of(b, 1);
    CHECK_INT(n->nsample_types, 2);
    CHECK_STR(string(n, n->sample_types[0].type), "samples");
    CHECK_STR(string(n, n->sample_types[1].type), "cpu");
    CHECK_INT(n->period, 10000000);
    CHECK_INT(value_of(n, "leaf;main", 0), 14);   /* both profiles named n */
    CHECK_INT(value_of(n, "leaf;main", 1), 140000000);
    CHECK_STR(string(m, m->sample_types[0].type), "inuse_space");
    CHECK_INT(value_of(m, "main", 0), 4096);
    CHECK_STR(profd_record_label(b->records[1], "profile_name"), "b");
    profd_batch_unref(b);
}

/* JSON does not order an object's members: profiles may come before the
 * frames they index, weights before samples, the type last; names are
 * decoded (escapes and all); a member given twice counts as its last. */
TEST(members_in_any_order)
{
    const char *text =
        "{\"profiles\": [{\"weights\": [2, 3], \"samples\": [[1, 0], [1]], "
        "\"unit\": \"none\", \"name\": \"t\\u00e9\", \"type\": \"evented\", "
        "\"type\": \"sampled\"}], "
        "\"shared\": {\"frames\": [{\"line\": 7, \"name\": \"caf\\u00e9\"}, "
        "{\"file\": \"a\\/b.py\", \"name\": \"root\"}]}, "
        "\"$schema\": \"https://www.speedscope.app/file-format-schema.json\"}";
    char why[256] = "";
    struct profd_batch *b = profd_batch_new();
    CHECK_INT(speedscope_records(&profd_host_services, text, strlen(text), 10, b, why,
                                 sizeof(why)), 1);
    CHECK_STR(why, "");
    struct profd_profile *p = profile_of(b, 0);
    CHECK_STR(profd_record_label(b->records[0], "profile_name"), "t\xc3\xa9");
    CHECK_INT(value_of(p, "caf\xc3\xa9;root", 0), 2);
    CHECK_INT(value_of(p, "root", 0), 3);
    const struct profd_location *root = &p->locations[p->samples[1].locations[0] - 1];
    CHECK_STR(string(p, p->functions[root->lines[0].function - 1].filename), "a/b.py");
    profd_batch_unref(b);
}

/* Each broken file is refused whole, naming what and where. */
TEST(a_broken_file_is_an_error_saying_where)
{
    static const struct {
        const char *profiles, *why;
    } cases[] = {
        {"{\"type\": \"sampled\", \"name\": \"a\", \"unit\": \"seconds\", \"samples\": [[0, 3]], "
         "\"weights\": [1]}",
         "profile 0 (\"a\"): sample 0, frame 1: not an index into the 3 frames"},
        {"{\"type\": \"sampled\", \"name\": \"a\", \"unit\": \"seconds\", \"samples\": [[0]], "
         "\"weights\": []}",
         "profile 0 (\"a\"): samples and weights are not two arrays of the same length"},
        {"{\"type\": \"sampled\", \"name\": \"a\", \"unit\": \"seconds\", \"samples\": [[0]], "
         "\"weights\": [-1]}",
         "profile 0 (\"a\"): sample 0: weight is not a number a profile holds"},
        {"{\"type\": \"sampled\", \"name\": \"a\", \"unit\": \"seconds\", \"samples\": [[0]], "
         "\"weights\": [1e300]}",
         "profile 0 (\"a\"): sample 0: weight is not a number a profile holds"},
        {"{\"type\": \"sampled\", \"name\": \"a\", \"unit\": \"hours\", \"samples\": [], "
         "\"weights\": []}",
         "profile 0 (\"a\"): unit \"hours\" is none of nanoseconds, microseconds, "
         "milliseconds, seconds, none, bytes"},
        {"{\"type\": \"flat\", \"name\": \"a\", \"unit\": \"none\"}",
         "profile 0 (\"a\"): type \"flat\" is neither sampled nor evented"},
        {"{\"type\": \"evented\", \"name\": \"a\", \"unit\": \"none\", \"startValue\": 5, "
         "\"events\": [{\"type\": \"O\", \"frame\": 0, \"at\": 4}]}",
         "profile 0 (\"a\"): event 0: at is not a time at or after the one before"},
        {"{\"type\": \"evented\", \"name\": \"a\", \"unit\": \"none\", \"events\": ["
         "{\"type\": \"O\", \"frame\": 0, \"at\": 1}, {\"type\": \"C\", \"frame\": 1, \"at\": 2}]}",
         "profile 0 (\"a\"): event 1 closes frame 1, which is not the innermost open"},
        {"{\"type\": \"evented\", \"name\": \"a\", \"unit\": \"none\", \"events\": ["
         "{\"type\": \"X\", \"frame\": 0, \"at\": 1}]}",
         "profile 0 (\"a\"): event 0: type \"X\" is neither O nor C"},
        {"{\"type\": \"sampled\", \"name\": \"ok\", \"unit\": \"none\", \"samples\": [], "
         "\"weights\": []}, 7",
         "profile 1 (\"\"): not an object"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        char why[256] = "";
        CHECK(convert(cases[i].profiles, why, sizeof(why)) == NULL);
        CHECK_STR(why, cases[i].why);
    }
    char why[256];
    struct profd_batch *b = profd_batch_new();
    const char *text = "{\"$schema\": \"x\"}";
    CHECK_INT(speedscope_records(&profd_host_services, text, strlen(text), 1, b, why,
                                 sizeof(why)), -1);
    CHECK_STR(why, "$schema is not \"" SCHEMA "\"");
    CHECK_INT(speedscope_records(&profd_host_services, "{\"a\": ", 6, 1, b, why, sizeof(why)),
              -1);
    CHECK_CONTAINS(why, "not JSON: ");
    CHECK_CONTAINS(why, "line 1, column 7");   /* the end, where a value was due */
    CHECK_INT(speedscope_records(&profd_host_services, "[]", 2, 1, b, why, sizeof(why)), -1);
    CHECK_STR(why, "not a JSON object");
    profd_batch_unref(b);
}

RUN_TESTS()
