// SPDX-License-Identifier: Apache-2.0
#include "otlp_dict.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "block_cache.h"

enum {
    D_MAPPING = 1, D_LOCATION, D_FUNCTION, D_LINK, D_STRING, D_ATTRIBUTE, D_STACK,
};

#define NO_OFFSET ((size_t)-1)

struct parse {
    struct otlp_dict *d;
    char *err;
    size_t errlen;
};

__attribute__((format(printf, 3, 4))) static int fail(struct parse *ps, size_t offset,
                                                      const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (offset == NO_OFFSET)
        snprintf(ps->err, ps->errlen, "otlp: dictionary: %s", msg);
    else
        snprintf(ps->err, ps->errlen, "otlp: dictionary: %s at byte %zu", msg, offset);
    return -1;
}

/* Reads the fields of one entry of kind `what`; fn handles each field. */
static int each_field(struct parse *ps, const uint8_t *data, size_t len, const char *what,
                      int (*fn)(struct parse *ps, void *entry, const struct pb_field *f),
                      void *entry)
{
    struct pb_reader r;
    pb_reader_init(&r, ps->d->base, data, len);
    struct pb_field f = {0};
    const char *why = NULL;
    int rc;
    while ((rc = pb_next(&r, &f, &why)) > 0)
        if (fn(ps, entry, &f) < 0)
            return -1;
    if (rc < 0)
        return fail(ps, f.offset, "%s: %s", what, why);
    return 0;
}

/* Refuses a known field with another wire type: the mark of an older
 * version of the messages. */
static int wire(struct parse *ps, const struct pb_field *f, uint32_t want, const char *field)
{
    if (f->wire == want)
        return 0;
    return fail(ps, f->offset,
                "%s has wire type %u, not %u: not the OTLP profiles v1.10/v1.11 format "
                "(v1.9.0 and older numbered these fields differently)",
                field, f->wire, want);
}

bool otlp_pool_append(struct otlp_dict *d, const struct pb_field *f, struct otlp_list *list)
{
    if (list->count == 0)
        list->start = (uint32_t)d->npool;
    if (f->wire == PB_VARINT) {
        profd_block_grow(&d->pool, &d->pool_cap, d->npool + 1, sizeof(*d->pool));
        d->pool[d->npool++] = (uint32_t)(f->value > UINT32_MAX ? UINT32_MAX : f->value);
        list->count++;
        return true;
    }
    if (f->wire != PB_LEN)
        return false;
    ptrdiff_t n = pb_packed_count(f->data, f->len);
    if (n < 0)
        return false;
    profd_block_grow(&d->pool, &d->pool_cap, d->npool + (size_t)n, sizeof(*d->pool));
    struct pb_reader r;
    pb_reader_init(&r, f->data, f->data, f->len);
    uint64_t v;
    while (pb_varint(&r, &v)) {
        /* negative int32 values arrive as huge varints: out of range below */
        d->pool[d->npool++] = (uint32_t)(v > UINT32_MAX ? UINT32_MAX : v);
        list->count++;
    }
    return true;
}

bool otlp_value_parse(const uint8_t *data, size_t len, struct otlp_value *v, const char **why)
{
    *v = (struct otlp_value){0};
    struct pb_reader r;
    pb_reader_init(&r, data, data, len);
    struct pb_field f = {0};
    int rc;
    while ((rc = pb_next(&r, &f, why)) > 0) {
        static const uint8_t wire_of[9] = {0, PB_LEN, PB_VARINT, PB_VARINT, PB_I64, PB_LEN,
                                          PB_LEN, PB_LEN, PB_VARINT};
        if (f.number > 8)
            continue;
        if (f.wire != wire_of[f.number]) {
            *why = "AnyValue field with the wrong wire type";
            return false;
        }
        switch (f.number) {
        case 1: v->kind = OTLP_V_STRING; v->bytes = f.data; v->len = f.len; break;
        case 2: v->kind = OTLP_V_BOOL; v->i = f.value != 0; break;
        case 3: v->kind = OTLP_V_INT; v->i = (int64_t)f.value; break;
        case 4: v->kind = OTLP_V_DOUBLE; memcpy(&v->d, &f.value, 8); break;
        case 5: v->kind = OTLP_V_ARRAY; v->bytes = f.data; v->len = f.len; break;
        case 6: v->kind = OTLP_V_KVLIST; v->bytes = f.data; v->len = f.len; break;
        case 7: v->kind = OTLP_V_BYTES; v->bytes = f.data; v->len = f.len; break;
        case 8: v->kind = OTLP_V_STRINDEX; v->i = (int64_t)f.value; break;
        }
    }
    return rc == 0;
}

