// SPDX-License-Identifier: Apache-2.0
/* The scrape receiver's targets: units from discovered groups, and the
 * memo by which a group that did not change gives its units' pairs alone
 * the next time. Compiled in from the module sources. */
#include "check.h"

#include "../../core/graph.h"
#include "../../lib/grow.c"
#include "../../lib/key_map.c"
#include "../../receivers/pprof_scrape/targets.c"

static const struct profd_host *const h = &profd_host_services;

static void group(struct profd_target_group *g, const char *target, const char *pod)
{
    *g = (struct profd_target_group){0};
    g->targets.items = calloc(1, sizeof(char *));
    g->targets.items[0] = strdup(target);
    g->targets.n = 1;
    h->labels_set(&g->labels, "__meta_kubernetes_pod_name", pod);
}

static void free_units(struct scrape_unit *u, size_t n)
{
    for (size_t i = 0; i < n; i++)
        scrape_unit_clear(h, &u[i]);
    free(u);
}

/* What a caller does once a build's units are pairs: pair i is pairs[i],
 * at place slot0 + i. */
static void fill_pairs(struct unit_memo *m, size_t n, int *pairs, size_t slot0)
{
    m->pairs = calloc(n, sizeof(*m->pairs));
    m->slots = calloc(n, sizeof(*m->slots));
    for (size_t i = 0; i < n; i++) {
        m->pairs[i] = &pairs[i];
        m->slots[i] = slot0 + i;
    }
}

TEST(an_unchanged_group_gives_its_pairs_alone)
{
    struct job job = {.job_name = "pods", .scheme = "http",
                      .profiling_config = {.path_prefix = ""}};
    struct profile_def defs[2] = {{.name = "goroutine", .path = "/debug/pprof/goroutine"},
                                  {.name = "memory", .path = "/debug/pprof/heap"}};
    struct profd_target_group g[2];
    group(&g[0], "10.0.0.1:6060", "a");
    group(&g[1], "10.0.0.2:6060", "b");
    uint64_t hashes[2] = {target_group_hash(&g[0]), target_group_hash(&g[1])};
    struct found_groups found = {g, 2, hashes};
    struct unit_memo first = {0}, second = {0};
    int first_pairs[4], second_pairs[4];
    struct scrape_unit *u;
    size_t n;
    char err[256];
    CHECK_INT(targets_build(h, &job, 0, defs, 2, &found, 1, NULL, &first, &u, &n, err,
                            sizeof(err)), 0);
    CHECK_INT(n, 4);
    for (size_t i = 0; i < n; i++)
        CHECK(!u[i].pair && u[i].url && u[i].key && u[i].key_hash == unit_key_hash(u[i].key));
    CHECK_STR(u[0].url, "http://10.0.0.1:6060/debug/pprof/goroutine");
    char *keys[4];
    for (size_t i = 0; i < 4; i++)
        keys[i] = strdup(u[i].key);
    free_units(u, n);
    fill_pairs(&first, 4, first_pairs, 10);
    /* b changes (a label), a does not */
    h->labels_set(&g[1].labels, "__meta_kubernetes_pod_ready", "true");
    hashes[1] = target_group_hash(&g[1]);
    CHECK_INT(targets_build(h, &job, 0, defs, 2, &found, 1, &first, &second, &u, &n, err,
                            sizeof(err)), 0);
    CHECK_INT(n, 4);
    for (size_t i = 0; i < 2; i++)   /* a's: its pairs and their places, nothing else */
        CHECK(u[i].pair == &first_pairs[i] && u[i].slot == 10 + i && !u[i].url && !u[i].key);
    CHECK(!u[2].pair && !u[3].pair);
    CHECK_STR(u[2].url, "http://10.0.0.2:6060/debug/pprof/goroutine");
    CHECK_STR(u[2].key, keys[2]);   /* the same key: series labels drop __meta_* */
    CHECK_STR(u[3].key, keys[3]);
    free_units(u, n);
    fill_pairs(&second, 4, second_pairs, 20);
    /* the memo made the second time knows both, as the caller filled it */
    struct unit_memo third = {0};
    CHECK_INT(targets_build(h, &job, 0, defs, 2, &found, 1, &second, &third, &u, &n, err,
                            sizeof(err)), 0);
    CHECK_INT(n, 4);
    for (size_t i = 0; i < n; i++)
        CHECK(u[i].pair == &second_pairs[i] && u[i].slot == 20 + i && !u[i].key);
    free_units(u, n);
    for (size_t i = 0; i < 4; i++)
        free(keys[i]);
    unit_memo_clear(&first);
    unit_memo_clear(&second);
    unit_memo_clear(&third);
    for (size_t i = 0; i < 2; i++) {
        free(g[i].targets.items[0]);
        free(g[i].targets.items);
        h->labels_clear(&g[i].labels);
    }
}

TEST(profiles_of_deltas_are_marked_for_pyroscope_and_a_groups_mark_and_tenant_kept)
{
    struct job job = {.job_name = "app", .scheme = "http",
                      .profiling_config = {.path_prefix = ""}};
    struct profile_def defs[3] = {
        {.name = "process_cpu", .path = "/debug/pprof/profile"},
        {.name = "memory", .path = "/debug/pprof/allocs", .delta = true},
        {.name = "godeltaprof_memory", .path = "/debug/pprof/delta_heap",
         .profiler_deltas = true}};
    struct profd_target_group g[2];
    group(&g[0], "10.0.0.1:6060", "a");
    group(&g[1], "10.0.0.2:6060", "b");
    h->labels_set(&g[1].labels, "__delta__", "true");   /* the config's own word stays */
    h->labels_set(&g[1].labels, "__tenant_id__", "team-b");   /* what exporters send */
    uint64_t hashes[2] = {target_group_hash(&g[0]), target_group_hash(&g[1])};
    struct found_groups found = {g, 2, hashes};
    struct unit_memo memo = {0};
    struct scrape_unit *u;
    size_t n;
    char err[256];
    CHECK_INT(targets_build(h, &job, 0, defs, 3, &found, 1, NULL, &memo, &u, &n, err,
                            sizeof(err)), 0);
    CHECK_INT(n, 6);
    CHECK(!h->labels_get(&u[0].labels, "__delta__"));
    CHECK_STR(h->labels_get(&u[1].labels, "__delta__"), "false");
    CHECK_STR(h->labels_get(&u[2].labels, "__delta__"), "false");
    for (size_t i = 3; i < 6; i++)
        CHECK_STR(h->labels_get(&u[i].labels, "__delta__"), "true");
    for (size_t i = 0; i < 6; i++)
        CHECK(!h->labels_get(&u[i].labels, "__tenant_id__") == (i < 3));
    CHECK(!h->labels_get(&u[1].labels, "__meta_kubernetes_pod_name"));   /* others dropped */
    free_units(u, n);
    unit_memo_clear(&memo);
    for (size_t i = 0; i < 2; i++) {
        free(g[i].targets.items[0]);
        free(g[i].targets.items);
        h->labels_clear(&g[i].labels);
    }
}

RUN_TESTS()
