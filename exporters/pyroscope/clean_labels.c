// SPDX-License-Identifier: Apache-2.0
#include "clean_labels.h"

#include <stdbool.h>
#include <string.h>

#include "../../lib/utf8_valid.h"

/* Writes a valid label name for name into buf (max + 1 bytes), or with
 * colons a valid metric name (what __name__ must hold), cut to max bytes;
 * true when it had to change. */
static bool valid_name(const char *name, bool colons, size_t max, char *buf)
{
    size_t o = 0;
    bool fixed = false;
    if (name[0] >= '0' && name[0] <= '9') {
        buf[o++] = '_';
        fixed = true;
    }
    const char *p = name;
    for (; *p && o < max; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || (colons && c == ':');
        buf[o++] = ok ? c : '_';
        fixed |= !ok;
    }
    fixed |= *p != '\0';   /* cut */
    if (o == 0) {
        buf[o++] = '_';
        fixed = true;
    }
    buf[o] = '\0';
    return fixed;
}

/* Adds one label to out unless it is there already; counts the fixes. */
static void add(const struct profd_host *host, struct profd_labels *out, const char *name,
                const char *value, size_t *fixes)
{
    char key[PYROSCOPE_MAX_NAME + 1], val[PYROSCOPE_MAX_VALUE + 1];
    *fixes += valid_name(name, false, PYROSCOPE_MAX_NAME, key);
    *fixes += utf8_valid_copy(value, strlen(value), PYROSCOPE_MAX_VALUE, val);
    if (host->labels_get(out, key)) {
        (*fixes)++;   /* a duplicate once made valid: the first stays */
        return;
    }
    if (out->n >= PYROSCOPE_MAX_LABELS) {
        (*fixes)++;
        return;
    }
    host->labels_set(out, key, val);
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
        fixes += valid_name(name, true, PYROSCOPE_MAX_VALUE, metric);
        add(host, out, "__name__", metric, &fixes);
    }
    if (host->labels_get(in, "service_name"))
        add(host, out, "service_name", host->labels_get(in, "service_name"), &fixes);
    for (size_t i = 0; i < in->n; i++) {
        const char *name = in->items[i].name;
        if (strcmp(name, "__name__") && strcmp(name, "service_name") &&
            strcmp(name, "__tenant_id__"))
            add(host, out, name, in->items[i].value, &fixes);
    }
    for (size_t i = 0; external && i < external->n; i++)
        if (!host->labels_get(out, external->keys[i]))
            add(host, out, external->keys[i], external->values[i], &fixes);
    return fixes;
}