static int mapping_field(struct parse *ps, void *entry, const struct pb_field *f)
{
    struct otlp_mapping *m = entry;
    switch (f->number) {
    case 1: case 2: case 3: case 4:
        if (wire(ps, f, PB_VARINT, "Mapping field") < 0)
            return -1;
        if (f->number == 1)
            m->memory_start = f->value;
        else if (f->number == 2)
            m->memory_limit = f->value;
        else if (f->number == 3)
            m->file_offset = f->value;
        else
            m->filename = (uint32_t)(f->value > UINT32_MAX ? UINT32_MAX : f->value);
        return 0;
    case 5:
        if (!otlp_pool_append(ps->d, f, &m->attrs))
            return fail(ps, f->offset, "Mapping.attribute_indices malformed");
        return 0;
    }
    return 0;
}

static int line_field(struct parse *ps, void *entry, const struct pb_field *f)
{
    struct otlp_line *l = entry;
    if (f->number < 1 || f->number > 3)
        return 0;
    if (wire(ps, f, PB_VARINT, "Line field") < 0)
        return -1;
    if (f->number == 1)
        l->function = (uint32_t)(f->value > UINT32_MAX ? UINT32_MAX : f->value);
    else if (f->number == 2)
        l->line = (int64_t)f->value;
    else
        l->column = (int64_t)f->value;
    return 0;
}

static int location_field(struct parse *ps, void *entry, const struct pb_field *f)
{
    struct otlp_location *loc = entry;
    struct otlp_dict *d = ps->d;
    switch (f->number) {
    case 1: case 2:
        if (wire(ps, f, PB_VARINT, "Location field") < 0)
            return -1;
        if (f->number == 1)
            loc->mapping = (uint32_t)(f->value > UINT32_MAX ? UINT32_MAX : f->value);
        else
            loc->address = f->value;
        return 0;
    case 3: {
        if (wire(ps, f, PB_LEN, "Location.lines") < 0)
            return -1;
        if (loc->nlines == 0)
            loc->lines_start = (uint32_t)d->nlines;
        else if (loc->lines_start + loc->nlines != d->nlines)
            return fail(ps, f->offset, "Location.lines interleaved");
        struct otlp_line line = {0};
        if (each_field(ps, f->data, f->len, "Line", line_field, &line) < 0)
            return -1;
        profd_block_grow(&d->lines, &d->lines_cap, d->nlines + 1, sizeof(*d->lines));
        d->lines[d->nlines++] = line;
        loc->nlines++;
        return 0;
    }
    case 4:
        if (!otlp_pool_append(d, f, &loc->attrs))
            return fail(ps, f->offset, "Location.attribute_indices malformed");
        return 0;
    }
    return 0;
}

static int function_field(struct parse *ps, void *entry, const struct pb_field *f)
{
    struct otlp_function *fn = entry;
    if (f->number < 1 || f->number > 4)
        return 0;
    if (wire(ps, f, PB_VARINT, "Function field") < 0)
        return -1;
    uint32_t idx = (uint32_t)(f->value > UINT32_MAX ? UINT32_MAX : f->value);
    switch (f->number) {
    case 1: fn->name = idx; break;
    case 2: fn->system_name = idx; break;
    case 3: fn->filename = idx; break;
    case 4: fn->start_line = (int64_t)f->value; break;
    }
    return 0;
}

