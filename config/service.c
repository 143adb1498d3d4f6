// SPDX-License-Identifier: Apache-2.0
#include "service.h"

#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "bind.h"

const char profd_default_config[] =
    "receivers:\n"
    "  pprof_file:\n"
    "    include: [./spool/*.pb.gz, ./spool/*.pb]\n"
    "exporters:\n"
    "  pprof_file:\n"
    "    directory: ./profiles\n"
    "service:\n"
    "  pipelines:\n"
    "    profiles:\n"
    "      receivers: [pprof_file]\n"
    "      exporters: [pprof_file]\n";

static const enum profd_kind kinds[] = {PROFD_RECEIVER, PROFD_PROCESSOR, PROFD_EXPORTER};

const char *profd_kind_section(enum profd_kind k)
{
    return k == PROFD_RECEIVER ? "receivers" : k == PROFD_PROCESSOR ? "processors" : "exporters";
}

const char *profd_kind_name(enum profd_kind k)
{
    return k == PROFD_RECEIVER ? "receiver" : k == PROFD_PROCESSOR ? "processor" : "exporter";
}

/* Checks "type[/name]": type is [a-z0-9_]+, name is non-empty. */
static bool valid_id(const char *id, const char *what, const struct cfg_node *at,
                     struct profd_diag *d)
{
    const char *slash = strchr(id, '/');
    size_t tlen = slash ? (size_t)(slash - id) : strlen(id);
    bool ok = tlen > 0 && (!slash || slash[1]);
    for (size_t i = 0; ok && i < tlen; i++)
        ok = (id[i] >= 'a' && id[i] <= 'z') || (id[i] >= '0' && id[i] <= '9') || id[i] == '_';
    if (!ok)
        profd_diag_add(d, at, "invalid %s id '%s': want type[/name], type in [a-z0-9_]", what, id);
    return ok;
}

static void parse_components(struct profd_config *c, enum profd_kind kind, struct profd_diag *d)
{
    const struct cfg_node *sec = cfg_get(c->root, profd_kind_section(kind));
    if (!sec || sec->kind == CFG_NULL)
        return;
    if (sec->kind != CFG_MAP) {
        profd_diag_add(d, sec, "%s must be a map of component ids", profd_kind_section(kind));
        return;
    }
    for (size_t i = 0; i < sec->n; i++) {
        const char *id = sec->keys[i]->value;
        if (!valid_id(id, profd_kind_name(kind), sec->keys[i], d))
            continue;
        profd_grow(&c->components, &c->components_cap, c->ncomponents + 1,
                   sizeof(*c->components));
        struct profd_component_cfg *cc = &c->components[c->ncomponents++];
        memset(cc, 0, sizeof(*cc));
        cc->id = profd_xstrdup(id);
        cc->type = profd_xstrndup(id, strcspn(id, "/"));
        cc->kind = kind;
        cc->key = sec->keys[i];
        cc->node = sec->items[i];
    }
}

static struct profd_component_cfg *find_component(struct profd_config *c, enum profd_kind kind,
                                                  const char *id)
{
    for (size_t i = 0; i < c->ncomponents; i++)
        if (c->components[i].kind == kind && strcmp(c->components[i].id, id) == 0)
            return &c->components[i];
    return NULL;
}

static void parse_stage_list(struct profd_config *c, struct profd_pipeline_cfg *p,
                             const struct cfg_node *pn, enum profd_kind kind, struct profd_diag *d)
{
    const char *sec = profd_kind_section(kind);
    const struct cfg_node *list = cfg_get(pn, sec);
    if (!list || list->kind == CFG_NULL || (list->kind == CFG_SEQ && list->n == 0)) {
        if (kind != PROFD_PROCESSOR)
            profd_diag_add(d, p->key, "pipeline '%s' has no %s", p->id, sec);
        return;
    }
    if (list->kind != CFG_SEQ) {
        profd_diag_add(d, list, "pipeline '%s': %s must be a list of component ids", p->id, sec);
        return;
    }
    p->stages[kind] = profd_xcalloc(list->n, sizeof(*p->stages[kind]));
    for (size_t i = 0; i < list->n; i++) {
        const struct cfg_node *item = list->items[i];
        if (item->kind != CFG_SCALAR) {
            profd_diag_add(d, item, "pipeline '%s': %s entries must be ids", p->id, sec);
            continue;
        }
        struct profd_component_cfg *cc = find_component(c, kind, item->value);
        if (!cc) {
            profd_diag_add(d, item, "pipeline '%s' refers to %s '%s', which is not defined in %s",
                           p->id, profd_kind_name(kind), item->value, sec);
            continue;
        }
        for (size_t j = 0; j < p->nstages[kind]; j++)
            if (p->stages[kind][j] == cc)
                profd_diag_add(d, item, "pipeline '%s' lists %s '%s' twice", p->id,
                               profd_kind_name(kind), cc->id);
        cc->used = true;
        p->stages[kind][p->nstages[kind]++] = cc;
    }
}

