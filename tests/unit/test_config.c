// SPDX-License-Identifier: Apache-2.0
/* Configuration: units, the YAML tree, option binding, the service layout. */
#include "check.h"

#include <stdbool.h>

#include "../../config/bind.h"
#include "../../config/service.h"
#include "../../config/tree.h"
#include "../../config/units.h"

TEST(durations)
{
    int64_t ns;
    CHECK(profd_parse_duration("15s", &ns) && ns == 15000000000LL);
    CHECK(profd_parse_duration("1m30s", &ns) && ns == 90000000000LL);
    CHECK(profd_parse_duration("250ms", &ns) && ns == 250000000LL);
    CHECK(profd_parse_duration("1.5h", &ns) && ns == 5400000000000LL);
    CHECK(profd_parse_duration("0", &ns) && ns == 0);
    CHECK(profd_parse_duration("10us", &ns) && ns == 10000);
    CHECK(!profd_parse_duration("5x", &ns));
    CHECK(!profd_parse_duration("-1s", &ns));
    CHECK(!profd_parse_duration("", &ns));
    CHECK(!profd_parse_duration("15", &ns));
    CHECK(!profd_parse_duration("s", &ns));
}

TEST(sizes_ints_bools)
{
    uint64_t b;
    CHECK(profd_parse_size("64MiB", &b) && b == 64ull << 20);
    CHECK(profd_parse_size("10MB", &b) && b == 10000000);
    CHECK(profd_parse_size("4096", &b) && b == 4096);
    CHECK(profd_parse_size("1.5GiB", &b) && b == 1610612736ull);
    CHECK(profd_parse_size("2k", &b) && b == 2000);
    CHECK(!profd_parse_size("1.5", &b));
    CHECK(!profd_parse_size("12 apples", &b));
    CHECK(!profd_parse_size("-4", &b));
    int64_t i;
    CHECK(profd_parse_int("-42", &i) && i == -42);
    CHECK(!profd_parse_int("4x", &i));
    bool v;
    CHECK(profd_parse_bool("TRUE", &v) && v);
    CHECK(profd_parse_bool("off", &v) && !v);
    CHECK(!profd_parse_bool("maybe", &v));
}

TEST(tree_locations_env_aliases)
{
    setenv("PROFD_TEST_DIR", "/srv/x", 1);
    unsetenv("PROFD_TEST_UNSET");
    struct profd_diag d = {0};
    struct cfg_node *root = cfg_load_string(
        "t.yaml",
        "a:\n"
        "  dir: ${env:PROFD_TEST_DIR}/p\n"
        "  dflt: ${env:PROFD_TEST_UNSET:-fallback}\n"
        "  empty: ${env:PROFD_TEST_UNSET}\n"
        "  keep: $1 and ${1} and $${env:X}\n"
        "  base: &b {k: v}\n"
        "  copy: *b\n"
        "  nothing: ~\n",
        &d);
    CHECK(root != NULL);
    CHECK_INT(d.n, 0);
    const struct cfg_node *a = cfg_get(root, "a");
    CHECK_STR(cfg_get(a, "dir")->value, "/srv/x/p");
    CHECK_INT(cfg_get(a, "dir")->line, 2);
    CHECK_INT(cfg_get(a, "dir")->col, 8);
    CHECK_STR(cfg_get(a, "dflt")->value, "fallback");
    CHECK_STR(cfg_get(a, "empty")->value, "");
    CHECK_STR(cfg_get(a, "keep")->value, "$1 and ${1} and ${env:X}");
    CHECK_STR(cfg_get(cfg_get(a, "copy"), "k")->value, "v");
    CHECK_INT(cfg_get(a, "nothing")->kind, CFG_NULL);
    cfg_free(root);
    profd_diag_free(&d);
}

TEST(tree_errors)
{
    struct profd_diag d = {0};
    CHECK(cfg_load_string("bad.yaml", "a: [1, 2\nb: 3\n", &d) == NULL);
    CHECK_INT(d.n, 1);
    CHECK_CONTAINS(d.msgs[0], "bad.yaml:");
    profd_diag_free(&d);
    struct cfg_node *root = cfg_load_string("dup.yaml", "a: 1\na: 2\n", &d);
    CHECK(root == NULL);
    CHECK_CONTAINS(d.n ? d.msgs[0] : "", "dup.yaml:2:1: duplicate key 'a'");
    profd_diag_free(&d);
    CHECK(cfg_load_file("/nonexistent/profd.yaml", &d) == NULL);
    CHECK_CONTAINS(d.n ? d.msgs[0] : "", "cannot open");
    profd_diag_free(&d);
}

struct inner {
    int64_t n;
};

struct opts {
    char *name;
    int64_t count;
    bool flag;
    int64_t interval;
    uint64_t size;
    int mode;
    struct profd_str_list list;
    struct profd_str_map map;
    struct inner in;
    struct profd_obj_list items;
    struct profd_map objects;   /* of struct inner */
    struct profd_map lists;     /* of struct profd_str_list */
    char *must;
};

