// SPDX-License-Identifier: Apache-2.0
/* The daemon's status (core/status.c) of a prepared graph: the pipelines
 * as the config draws them, each component once (receivers, processors,
 * exporters), a processor in two pipelines with the components after it
 * in both, an exporter's queue, and the page's text escaped. */
#include <jansson.h>

#include "check.h"

#include "../../config/service.h"
#include "../../core/graph.h"
#include "../../core/status.h"

/* Modules that are only described: the graph is prepared, never created. */
static int never_create(const struct profd_host *host, struct profd_component *self,
                        const void *cfg, void **out)
{
    (void)host, (void)self, (void)cfg, (void)out;
    return PROFD_ERR;
}

static int never_consume(void *st, struct profd_batch *b)
{
    (void)st, (void)b;
    return PROFD_ERR;
}

static void never_destroy(void *st)
{
    (void)st;
}

#define MODULE(kind_, type_)                                                                   \
    {PROFD_ABI_VERSION, sizeof(struct profd_plugin), kind_, type_, "test", NULL, 0, 0, NULL,  \
     never_create, NULL, never_consume, NULL, never_destroy}

static const struct profd_plugin modules[] = {
    MODULE(PROFD_RECEIVER, "src"),
    MODULE(PROFD_PROCESSOR, "step"),
    MODULE(PROFD_EXPORTER, "sink"),
};

static const char config_text[] =
    "receivers: {src: {}, src/b: {}}\n"
    "processors: {step: {}}\n"
    "exporters: {sink: {}, 'sink/<x&y>': {}}\n"
    "service:\n"
    "  pipelines:\n"
    "    profiles: {receivers: [src], processors: [step], exporters: [sink]}\n"
    "    profiles/b: {receivers: [src/b], processors: [step], exporters: ['sink/<x&y>']}\n";

/* The status source of config_text's graph (prepared, not created), with
 * the loader and config it needs kept in *l and *c. */
static struct profd_status_source prepared(struct profd_loader **l, struct profd_config **c)
{
    *l = profd_loader_create(NULL, 0);
    char err[256];
    for (size_t i = 0; i < sizeof(modules) / sizeof(*modules); i++)
        CHECK_INT(profd_loader_register(*l, &modules[i], err, sizeof(err)), 0);
    struct profd_diag d = {0};
    struct cfg_node *root = cfg_load_string("s.yaml", config_text, &d);
    *c = root ? profd_config_parse(root, &d) : NULL;
    struct profd_graph *g = *c ? profd_graph_prepare(*c, *l, &d) : NULL;
    for (size_t i = 0; i < d.n; i++)
        fprintf(stderr, "  %s\n", d.msgs[i]);
    CHECK(g != NULL);
    profd_diag_free(&d);
    return (struct profd_status_source){*c, g, "s.yaml", 1700000000, 2, 1};
}

static void release(struct profd_status_source *s, struct profd_loader *l)
{
    profd_graph_destroy((struct profd_graph *)s->graph);
    profd_config_free((struct profd_config *)s->config);
    profd_loader_destroy(l);
}

/* The string at path (keys and indexes, '.'-separated) of j, or "". */
static const char *at(json_t *j, const char *path)
{
    char key[64];
    while (*path && j) {
        size_t n = strcspn(path, ".");
        snprintf(key, sizeof(key), "%.*s", (int)n, path);
        char *end;
        long index = strtol(key, &end, 10);
        j = *end ? json_object_get(j, key) : json_array_get(j, (size_t)index);
        path += n + (path[n] == '.');
    }
    return json_is_string(j) ? json_string_value(j) : "";
}

TEST(the_json_tells_the_pipelines_and_every_component_once)
{
    struct profd_loader *l;
    struct profd_config *c;
    struct profd_status_source s = prepared(&l, &c);
    char *text = profd_status_json(&s);
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    CHECK(j != NULL);
    CHECK_STR(at(j, "config_file"), "s.yaml");
    CHECK_INT(json_integer_value(json_object_get(j, "started")), 1700000000);
    CHECK_STR(at(j, "pipelines.1.name"), "profiles/b");
    CHECK_STR(at(j, "pipelines.1.processors.0"), "step");
    CHECK_STR(at(j, "pipelines.1.exporters.0"), "sink/<x&y>");
    json_t *comps = json_object_get(j, "components");
    CHECK_INT(json_array_size(comps), 5);   /* step once, though it runs in each pipeline */
    const char *want[][2] = {{"src", "receiver"}, {"src/b", "receiver"}, {"step", "processor"},
                             {"sink", "exporter"}, {"sink/<x&y>", "exporter"}};
    for (size_t i = 0; i < 5; i++) {
        char path[32];
        snprintf(path, sizeof(path), "components.%zu.id", i);
        CHECK_STR(at(j, path), want[i][0]);
        snprintf(path, sizeof(path), "components.%zu.kind", i);
        CHECK_STR(at(j, path), want[i][1]);
    }
    CHECK_STR(at(j, "components.2.state"), "prepared");
    CHECK_STR(at(j, "components.2.downstream.0.id"), "sink");   /* both pipelines' */
    CHECK_STR(at(j, "components.2.downstream.0.kind"), "exporter");
    CHECK_STR(at(j, "components.2.downstream.1.id"), "sink/<x&y>");
    CHECK_STR(at(j, "components.2.pipelines.1"), "profiles/b");
    CHECK(json_object_get(json_array_get(comps, 3), "queue") != NULL);
    CHECK(json_object_get(json_array_get(comps, 0), "queue") == NULL);
    CHECK(json_object_get(json_object_get(json_array_get(comps, 0), "counters"),
                          "accepted_records") != NULL);
    json_decref(j);
    free(text);
    release(&s, l);
}

TEST(the_page_links_the_pipelines_to_the_rows_and_escapes_what_it_shows)
{
    struct profd_loader *l;
    struct profd_config *c;
    struct profd_status_source s = prepared(&l, &c);
    char *page = profd_status_html(&s);
    CHECK(strstr(page, "<li><b>profiles/b</b>: <a href=\"#c-receiver-src/b\">src/b</a> &rarr; "
                       "<a href=\"#c-processor-step\">step</a> &rarr; "
                       "<a href=\"#c-exporter-sink/&lt;x&amp;y&gt;\">sink/&lt;x&amp;y&gt;</a>"
                       "</li>") != NULL);
    CHECK(strstr(page, "<tr id=\"c-exporter-sink/&lt;x&amp;y&gt;\"><td>sink/&lt;x&amp;y&gt;"
                       "</td>") != NULL);
    CHECK(strstr(page, "Up since 2023-11-14T22:13:20Z") != NULL);
    CHECK(strstr(page, "reloads: 2 succeeded, 1 failed") != NULL);
    CHECK(strstr(page, "<x&") == NULL);
    free(page);
    release(&s, l);
}

RUN_TESTS()
