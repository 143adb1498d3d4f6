// SPDX-License-Identifier: Apache-2.0
#include "status.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "rpc_server.h"
#include "text.h"

/* What a component is doing now. */
static const char *state_of(const struct profd_component *c)
{
    return c->done ? "done" : c->started ? "running" : c->created ? "created" : "prepared";
}

/* A component's reference: {kind, id} (ids are unique within a kind). */
static json_t *reference(enum profd_kind kind, const char *id)
{
    return json_pack("{s:s, s:s}", "kind", profd_kind_name(kind), "id", id);
}

/* Appends the references of c's downstream components to down, each once. */
static void add_downstream(json_t *down, const struct profd_component *c)
{
    for (size_t i = 0; i < c->nnext; i++) {
        json_t *ref = reference(c->next[i]->kind, c->next[i]->id);
        bool known = false;
        size_t k;
        json_t *other;
        json_array_foreach(down, k, other) known |= json_equal(other, ref);
        if (known)
            json_decref(ref);
        else
            json_array_append_new(down, ref);
    }
}

/* The names of the pipelines of config that name the component id of
 * kind. */
static json_t *pipelines_of(const struct profd_config *config, enum profd_kind kind,
                            const char *id)
{
    json_t *names = json_array();
    for (size_t p = 0; p < config->npipelines; p++) {
        const struct profd_pipeline_cfg *pl = &config->pipelines[p];
        bool in = false;
        for (size_t i = 0; i < pl->nstages[kind]; i++)
            in |= !strcmp(pl->stages[kind][i]->id, id);
        if (in)
            json_array_append_new(names, json_string(pl->id));
    }
    return names;
}

/* A component's counters (gauges false) or an exporter's queue gauges,
 * by the names /metrics gives them. */
static json_t *numbers_of(const struct profd_metrics *m, bool gauges)
{
    json_t *j = json_object();
    for (int i = 0; i < (gauges ? PROFD_G_COUNT_ : PROFD_C_COUNT_); i++)
        json_object_set_new(
            j, gauges ? profd_metrics_gauge_name(i) : profd_metrics_counter_name(i),
            json_integer(gauges ? (json_int_t)atomic_load(&m->gauges[i])
                                : (json_int_t)atomic_load(&m->counters[i])));
    return j;
}

/* The addresses c's servers listen on, ports resolved. */
static json_t *listening_of(const struct profd_component *c)
{
    json_t *addresses = json_array();
    for (const struct profd_server *s = c->servers; s; s = s->next_of_self)
        json_array_insert_new(addresses, 0, json_string(profd_server_address(s)));
    return addresses;
}

/* One entry per component, receivers first, then processors, then
 * exporters (a processor in several pipelines is one instance in each,
 * sharing its id and counters: their downstream ones are put together). */
static json_t *components_json(const struct profd_status_source *s)
{
    static const enum profd_kind order[] = {PROFD_RECEIVER, PROFD_PROCESSOR, PROFD_EXPORTER};
    json_t *all = json_array(), *by_id = json_object();
    for (size_t n = 0; s->graph && n < 3 * s->graph->n; n++) {
        const struct profd_component *c = s->graph->nodes[n % s->graph->n];
        if (c->kind != order[n / s->graph->n])
            continue;
        char *key = profd_xasprintf("%s %s", profd_kind_name(c->kind), c->id);
        json_t *known = json_object_get(by_id, key);
        if (known) {
            free(key);
            add_downstream(json_object_get(known, "downstream"), c);
            continue;
        }
        json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:o}", "id", c->id, "kind",
                              profd_kind_name(c->kind), "type", c->plugin->type, "state",
                              state_of(c), "pipelines", pipelines_of(s->config, c->kind, c->id),
                              "downstream", json_array(), "counters",
                              numbers_of(c->metrics, false));
        add_downstream(json_object_get(j, "downstream"), c);
        if (c->kind == PROFD_EXPORTER)
            json_object_set_new(j, "queue", numbers_of(c->metrics, true));
        if (c->kind == PROFD_RECEIVER)
            json_object_set_new(j, "listening", listening_of(c));
        json_object_set(by_id, key, j);
        free(key);
        json_array_append_new(all, j);
    }
    json_decref(by_id);
    return all;
}

