// SPDX-License-Identifier: Apache-2.0
#include "label_valid.h"

#include <stdlib.h>
#include <string.h>

#include "utf8_valid.h"

bool label_valid_name(const char *name, bool colons, size_t max, char *buf)
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

void label_add_valid(const struct profd_host *host, struct profd_labels *out, const char *name,
                     const char *value, size_t max_name, size_t max_value, size_t max_labels,
                     size_t *fixes)
{
    size_t name_len = strlen(name), value_len = strlen(value);
    if (max_name > name_len + 1)
        max_name = name_len + 1;   /* room enough: a '_' before it at most */
    if (max_value > 3 * value_len)
        max_value = 3 * value_len;   /* room enough: each byte U+FFFD at most */
    char *key = malloc(max_name + 1), *val = malloc(max_value + 1);
    if (!key || !val)
        abort();
    *fixes += label_valid_name(name, false, max_name, key);
    bool changed;
    utf8_valid_copy(value, value_len, max_value, val, &changed);
    *fixes += changed;
    if (host->labels_get(out, key) || out->n >= max_labels)
        (*fixes)++;   /* a duplicate once made valid (the first stays), or one too many */
    else
        host->labels_set(out, key, val);
    free(key);
    free(val);
}

void fixes_count(const struct profd_host *host, struct profd_component *self,
                 _Atomic size_t *total, size_t fixes, const char *name, const char *help)
{
    if (fixes)
        host->gauge_set(self, name, help, "", (double)(atomic_fetch_add(total, fixes) + fixes));
}
