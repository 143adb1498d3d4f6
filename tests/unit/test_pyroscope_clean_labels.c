// SPDX-License-Identifier: Apache-2.0
/* The pyroscope exporter's series labels, made what Pyroscope's validation
 * accepts: names, UTF-8 values, lengths, count, __name__. Compiled in from
 * the module's sources, through the daemon's own host functions. */
#include "check.h"

#include "../../core/graph.h"
#include "../../exporters/pyroscope/clean_labels.c"
#include "../../lib/label_valid.c"

static const struct profd_host *host = &profd_host_services;

/* in from name, value pairs ending at NULL. */
static struct profd_labels labels_of(const char *const *pairs)
{
    struct profd_labels in = {0};
    for (size_t i = 0; pairs[i]; i += 2)
        host->labels_set(&in, pairs[i], pairs[i + 1]);
    return in;
}

TEST(valid_labels_pass_unchanged)
{
    struct profd_labels in = labels_of((const char *const[]){
        "__name__", "process_cpu", "service_name", "caf\xc3\xa9", "pod", "a-1", NULL});
    struct profd_labels out = {0};
    CHECK_INT(pyroscope_clean_labels(host, &in, NULL, "memory", &out), 0);
    CHECK_INT(out.n, 3);
    CHECK_STR(host->labels_get(&out, "__name__"), "process_cpu");
    CHECK_STR(host->labels_get(&out, "service_name"), "caf\xc3\xa9");
    host->labels_clear(&in);
    host->labels_clear(&out);
}

TEST(names_made_valid_values_made_utf8_each_a_fix)
{
    struct profd_labels in = labels_of((const char *const[]){
        "__name__", "cpu-time", "service_name", "app", "9lives", "x", "k.v", "\xff" "ok",
        "__tenant_id__", "t1", NULL});
    struct profd_labels out = {0};
    CHECK_INT(pyroscope_clean_labels(host, &in, NULL, NULL, &out), 4);
    CHECK_STR(host->labels_get(&out, "__name__"), "cpu_time");
    CHECK_STR(host->labels_get(&out, "_9lives"), "x");
    CHECK_STR(host->labels_get(&out, "k_v"), "\xef\xbf\xbd" "ok");
    CHECK(!host->labels_get(&out, "__tenant_id__"));   /* it travels as X-Scope-OrgID */
    host->labels_clear(&in);
    host->labels_clear(&out);
}

TEST(lengths_cut_between_characters_and_thirty_labels_at_most)
{
    char value[PYROSCOPE_MAX_VALUE + 2], name[40];
    memset(value, 'v', PYROSCOPE_MAX_VALUE - 1);
    memcpy(value + PYROSCOPE_MAX_VALUE - 1, "\xc3\xa9", 3);   /* e acute across the limit */
    struct profd_labels in = labels_of((const char *const[]){
        "__name__", "memory", "service_name", "app", "a_long", value, "__delta__", "false",
        NULL});
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof(name), "l%02d", i);
        host->labels_set(&in, name, "x");
    }
    struct profd_labels out = {0};
    CHECK_INT(pyroscope_clean_labels(host, &in, NULL, NULL, &out), 1 + 14);
    CHECK_INT(out.n, PYROSCOPE_MAX_LABELS);
    CHECK_STR(host->labels_get(&out, "__name__"), "memory");   /* chosen first */
    CHECK_STR(host->labels_get(&out, "service_name"), "app");
    CHECK_STR(host->labels_get(&out, "__delta__"), "false");   /* what the server does */
    CHECK(host->labels_get(&out, "l25") && !host->labels_get(&out, "l26"));
    const char *cut = host->labels_get(&out, "a_long");   /* sorted first of the rest */
    CHECK(cut && strlen(cut) == PYROSCOPE_MAX_VALUE - 1);
    host->labels_clear(&in);
    host->labels_clear(&out);
}

TEST(the_series_name_from_the_labels_then_external_then_the_fallback)
{
    char *keys[] = {"__name__", "env"}, *values[] = {"goroutines", "prod"};
    struct profd_str_map external = {2, keys, values};
    struct profd_labels named = labels_of((const char *const[]){"__name__", "memory", NULL});
    struct profd_labels unnamed = labels_of((const char *const[]){"service_name", "app", NULL});
    CHECK_STR(pyroscope_series_name(host, &named, &external), "memory");
    CHECK_STR(pyroscope_series_name(host, &unnamed, &external), "goroutines");
    CHECK(!pyroscope_series_name(host, &unnamed, NULL));
    struct profd_labels out = {0};
    CHECK_INT(pyroscope_clean_labels(host, &unnamed, &external, "block", &out), 0);
    CHECK_STR(host->labels_get(&out, "__name__"), "goroutines");
    CHECK_STR(host->labels_get(&out, "env"), "prod");
    host->labels_clear(&out);
    CHECK_INT(pyroscope_clean_labels(host, &unnamed, NULL, "block", &out), 1);   /* a fix */
    CHECK_STR(host->labels_get(&out, "__name__"), "block");
    host->labels_clear(&out);
    host->labels_clear(&named);
    host->labels_clear(&unnamed);
}

RUN_TESTS()