static json_t *pipelines_json(const struct profd_config *config)
{
    static const char *const stage_names[] = {"receivers", "processors", "exporters"};
    static const enum profd_kind stage_kinds[] = {PROFD_RECEIVER, PROFD_PROCESSOR,
                                                  PROFD_EXPORTER};
    json_t *all = json_array();
    for (size_t p = 0; p < config->npipelines; p++) {
        const struct profd_pipeline_cfg *pl = &config->pipelines[p];
        json_t *j = json_pack("{s:s}", "name", pl->id);
        for (int k = 0; k < 3; k++) {
            json_t *ids = json_array();
            for (size_t i = 0; i < pl->nstages[stage_kinds[k]]; i++)
                json_array_append_new(ids, json_string(pl->stages[stage_kinds[k]][i]->id));
            json_object_set_new(j, stage_names[k], ids);
        }
        json_array_append_new(all, j);
    }
    return all;
}

/* The status as data, both renderings' source. */
static json_t *status_of(const struct profd_status_source *s)
{
    int64_t now = (int64_t)time(NULL);
    json_t *j = json_pack("{s:s, s:I, s:I, s:{s:I, s:I}}", "version", PROFD_VERSION, "started",
                          (json_int_t)s->started_unix, "uptime_seconds",
                          (json_int_t)(now - s->started_unix), "reloads", "succeeded",
                          (json_int_t)s->reloads_ok, "failed", (json_int_t)s->reloads_failed);
    json_object_set_new(j, "config_file",
                        s->config_file ? json_string(s->config_file) : json_null());
    json_object_set_new(j, "pipelines", pipelines_json(s->config));
    json_object_set_new(j, "components", components_json(s));
    return j;
}

char *profd_status_json(const struct profd_status_source *s)
{
    json_t *j = status_of(s);
    char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(j);
    if (!text)
        abort();
    return text;
}

/* Appends s to t with &, <, >, " and ' escaped. */
static void add_escaped(struct profd_text *t, const char *s)
{
    for (; *s; s++) {
        const char *entity = *s == '&'  ? "&amp;"
                             : *s == '<'  ? "&lt;"
                             : *s == '>'  ? "&gt;"
                             : *s == '"'  ? "&quot;"
                             : *s == '\'' ? "&#39;"
                                          : NULL;
        if (entity)
            profd_text_add(t, entity);
        else
            profd_text_printf(t, "%c", *s);
    }
}

/* Appends the anchor of the row of the component id of kind. */
static void add_anchor(struct profd_text *t, const char *kind, const char *id)
{
    profd_text_printf(t, "c-%s-", kind);
    add_escaped(t, id);
}

/* Appends a link to the row of the component id of kind. */
static void add_link(struct profd_text *t, const char *kind, const char *id)
{
    profd_text_add(t, "<a href=\"#");
    add_anchor(t, kind, id);
    profd_text_add(t, "\">");
    add_escaped(t, id);
    profd_text_add(t, "</a>");
}

static void add_pipelines(struct profd_text *t, json_t *pipelines)
{
    profd_text_add(t, "<h2>Pipelines</h2>\n<ul>\n");
    size_t i;
    json_t *p;
    json_array_foreach(pipelines, i, p) {
        profd_text_add(t, "<li><b>");
        add_escaped(t, json_string_value(json_object_get(p, "name")));
        profd_text_add(t, "</b>: ");
        static const char *const stages[] = {"receivers", "processors", "exporters"};
        static const char *const kinds[] = {"receiver", "processor", "exporter"};
        for (int k = 0; k < 3; k++) {
            json_t *ids = json_object_get(p, stages[k]);
            size_t n;
            json_t *id;
            json_array_foreach(ids, n, id) {
                /* receivers, then each processor, then exporters */
                const char *sep = n ? (k == 1 ? " &rarr; " : ", ") : (k ? " &rarr; " : "");
                profd_text_add(t, sep);
                add_link(t, kinds[k], json_string_value(id));
            }
        }
        profd_text_add(t, "</li>\n");
    }
    profd_text_add(t, "</ul>\n");
}