static int link_field(struct parse *ps, void *entry, const struct pb_field *f)
{
    struct otlp_link *l = entry;
    if (f->number != 1 && f->number != 2)
        return 0;
    if (wire(ps, f, PB_LEN, "Link field") < 0)
        return -1;
    if (f->number == 1) {
        l->trace_id = f->data;
        l->trace_len = (uint32_t)f->len;
    } else {
        l->span_id = f->data;
        l->span_len = (uint32_t)f->len;
    }
    return 0;
}

static int attr_field(struct parse *ps, void *entry, const struct pb_field *f)
{
    struct otlp_attr *a = entry;
    if (f->number == 1 || f->number == 3) {
        /* v1.7's attribute_table held KeyValue, whose key (1) was a string */
        if (wire(ps, f, PB_VARINT, "KeyValueAndUnit key/unit") < 0)
            return -1;
        uint32_t idx = (uint32_t)(f->value > UINT32_MAX ? UINT32_MAX : f->value);
        if (f->number == 1)
            a->key = idx;
        else
            a->unit = idx;
    } else if (f->number == 2) {
        if (wire(ps, f, PB_LEN, "KeyValueAndUnit.value") < 0)
            return -1;
        const char *why = NULL;
        if (!otlp_value_parse(f->data, f->len, &a->value, &why))
            return fail(ps, f->offset, "KeyValueAndUnit.value: %s", why);
    }
    return 0;
}

static int stack_field(struct parse *ps, void *entry, const struct pb_field *f)
{
    struct otlp_stack *s = entry;
    if (f->number != 1)
        return 0;
    if (!otlp_pool_append(ps->d, f, &s->locations))
        return fail(ps, f->offset, "Stack.location_indices malformed");
    return 0;
}

