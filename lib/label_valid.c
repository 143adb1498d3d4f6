// SPDX-License-Identifier: Apache-2.0
#include "label_valid.h"

#include <stdlib.h>
#include <string.h>

#include "utf8_valid.h"

static bool name_char_ok(char c, bool colons)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || (colons && c == ':');
}

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
        bool ok = name_char_ok(*p, colons);
        buf[o++] = ok ? *p : '_';
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

bool label_name_is_valid(const char *name, size_t len)
{
    if (len == 0 || (name[0] >= '0' && name[0] <= '9'))
        return false;
    for (size_t i = 0; i < len; i++)
        if (!name_char_ok(name[i], false))
            return false;
    return true;
}

bool label_name_undotted(const char *name, size_t len, char *buf)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = name[i] == '.' ? '_' : name[i];
    buf[len] = '\0';
    return label_name_is_valid(buf, len);
}

/* Sets name = value in out unless out has that name already or holds
 * max_labels labels (a fix counted then). */
static void add_unless_taken(const struct profd_host *host, struct profd_labels *out,
                             const char *name, const char *value, size_t max_labels,
                             size_t *fixes)
{
    if (host->labels_get(out, name) || out->n >= max_labels)
        (*fixes)++;   /* a duplicate once made valid (the first stays), or one too many */
    else
        host->labels_set(out, name, value);
}

void label_add_valid(const struct profd_host *host, struct profd_labels *out, const char *name,
                     const char *value, size_t max_name, size_t max_value, size_t max_labels,
                     size_t *fixes)
{
    size_t name_len = strlen(name), value_len = strlen(value);
    if (name_len <= max_name && value_len <= max_value && label_name_is_valid(name, name_len) &&
        utf8_is_valid(value, value_len)) {
        add_unless_taken(host, out, name, value, max_labels, fixes);   /* most labels */
        return;
    }
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
    add_unless_taken(host, out, key, val, max_labels, fixes);
    free(key);
    free(val);
}
