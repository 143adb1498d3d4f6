// SPDX-License-Identifier: Apache-2.0
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../config/bind.h"
#include "../config/service.h"
#include "cli.h"
#include "exporter.h"
#include "log.h"

static void warn_module(const char *msg)
{
    profd_log(PROFD_LOG_WARN, NULL, "%s", msg);
}

static json_t *options_json(const struct profd_option *opts)
{
    json_t *arr = json_array();
    for (const struct profd_option *o = opts; o && o->name; o++) {
        json_t *j = json_pack("{s:s, s:s, s:s}", "name", o->name, "type",
                              profd_opt_type_name(o->type), "help", o->help ? o->help : "");
        if (o->default_value)
            json_object_set_new(j, "default", json_string(o->default_value));
        if (o->required)
            json_object_set_new(j, "required", json_true());
        if (o->choices) {
            json_t *ch = json_array();
            for (int i = 0; o->choices[i]; i++)
                json_array_append_new(ch, json_string(o->choices[i]));
            json_object_set_new(j, "choices", ch);
        }
        if (o->children)
            json_object_set_new(j, "options", options_json(o->children));
        json_array_append_new(arr, j);
    }
    return arr;
}

static void options_text(const struct profd_option *opts, int indent)
{
    for (const struct profd_option *o = opts; o && o->name; o++) {
        printf("%*s%-20s %-16s %s", indent, "", o->name, profd_opt_type_name(o->type),
               o->help ? o->help : "");
        if (o->default_value)
            printf(" (default: %s)", o->default_value);
        if (o->required)
            printf(" (required)");
        printf("\n");
        if (o->children)
            options_text(o->children, indent + 2);
    }
}

int profd_cmd_components(struct profd_loader *l, bool as_json)
{
    profd_loader_load_all(l, warn_module);
    json_t *all = json_array();
    for (size_t i = 0; profd_loader_at(l, i); i++) {
        const struct profd_plugin *p = profd_loader_at(l, i);
        if (as_json) {
            json_t *opts = options_json(p->options);
            if (p->kind == PROFD_EXPORTER) {
                json_t *common = options_json(profd_exporter_options);
                json_array_extend(opts, common);
                json_decref(common);
            }
            json_array_append_new(all, json_pack("{s:s, s:s, s:s, s:o}", "kind",
                                                 profd_kind_name(p->kind), "type", p->type,
                                                 "description", p->description ? p->description : "",
                                                 "options", opts));
            continue;
        }
        printf("%s %s\n  %s\n", profd_kind_name(p->kind), p->type, p->description);
        options_text(p->options, 4);
        if (p->kind == PROFD_EXPORTER)
            options_text(profd_exporter_options, 4);
        printf("\n");
    }
    if (as_json) {
        char *s = json_dumps(all, JSON_INDENT(2));
        puts(s);
        free(s);
    }
    json_decref(all);
    return 0;
}