static void parse_pipelines(struct profd_config *c, const struct cfg_node *service,
                            struct profd_diag *d)
{
    const struct cfg_node *pl = cfg_get(service, "pipelines");
    if (!pl || pl->kind != CFG_MAP || pl->n == 0) {
        profd_diag_add(d, pl ? pl : service, "service.pipelines must define at least one pipeline");
        return;
    }
    c->pipelines = profd_xcalloc(pl->n, sizeof(*c->pipelines));
    for (size_t i = 0; i < pl->n; i++) {
        const char *id = pl->keys[i]->value;
        if (strcmp(id, "profiles") != 0 && strncmp(id, "profiles/", 9) != 0) {
            profd_diag_add(d, pl->keys[i],
                           "pipeline '%s': only profiles pipelines exist (profiles[/name])", id);
            continue;
        }
        struct profd_pipeline_cfg *p = &c->pipelines[c->npipelines++];
        p->id = profd_xstrdup(id);
        p->key = pl->keys[i];
        const struct cfg_node *pn = pl->items[i];
        if (pn->kind != CFG_MAP) {
            profd_diag_add(d, pn, "pipeline '%s' must be a map", id);
            continue;
        }
        for (size_t k = 0; k < pn->n; k++)
            if (strcmp(pn->keys[k]->value, "receivers") && strcmp(pn->keys[k]->value, "processors") &&
                strcmp(pn->keys[k]->value, "exporters"))
                profd_diag_add(d, pn->keys[k], "unknown key '%s' in pipeline '%s'",
                               pn->keys[k]->value, id);
        for (size_t k = 0; k < 3; k++)
            parse_stage_list(c, p, pn, kinds[k], d);
    }
}

struct telemetry_settings {
    struct { char *address; } metrics;
    struct { int level; } logs;
};

static const char *const log_levels[] = {"error", "warn", "info", "debug", NULL};

static const struct profd_option metrics_options[] = {
    {"address", PROFD_OPT_STRING, 0, "127.0.0.1:8888",
     "host:port of /metrics and /healthz; empty disables them"},
    {0},
};
static const struct profd_option logs_options[] = {
    {"level", PROFD_OPT_ENUM, 0, "info", "error, warn, info or debug", .choices = log_levels},
    {0},
};
static const struct profd_option telemetry_options[] = {
    {"metrics", PROFD_OPT_OBJECT, offsetof(struct telemetry_settings, metrics), NULL,
     "the daemon's own HTTP endpoint", metrics_options},
    {"logs", PROFD_OPT_OBJECT, offsetof(struct telemetry_settings, logs), NULL, "log settings",
     logs_options},
    {0},
};

static void parse_service(struct profd_config *c, struct profd_diag *d)
{
    const struct cfg_node *service = cfg_get(c->root, "service");
    if (!service || service->kind != CFG_MAP) {
        profd_diag_add(d, service ? service : c->root, "missing 'service' map with pipelines");
        return;
    }
    for (size_t i = 0; i < service->n; i++) {
        const char *k = service->keys[i]->value;
        if (strcmp(k, "telemetry") && strcmp(k, "pipelines"))
            profd_diag_add(d, service->keys[i], "unknown key '%s' in service", k);
    }
    struct telemetry_settings t = {0};
    struct profd_bind_section sec = {telemetry_options, &t};
    profd_bind(&sec, 1, cfg_get(service, "telemetry"), "service.telemetry", d);
    if (t.metrics.address && *t.metrics.address)
        c->telemetry_address = profd_xstrdup(t.metrics.address);
    c->log_level = t.logs.level;
    profd_unbind(telemetry_options, &t);
    parse_pipelines(c, service, d);
}

struct profd_config *profd_config_parse(struct cfg_node *root, struct profd_diag *d)
{
    struct profd_config *c = profd_xcalloc(1, sizeof(*c));
    c->root = root;
    if (root->kind != CFG_MAP) {
        profd_diag_add(d, root, "the configuration must be a map with receivers, exporters and "
                                "service");
        goto out;
    }
    for (size_t i = 0; i < root->n; i++) {
        const char *k = root->keys[i]->value;
        if (strcmp(k, "receivers") && strcmp(k, "processors") && strcmp(k, "exporters") &&
            strcmp(k, "service") && strcmp(k, "extensions") && strcmp(k, "connectors"))
            profd_diag_add(d, root->keys[i], "unknown top-level key '%s'", k);
        else if (!strcmp(k, "extensions") || !strcmp(k, "connectors"))
            profd_diag_add(d, root->keys[i], "'%s' are not supported by profd", k);
    }
    for (size_t k = 0; k < 3; k++)
        parse_components(c, kinds[k], d);
    parse_service(c, d);
    for (size_t i = 0; i < c->ncomponents; i++)
        if (!c->components[i].used && c->npipelines > 0)
            profd_diag_add(d, c->components[i].key, "%s '%s' is defined but not used in any pipeline",
                           profd_kind_name(c->components[i].kind), c->components[i].id);
out:
    return c;
}

void profd_config_free(struct profd_config *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->ncomponents; i++) {
        free(c->components[i].id);
        free(c->components[i].type);
    }
    free(c->components);
    for (size_t i = 0; i < c->npipelines; i++) {
        free(c->pipelines[i].id);
        for (int k = 0; k < 4; k++)
            free(c->pipelines[i].stages[k]);
    }
    free(c->pipelines);
    free(c->telemetry_address);
    cfg_free(c->root);
    free(c);
}
