// SPDX-License-Identifier: Apache-2.0
/* The pprof decoder's ids: each table's ids mapped to refs, checked
 * unique and non-zero, or assumed to be 1..n and checked as read. */
#include "alloc.h"
#include "pprof_decoder.h"

bool pprof_idmap_build(struct decoder *d, struct table_ids *t, const char *what)
{
    struct idmap *m = &t->map;
    size_t n = t->n;
    m->dense = true;
    for (size_t i = 0; i < n; i++) {
        if (t->ids[i] == 0)
            return pprof_fail(d, t->offsets[i], "%s #%zu has id 0", what, i);
        if (t->ids[i] != i + 1)
            m->dense = false;
    }
    if (m->dense)
        return true;
    size_t size = 16;
    while (size < n * 2)
        size *= 2;
    m->mask = size - 1;
    m->keys = profd_xcalloc(size, sizeof(*m->keys));
    m->refs = profd_xcalloc(size, sizeof(*m->refs));
    for (size_t i = 0; i < n; i++) {
        size_t h = mix64(t->ids[i]) & m->mask;
        while (m->keys[h]) {
            if (m->keys[h] == t->ids[i])
                return pprof_fail(d, t->offsets[i], "duplicate %s id %llu", what,
                                  (unsigned long long)t->ids[i]);
            h = (h + 1) & m->mask;
        }
        m->keys[h] = t->ids[i];
        m->refs[h] = (uint32_t)(i + 1);
    }
    return true;
}


bool pprof_same_id(struct decoder *d, const struct table_ids *t, size_t i, uint64_t v,
                   size_t off, const char *what)
{
    if (d->ids_assumed)
        return v == i + 1 || pprof_fail(d, off, "%s id %llu is not its position + 1", what,
                                        (unsigned long long)v);
    return v == t->ids[i] || pprof_fail(d, off, "%s has two different ids", what);
}

bool pprof_has_id(struct decoder *d, bool seen, size_t off, const char *what)
{
    return seen || !d->ids_assumed || pprof_fail(d, off, "%s has no id", what);
}

void pprof_assume_ids(struct table_ids *t, size_t n)
{
    t->n = n;
    t->map.dense = true;
}

bool pprof_read_entry_id(struct decoder *d, const struct pb_field *outer, struct table_ids *t,
                         const char *what)
{
    struct pb_reader r;
    struct pb_field f;
    const char *err;
    int rc;
    uint64_t id = 0;
    pb_reader_init(&r, d->buf, outer->data, outer->len);
    while ((rc = pb_next(&r, &f, &err)) > 0)
        if (f.number == 1) {
            if (!pprof_expect_wire(d, &f, PB_VARINT, what))
                return false;
            id = f.value;
            break;
        }
    if (rc < 0)
        return pprof_fail(d, f.offset, "%s: %s", what, err);
    if (t->n == t->cap) {
        size_t cap = t->cap;
        profd_grow(&t->ids, &cap, t->n + 1, sizeof(*t->ids));
        profd_grow(&t->offsets, &t->cap, t->n + 1, sizeof(*t->offsets));
    }
    t->ids[t->n] = id;
    t->offsets[t->n++] = outer->offset;
    return true;
}