static const char *const modes[] = {"a", "b", NULL};
static const struct profd_option inner_opts[] = {
    {"n", PROFD_OPT_INT, offsetof(struct inner, n), "7", "n"},
    {0},
};
static const struct profd_option inner_value[] = {
    {"<name>", PROFD_OPT_OBJECT, 0, NULL, "an object", inner_opts},
    {0},
};
static const struct profd_option list_value[] = {
    {"<name>", PROFD_OPT_STRING_LIST, 0, NULL, "a list"},
    {0},
};
static const struct profd_option test_opts[] = {
    {"name", PROFD_OPT_STRING, offsetof(struct opts, name), "dflt", "name"},
    {"count", PROFD_OPT_INT, offsetof(struct opts, count), "3", "count"},
    {"flag", PROFD_OPT_BOOL, offsetof(struct opts, flag), "false", "flag"},
    {"interval", PROFD_OPT_DURATION, offsetof(struct opts, interval), "15s", "interval"},
    {"size", PROFD_OPT_SIZE, offsetof(struct opts, size), "1KiB", "size"},
    {"mode", PROFD_OPT_ENUM, offsetof(struct opts, mode), "a", "mode", .choices = modes},
    {"list", PROFD_OPT_STRING_LIST, offsetof(struct opts, list), "[x, y]", "list"},
    {"map", PROFD_OPT_STRING_MAP, offsetof(struct opts, map), NULL, "map"},
    {"in", PROFD_OPT_OBJECT, offsetof(struct opts, in), NULL, "in", inner_opts},
    {"items", PROFD_OPT_OBJECT_LIST, offsetof(struct opts, items), NULL, "items", inner_opts,
     sizeof(struct inner)},
    {"objects", PROFD_OPT_MAP, offsetof(struct opts, objects), NULL, "objects", inner_value,
     sizeof(struct inner)},
    {"lists", PROFD_OPT_MAP, offsetof(struct opts, lists), NULL, "lists", list_value,
     sizeof(struct profd_str_list)},
    {"must", PROFD_OPT_STRING, offsetof(struct opts, must), NULL, "must", .required = 1},
    {0},
};

static int bind_text(const char *yaml, struct opts *o, struct profd_diag *d)
{
    struct cfg_node *root = cfg_load_string("o.yaml", yaml, d);
    memset(o, 0, sizeof(*o));
    struct profd_bind_section s = {test_opts, o};
    int rc = profd_bind(&s, 1, root, "x", d);
    cfg_free(root);
    return rc;
}

TEST(bind_values_and_defaults)
{
    struct profd_diag d = {0};
    struct opts o;
    CHECK_INT(bind_text("must: yes\nname: n\nflag: true\ninterval: 1m\nsize: 2MiB\nmode: b\n"
                        "list: one\nmap: {k: v}\nin: {n: 9}\nitems: [{n: 1}, {}]\n"
                        "objects: {b: {n: 2}, a: {}}\nlists: {X-One: [p, q], x-two: r}\n",
                        &o, &d),
              0);
    CHECK_STR(o.name, "n");
    CHECK_INT(o.count, 3);
    CHECK(o.flag);
    CHECK_INT(o.interval, 60000000000LL);
    CHECK_INT(o.size, 2 << 20);
    CHECK_INT(o.mode, 1);
    CHECK_INT(o.list.n, 1);
    CHECK_STR(o.list.items[0], "one");
    CHECK_INT(o.map.n, 1);
    CHECK_STR(o.map.values[0], "v");
    CHECK_INT(o.in.n, 9);
    CHECK_INT(o.items.n, 2);
    CHECK_INT(((struct inner *)o.items.items)[0].n, 1);
    CHECK_INT(((struct inner *)o.items.items)[1].n, 7);
    CHECK_INT(o.objects.n, 2);   /* in the order written, each bound with defaults */
    CHECK_STR(o.objects.keys[0], "b");
    CHECK_INT(((struct inner *)o.objects.values)[0].n, 2);
    CHECK_STR(o.objects.keys[1], "a");
    CHECK_INT(((struct inner *)o.objects.values)[1].n, 7);
    CHECK_INT(o.lists.n, 2);
    const struct profd_str_list *lists = o.lists.values;
    CHECK_STR(o.lists.keys[0], "X-One");
    CHECK_INT(lists[0].n, 2);
    CHECK_STR(lists[0].items[1], "q");
    CHECK_INT(lists[1].n, 1);
    CHECK_STR(lists[1].items[0], "r");
    profd_unbind(test_opts, &o);
    CHECK_INT(o.lists.n, 0);

    CHECK_INT(bind_text("must: m\n", &o, &d), 0);
    CHECK_STR(o.name, "dflt");
    CHECK_INT(o.list.n, 2);
    CHECK_INT(o.in.n, 7);
    CHECK_INT(o.interval, 15000000000LL);
    profd_unbind(test_opts, &o);
    profd_diag_free(&d);
}

