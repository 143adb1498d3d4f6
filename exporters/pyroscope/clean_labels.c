// SPDX-License-Identifier: Apache-2.0
#include "clean_labels.h"

#include <stdbool.h>
#include <string.h>

#include "../../lib/label_valid.h"
#include "../../lib/transport_labels.h"

/* Adds one label to out within Pyroscope's limits; counts the fixes. */
static void add(const struct profd_host *host, struct profd_labels *out, const char *name,
                const char *value, size_t *fixes)
{
    label_add_valid(host, out, name, value, PYROSCOPE_MAX_NAME, PYROSCOPE_MAX_VALUE,
                    PYROSCOPE_MAX_LABELS, fixes);
}

const char *pyroscope_series_name(const struct profd_host *host, const struct profd_labels *in,
                                  const struct profd_str_map *external)
{
    const char *name = host->labels_get(in, "__name__");
    for (size_t i = 0; !name && external && i < external->n; i++)
        if (!strcmp(external->keys[i], "__name__"))
            name = external->values[i];
    return name;
}

size_t pyroscope_clean_labels(const struct profd_host *host, const struct profd_labels *in,
                              const struct profd_str_map *external, const char *fallback_name,
                              struct profd_labels *out)
{
    size_t fixes = 0;
    const char *name = pyroscope_series_name(host, in, external);
    if (!name && fallback_name) {
        name = fallback_name;
        fixes++;
    }
    if (name) {   /* first, so that the cut to 30 labels keeps it */
        char metric[PYROSCOPE_MAX_VALUE + 1];
        fixes += label_valid_name(name, true, PYROSCOPE_MAX_VALUE, metric);
        add(host, out, "__name__", metric, &fixes);
    }
    static const char *const kept_first[] = {"service_name", DELTA_LABEL};
    for (size_t k = 0; k < sizeof(kept_first) / sizeof(*kept_first); k++)
        if (host->labels_get(in, kept_first[k]))
            add(host, out, kept_first[k], host->labels_get(in, kept_first[k]), &fixes);
    for (size_t i = 0; i < in->n; i++) {
        const char *name = in->items[i].name;
        if (strcmp(name, "__name__") && strcmp(name, "service_name") &&
            strcmp(name, DELTA_LABEL) && strcmp(name, TENANT_LABEL))
            add(host, out, name, in->items[i].value, &fixes);
    }
    for (size_t i = 0; external && i < external->n; i++)
        if (!host->labels_get(out, external->keys[i]))
            add(host, out, external->keys[i], external->values[i], &fixes);
    return fixes;
}
