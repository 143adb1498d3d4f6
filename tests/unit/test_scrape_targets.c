// SPDX-License-Identifier: Apache-2.0
/* The scrape receiver's targets: units from discovered groups, and the
 * memo by which a group that did not change gives its units' keys alone
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

TEST(an_unchanged_group_gives_its_keys_alone)
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
    struct scrape_unit *u;
    size_t n;
    char err[256];
    CHECK_INT(targets_build(h, &job, 0, defs, 2, &found, 1, NULL, &first, &u, &n, err,
                            sizeof(err)), 0);
    CHECK_INT(n, 4);
    for (size_t i = 0; i < n; i++)
        CHECK(!u[i].known && u[i].url && u[i].key && u[i].key_hash == unit_key_hash(u[i].key));
    CHECK_STR(u[0].url, "http://10.0.0.1:6060/debug/pprof/goroutine");
    char *keys[4];
    for (size_t i = 0; i < 4; i++)
        keys[i] = strdup(u[i].key);
    free_units(u, n);
    /* b changes (a label), a does not */
    h->labels_set(&g[1].labels, "__meta_kubernetes_pod_ready", "true");
    hashes[1] = target_group_hash(&g[1]);
    CHECK_INT(targets_build(h, &job, 0, defs, 2, &found, 1, &first, &second, &u, &n, err,
                            sizeof(err)), 0);
    CHECK_INT(n, 4);
    CHECK(u[0].known && u[1].known && !u[0].url);
    CHECK_STR(u[0].key, keys[0]);
    CHECK_STR(u[1].key, keys[1]);
    CHECK(!u[2].known && !u[3].known);
    CHECK_STR(u[2].url, "http://10.0.0.2:6060/debug/pprof/goroutine");
    CHECK_STR(u[2].key, keys[2]);   /* the same key: series labels drop __meta_* */
    free_units(u, n);
    /* the memo made the second time knows both */
    struct unit_memo third = {0};
    CHECK_INT(targets_build(h, &job, 0, defs, 2, &found, 1, &second, &third, &u, &n, err,
                            sizeof(err)), 0);
    for (size_t i = 0; i < n; i++)   /* each with its key's hash, kept in the memo */
        CHECK(u[i].known && u[i].key_hash == unit_key_hash(u[i].key));
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

RUN_TESTS()
