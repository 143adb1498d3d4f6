// SPDX-License-Identifier: Apache-2.0
#include "pathset.h"

#include <stdlib.h>
#include <string.h>

static size_t find(const struct pathset *s, const char *key, bool *found)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(s->items[mid], key);
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

bool pathset_has(const struct pathset *s, const char *key)
{
    bool found;
    find(s, key, &found);
    return found;
}

bool pathset_add(struct pathset *s, const char *key)
{
    bool found;
    size_t i = find(s, key, &found);
    if (found)
        return false;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        char **items = realloc(s->items, cap * sizeof(*items));
        if (!items)
            abort();
        s->items = items;
        s->cap = cap;
    }
    char *copy = strdup(key);
    if (!copy)
        abort();
    memmove(&s->items[i + 1], &s->items[i], (s->n - i) * sizeof(*s->items));
    s->items[i] = copy;
    s->n++;
    return true;
}

void pathset_del(struct pathset *s, const char *key)
{
    bool found;
    size_t i = find(s, key, &found);
    if (!found)
        return;
    free(s->items[i]);
    memmove(&s->items[i], &s->items[i + 1], (s->n - i - 1) * sizeof(*s->items));
    s->n--;
}

void pathset_free(struct pathset *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->items[i]);
    free(s->items);
    *s = (struct pathset){0};
}
