// SPDX-License-Identifier: Apache-2.0
#include "labels.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

/* Position of name, or where it would be inserted (*found false). */
static size_t find(const struct profd_labels *l, const char *name, bool *found)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(l->items[mid].name, name);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

/* One block holding name, then value, each NUL-terminated: a label costs
 * one allocation, and one free. */
static void set_item(struct profd_series_label *it, const char *name, const char *value,
                     size_t len)
{
    size_t n = strlen(name) + 1;
    char *block = profd_xmalloc(n + len + 1);
    memcpy(block, name, n);
    memcpy(block + n, value, len);
    block[n + len] = '\0';
    it->name = block;
    it->value = block + n;
}

void profd_labels_setn(struct profd_labels *l, const char *name, const char *value, size_t len)
{
    bool found;
    size_t i = find(l, name, &found);
    if (found) {
        char *old = l->items[i].name;   /* name may point into it */
        set_item(&l->items[i], old, value, len);
        free(old);
        return;
    }
    profd_grow(&l->items, &l->cap, l->n + 1, sizeof(*l->items));
    memmove(&l->items[i + 1], &l->items[i], (l->n - i) * sizeof(*l->items));
    set_item(&l->items[i], name, value, len);
    l->n++;
}

void profd_labels_set(struct profd_labels *l, const char *name, const char *value)
{
    profd_labels_setn(l, name, value, strlen(value));
}

const char *profd_labels_get(const struct profd_labels *l, const char *name)
{
    bool found;
    size_t i = find(l, name, &found);
    return found ? l->items[i].value : NULL;
}

void profd_labels_del_at(struct profd_labels *l, size_t i)
{
    free(l->items[i].name);   /* the value with it */
    memmove(&l->items[i], &l->items[i + 1], (l->n - i - 1) * sizeof(*l->items));
    l->n--;
}

void profd_labels_del(struct profd_labels *l, const char *name)
{
    bool found;
    size_t i = find(l, name, &found);
    if (found)
        profd_labels_del_at(l, i);
}

void profd_labels_copy(struct profd_labels *dst, const struct profd_labels *src)
{
    profd_labels_clear(dst);
    if (!src->n)
        return;
    dst->items = profd_xcalloc(src->n, sizeof(*dst->items));
    dst->cap = src->n;
    for (size_t i = 0; i < src->n; i++)
        set_item(&dst->items[i], src->items[i].name, src->items[i].value,
                 strlen(src->items[i].value));
    dst->n = src->n;
}

void profd_labels_clear(struct profd_labels *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i].name);   /* the value with it */
    free(l->items);
    *l = (struct profd_labels){0};
}
