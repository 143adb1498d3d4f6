// SPDX-License-Identifier: Apache-2.0
/*
 * The one suite every module passes: run with the module directory as its
 * argument, in a scratch working directory. For each .so: the descriptor is
 * well formed (its flags known and for its kind), the default config binds
 * and validates, and the lifecycle holds in every order a daemon may use
 * (create->destroy; shutdown without start;
 * create->start->shutdown->shutdown->destroy; an empty batch).
 */
#include "check.h"

#include <event2/event.h>

#include "../../config/bind.h"
#include "../../core/alloc.h"
#include "../../core/graph.h"
#include "../../core/record.h"

static const char *module_dir;
static struct profd_loader *loader;
static struct event_base *base;

/* A component as the graph would make it, with its default config. */
struct fixture {
    struct profd_graph graph;
    struct profd_component c;
};

static bool fixture_init(struct fixture *f, const struct profd_plugin *p)
{
    memset(f, 0, sizeof(*f));
    f->graph.base = base;
    f->c.id = profd_xasprintf("%s/conformance", p->type);
    f->c.kind = p->kind;
    f->c.plugin = p;
    f->c.graph = &f->graph;
    f->c.metrics = profd_metrics_get(f->c.id, profd_kind_name(p->kind));
    f->c.cfg = calloc(1, p->config_size ? p->config_size : 1);
    struct profd_diag d = {0};
    struct profd_bind_section s = {p->options, f->c.cfg};
    int rc = profd_bind(&s, 1, NULL, p->type, &d);
    if (rc == 0 && p->validate)
        rc = p->validate(&profd_host_services, &d, f->c.cfg) == PROFD_OK && d.n == 0 ? 0 : -1;
    for (size_t i = 0; i < d.n; i++)
        fprintf(stderr, "  %s: %s\n", p->type, d.msgs[i]);
    profd_diag_free(&d);
    return rc == 0;
}

static void fixture_free(struct fixture *f)
{
    profd_unbind(f->c.plugin->options, f->c.cfg);
    free(f->c.cfg);
    free(f->c.id);
}

static void *create(struct fixture *f)
{
    void *st = NULL;
    int rc = f->c.plugin->create(&profd_host_services, &f->c, f->c.cfg, &st);
    CHECK_INT(rc, PROFD_OK);
    return rc == PROFD_OK ? st : NULL;
}

static void check_options(const struct profd_option *opts, const char *type)
{
    for (const struct profd_option *o = opts; o && o->name; o++) {
        if (!o->help || !*o->help)
            fprintf(stderr, "  %s.%s has no help text\n", type, o->name);
        CHECK(o->help && *o->help);
        CHECK(o->type > PROFD_OPT_END && o->type <= PROFD_OPT_MAP);
        if (o->type == PROFD_OPT_MAP)   /* one value option, at the value's start */
            CHECK(o->children && o->children[0].name && !o->children[1].name &&
                  o->children[0].offset == 0 && o->elem_size > 0);
        if (o->type == PROFD_OPT_ENUM)
            CHECK(o->choices && o->choices[0]);
        if (o->type == PROFD_OPT_OBJECT || o->type == PROFD_OPT_OBJECT_LIST ||
            o->type == PROFD_OPT_MAP)
            check_options(o->children, type);
    }
}

/* Flags the ABI knows, each on the kind it is for. */
static void check_flags(const struct profd_plugin *p)
{
    const uint32_t known = PROFD_PLUGIN_MUTATES | PROFD_PLUGIN_MERGES_BATCHES |
                           PROFD_PLUGIN_SLOW | PROFD_PLUGIN_CONCURRENT;
    CHECK((p->flags & ~known) == 0);
    if (p->flags & PROFD_PLUGIN_MERGES_BATCHES)
        CHECK_INT(p->kind, PROFD_EXPORTER);
    if (p->flags & (PROFD_PLUGIN_SLOW | PROFD_PLUGIN_CONCURRENT))
        CHECK_INT(p->kind, PROFD_PROCESSOR);
}

static void load_failed(const char *msg)
{
    fprintf(stderr, "  %s\n", msg);
    check_case_failed = 1;
}

TEST(every_module)
{
    const char *dirs[1] = {module_dir};
    loader = profd_loader_create(dirs, 1);
    size_t n = profd_loader_load_all(loader, load_failed);
    CHECK(n >= 3);
    base = event_base_new();
    for (size_t i = 0; i < n; i++) {
        const struct profd_plugin *p = profd_loader_at(loader, i);
        fprintf(stderr, "module %s %s\n", profd_kind_name(p->kind), p->type);
        CHECK(p->description && *p->description);
        check_options(p->options, p->type);
        check_flags(p);

        struct fixture f;
        CHECK(fixture_init(&f, p));

        void *st = create(&f);                       /* create -> destroy */
        p->destroy(st);

        st = create(&f);                             /* shutdown without start */
        if (p->shutdown)
            CHECK_INT(p->shutdown(st), PROFD_OK);
        p->destroy(st);

        st = create(&f);                             /* the full cycle, shutdown twice */
        if (st && p->start)
            CHECK_INT(p->start(st), PROFD_OK);
        if (st && p->consume) {
            struct profd_batch *b = profd_batch_new();
            CHECK_INT(p->consume(st, b), PROFD_OK);  /* an empty batch */
            profd_batch_unref(b);
        }
        if (p->shutdown) {
            CHECK_INT(p->shutdown(st), PROFD_OK);
            CHECK_INT(p->shutdown(st), PROFD_OK);
        }
        p->destroy(st);
        fixture_free(&f);
    }
    event_base_free(base);
    profd_loader_destroy(loader);
}

CHECK_STORAGE();

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: conformance MODULE_DIR\n");
        return 2;
    }
    module_dir = argv[1];
    return check_run_all();
}