#define ADD_ENTRY(d, table, fn, what)                                                     \
    do {                                                                                  \
        profd_block_grow(&(d)->table, &(d)->table##_cap, (d)->n##table + 1, sizeof(*(d)->table)); \
        memset(&(d)->table[(d)->n##table], 0, sizeof(*(d)->table));                       \
        if (each_field(&ps, f.data, f.len, what, fn, &(d)->table[(d)->n##table]) < 0)     \
            return -1;                                                                    \
        (d)->n##table++;                                                                  \
    } while (0)

int otlp_dict_add(struct otlp_dict *d, const uint8_t *base, const uint8_t *data, size_t len,
                  char *err, size_t errlen)
{
    struct parse ps = {d, err, errlen};
    d->base = base;
    struct pb_reader r;
    pb_reader_init(&r, base, data, len);
    struct pb_field f = {0};
    const char *why = NULL;
    int rc;
    while ((rc = pb_next(&r, &f, &why)) > 0) {
        if (f.number < D_MAPPING || f.number > D_STACK)
            continue;
        if (wire(&ps, &f, PB_LEN, "ProfilesDictionary table entry") < 0)
            return -1;
        switch (f.number) {
        case D_MAPPING: ADD_ENTRY(d, mappings, mapping_field, "Mapping"); break;
        case D_LOCATION: ADD_ENTRY(d, locations, location_field, "Location"); break;
        case D_FUNCTION: ADD_ENTRY(d, functions, function_field, "Function"); break;
        case D_LINK: ADD_ENTRY(d, links, link_field, "Link"); break;
        case D_ATTRIBUTE: ADD_ENTRY(d, attrs, attr_field, "KeyValueAndUnit"); break;
        case D_STACK: ADD_ENTRY(d, stacks, stack_field, "Stack"); break;
        case D_STRING:
            profd_block_grow(&d->strings, &d->strings_cap, d->nstrings + 1, sizeof(*d->strings));
            d->strings[d->nstrings++] = (struct profd_str){(const char *)f.data, (uint32_t)f.len};
            break;
        }
    }
    if (rc < 0)
        return fail(&ps, f.offset, "%s", why);
    return 0;
}

/* Range checks: an index must name an entry of its table. */
static bool in(uint64_t idx, size_t n)
{
    return idx < n;
}

static int check_list(struct parse *ps, const struct otlp_list *l, size_t n, const char *what,
                      size_t entry, const char *table)
{
    for (uint32_t i = 0; i < l->count; i++)
        if (!in(ps->d->pool[l->start + i], n))
            return fail(ps, NO_OFFSET, "%s[%zu]: index %u out of range (%s has %zu entries)", what,
                        entry, ps->d->pool[l->start + i], table, n);
    return 0;
}

static int check_string(struct parse *ps, uint32_t idx, const char *what, size_t entry)
{
    if (in(idx, ps->d->nstrings))
        return 0;
    return fail(ps, NO_OFFSET, "%s[%zu]: string index %u out of range (string_table has %zu entries)",
                what, entry, idx, ps->d->nstrings);
}

int otlp_dict_check(struct otlp_dict *d, char *err, size_t errlen)
{
    struct parse ps = {d, err, errlen};
    if (d->nstrings == 0 || d->strings[0].len != 0)
        return fail(&ps, NO_OFFSET, "string_table[0] must be the empty string");
    for (size_t i = 0; i < d->nmappings; i++)
        if (check_string(&ps, d->mappings[i].filename, "mapping_table", i) < 0 ||
            check_list(&ps, &d->mappings[i].attrs, d->nattrs, "mapping_table", i,
                       "attribute_table") < 0)
            return -1;
    for (size_t i = 0; i < d->nfunctions; i++) {
        const struct otlp_function *fn = &d->functions[i];
        if (check_string(&ps, fn->name, "function_table", i) < 0 ||
            check_string(&ps, fn->system_name, "function_table", i) < 0 ||
            check_string(&ps, fn->filename, "function_table", i) < 0)
            return -1;
    }
    for (size_t i = 0; i < d->nlocations; i++) {
        const struct otlp_location *loc = &d->locations[i];
        if (loc->mapping && !in(loc->mapping, d->nmappings))
            return fail(&ps, NO_OFFSET, "location_table[%zu]: mapping_index %u out of range "
                        "(mapping_table has %zu entries)", i, loc->mapping, d->nmappings);
        for (uint32_t k = 0; k < loc->nlines; k++)
            if (!in(d->lines[loc->lines_start + k].function, d->nfunctions))
                return fail(&ps, NO_OFFSET, "location_table[%zu]: line %u: function_index %u out of "
                            "range (function_table has %zu entries)", i, k,
                            d->lines[loc->lines_start + k].function, d->nfunctions);
        if (check_list(&ps, &loc->attrs, d->nattrs, "location_table", i, "attribute_table") < 0)
            return -1;
    }
    for (size_t i = 0; i < d->nstacks; i++)
        if (check_list(&ps, &d->stacks[i].locations, d->nlocations, "stack_table", i,
                       "location_table") < 0)
            return -1;
    for (size_t i = 0; i < d->nattrs; i++) {
        struct otlp_attr *a = &d->attrs[i];
        if (check_string(&ps, a->key, "attribute_table", i) < 0 ||
            check_string(&ps, a->unit, "attribute_table", i) < 0)
            return -1;
        if (a->value.kind == OTLP_V_STRINDEX) {
            if (a->value.i < 0 || check_string(&ps, (uint32_t)a->value.i, "attribute_table", i) < 0)
                return fail(&ps, NO_OFFSET, "attribute_table[%zu]: string_value_strindex out of range",
                            i);
            uint32_t s = (uint32_t)a->value.i;
            a->value = (struct otlp_value){.kind = OTLP_V_STRING,
                                           .bytes = (const uint8_t *)d->strings[s].ptr,
                                           .len = d->strings[s].len};
        }
    }
    return 0;
}

void otlp_dict_free(struct otlp_dict *d)
{
#define RELEASE(table) profd_block_release(d->table, d->table##_cap, sizeof(*d->table))
    RELEASE(strings);
    RELEASE(mappings);
    RELEASE(locations);
    RELEASE(lines);
    RELEASE(functions);
    RELEASE(links);
    RELEASE(attrs);
    RELEASE(stacks);
    RELEASE(pool);
#undef RELEASE
    memset(d, 0, sizeof(*d));
}