/* The counters shown in the table, as the JSON names them. */
static const char *const shown[] = {"accepted_records", "refused_records", "sent_records",
                                    "failed_records", "dropped_records", "retry_later_records"};

/* Appends component c's row of the table. */
static void add_row(struct profd_text *t, json_t *c)
{
    profd_text_add(t, "<tr id=\"");
    add_anchor(t, json_string_value(json_object_get(c, "kind")),
               json_string_value(json_object_get(c, "id")));
    profd_text_add(t, "\">");
    static const char *const fields[] = {"id", "kind", "type", "state"};
    for (size_t k = 0; k < sizeof(fields) / sizeof(*fields); k++) {
        profd_text_add(t, "<td>");
        add_escaped(t, json_string_value(json_object_get(c, fields[k])));
        profd_text_add(t, "</td>");
    }
    profd_text_add(t, "<td>");
    size_t n;
    json_t *address;
    json_array_foreach(json_object_get(c, "listening"), n, address) {
        profd_text_add(t, n ? ", " : "");
        add_escaped(t, json_string_value(address));
    }
    profd_text_add(t, "</td>");
    json_t *counters = json_object_get(c, "counters"), *queue = json_object_get(c, "queue");
    for (size_t k = 0; k < sizeof(shown) / sizeof(*shown); k++)
        profd_text_printf(t, "<td class=n>%lld</td>",
                          (long long)json_integer_value(json_object_get(counters, shown[k])));
    if (queue)
        profd_text_printf(t, "<td class=n>%lld</td>",
                          (long long)json_integer_value(json_object_get(queue, "queue_records")));
    else
        profd_text_add(t, "<td></td>");
    profd_text_add(t, "<td>");
    json_t *to;
    json_array_foreach(json_object_get(c, "downstream"), n, to) {
        profd_text_add(t, n ? ", " : "");
        add_link(t, json_string_value(json_object_get(to, "kind")),
                 json_string_value(json_object_get(to, "id")));
    }
    profd_text_add(t, "</td></tr>\n");
}

static void add_components(struct profd_text *t, json_t *components)
{
    profd_text_add(t, "<h2>Components</h2>\n<table>\n<tr><th>id</th><th>kind</th><th>type</th>"
                      "<th>state</th><th>listening on</th>");
    for (size_t k = 0; k < sizeof(shown) / sizeof(*shown); k++)
        profd_text_printf(t, "<th>%.*s</th>", (int)strcspn(shown[k], "_"), shown[k]);
    profd_text_add(t, "<th>queued</th><th>to</th></tr>\n");
    size_t i;
    json_t *c;
    json_array_foreach(components, i, c)
        add_row(t, c);
    profd_text_add(t, "</table>\n");
}

char *profd_status_html(const struct profd_status_source *s)
{
    json_t *j = status_of(s);
    struct profd_text t = {0};
    profd_text_add(&t, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
                       "<title>profd status</title>\n<style>body{font-family:sans-serif}"
                       "table{border-collapse:collapse}td,th{border:1px solid #ccc;"
                       "padding:2px 8px}td.n{text-align:right}</style></head><body>\n");
    time_t started = (time_t)s->started_unix;
    struct tm tm;
    char when[64] = "?";
    if (gmtime_r(&started, &tm))
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    profd_text_printf(&t, "<h1>profd %s</h1>\n<p>Up since %s (%lld s); config ", PROFD_VERSION,
                      when, (long long)json_integer_value(json_object_get(j, "uptime_seconds")));
    add_escaped(&t, s->config_file ? s->config_file : "(the default)");
    profd_text_printf(&t, "; reloads: %lu succeeded, %lu failed.</p>\n", s->reloads_ok,
                      s->reloads_failed);
    add_pipelines(&t, json_object_get(j, "pipelines"));
    add_components(&t, json_object_get(j, "components"));
    profd_text_add(&t, "<p><a href=\"/status.json\">/status.json</a> &middot; "
                       "<a href=\"/metrics\">/metrics</a></p>\n</body></html>\n");
    json_decref(j);
    return t.s;
}