/* Every wanted message is among d's, and d has no others. */
static void check_diags(const struct profd_diag *d, const char *const *want, size_t nwant)
{
    for (size_t i = 0; i < nwant; i++) {
        bool found = false;
        for (size_t j = 0; j < d->n; j++)
            found |= strstr(d->msgs[j], want[i]) != NULL;
        if (!found)
            fprintf(stderr, "  missing diagnostic: %s\n", want[i]);
        CHECK(found);
    }
    CHECK_INT(d->n, nwant);
    for (size_t j = 0; check_case_failed && j < d->n; j++)
        fprintf(stderr, "  got: %s\n", d->msgs[j]);
}

TEST(bind_reports_every_error_with_location)
{
    struct profd_diag d = {0};
    struct opts o;
    CHECK_INT(bind_text("count: many\nflag: perhaps\ninterval: 5x\nmode: c\nlist: {a: b}\n"
                        "bogus: 1\nin: {n: q, extra: 2}\nobjects: {k: {n: z}}\nlists: [a]\n",
                        &o, &d),
              -1);
    const char *want[] = {
        "o.yaml:1:8: x.count: 'many' is not an integer",
        "o.yaml:2:7: x.flag: 'perhaps' is not true or false",
        "o.yaml:3:11: x.interval: '5x' is not a duration",
        "o.yaml:4:7: x.mode: 'c' is not one of: a, b",
        "o.yaml:5:7: x.list must be a list, not a map",
        "o.yaml:6:1: unknown key 'bogus' in x",
        "o.yaml:7:9: x.in.n: 'q' is not an integer",
        "o.yaml:7:12: unknown key 'extra' in x.in",
        "o.yaml:8:18: x.objects.k.n: 'z' is not an integer",
        "o.yaml:9:8: x.lists must be a map, not a list",
        "missing required option 'must'",
    };
    check_diags(&d, want, sizeof(want) / sizeof(*want));
    profd_unbind(test_opts, &o);
    profd_diag_free(&d);
}

static struct profd_config *parse(const char *yaml, struct profd_diag *d)
{
    struct cfg_node *root = cfg_load_string("s.yaml", yaml, d);
    return root ? profd_config_parse(root, d) : NULL;
}

TEST(service_valid)
{
    struct profd_diag d = {0};
    struct profd_config *c = parse("receivers: {pprof_file: {}, pprof_file/b: {}}\n"
                                   "processors: {p: {}}\n"
                                   "exporters: {debug: {}, pprof_file/out: {}}\n"
                                   "service:\n"
                                   "  telemetry: {metrics: {address: \"127.0.0.1:0\"}, logs: {level: debug}}\n"
                                   "  pipelines:\n"
                                   "    profiles: {receivers: [pprof_file], exporters: [debug]}\n"
                                   "    profiles/2: {receivers: [pprof_file, pprof_file/b],\n"
                                   "                 processors: [p], exporters: [debug, pprof_file/out]}\n",
                                   &d);
    CHECK(c != NULL);
    for (size_t i = 0; i < d.n; i++)
        fprintf(stderr, "  %s\n", d.msgs[i]);
    if (c) {
        CHECK_INT(c->ncomponents, 5);
        CHECK_INT(c->npipelines, 2);
        CHECK_STR(c->components[1].type, "pprof_file");
        CHECK_STR(c->telemetry_address, "127.0.0.1:0");
        CHECK_INT(c->log_level, 3);
        CHECK_INT(c->pipelines[1].nstages[PROFD_EXPORTER], 2);
    }
    profd_config_free(c);
    profd_diag_free(&d);

    c = parse(profd_default_config, &d);
    CHECK(c != NULL);
    if (c)
        CHECK_STR(c->telemetry_address, "127.0.0.1:8888");
    profd_config_free(c);
    profd_diag_free(&d);
}

TEST(service_errors_all_at_once)
{
    struct profd_diag d = {0};
    struct profd_config *c = parse("receivers: {pprof_file: {}, \"Bad/\": {}}\n"
                                   "exporters: {debug: {}, unused: {}}\n"
                                   "extra: 1\n"
                                   "service:\n"
                                   "  pipelines:\n"
                                   "    profiles: {receivers: [pprof_file, nope], exporters: [debug]}\n"
                                   "    profiles/x: {receivers: [pprof_file]}\n"
                                   "    traces: {receivers: [pprof_file], exporters: [debug]}\n",
                                   &d);
    CHECK(c != NULL);   /* returned with what it could read */
    profd_config_free(c);
    const char *want[] = {
        "s.yaml:1:29: invalid receiver id 'Bad/'",
        "s.yaml:3:1: unknown top-level key 'extra'",
        "s.yaml:6:40: pipeline 'profiles' refers to receiver 'nope', which is not defined",
        "s.yaml:7:5: pipeline 'profiles/x' has no exporters",
        "s.yaml:8:5: pipeline 'traces': only profiles pipelines exist",
        "s.yaml:2:24: exporter 'unused' is defined but not used in any pipeline",
    };
    check_diags(&d, want, sizeof(want) / sizeof(*want));
    profd_diag_free(&d);
}

RUN_TESTS()
