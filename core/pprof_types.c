// SPDX-License-Identifier: Apache-2.0
/* The type names of a pprof profile: read from its bytes without decoding
 * it, or from its model. */
#include "pprof.h"

#include <string.h>

#include "../lib/pb_reader.h"
#include "pprof_fields.h"

#define NO_STRING UINT64_MAX

/* The type field (1) of a ValueType message; NO_STRING when absent. */
static uint64_t value_type_name(const uint8_t *data, size_t len)
{
    struct pb_reader rd;
    struct pb_field f;
    const char *err;
    uint64_t type = NO_STRING;
    pb_reader_init(&rd, data, data, len);
    while (pb_next(&rd, &f, &err) > 0)
        if (f.number == 1 && f.wire == PB_VARINT)
            type = f.value;
    return type;
}

/* name (len bytes) into a slot of out, cut to fit (out->cut set then). */
static void copy_name(const uint8_t *name, size_t len, char *into, struct profd_type_names *out)
{
    if (len >= PROFD_TYPE_NAME_SIZE) {
        len = PROFD_TYPE_NAME_SIZE - 1;
        out->cut = true;
    }
    memcpy(into, name, len);
    into[len] = '\0';
}

void profd_pprof_type_names(const uint8_t *raw, size_t len, struct profd_type_names *out)
{
    uint64_t want[PROFD_TYPE_NAMES + 1];   /* [0] the period type, then the sample types */
    char *into[PROFD_TYPE_NAMES + 1];
    size_t nwant = 1;
    struct pb_reader rd;
    struct pb_field f;
    const char *err;
    memset(out, 0, sizeof(*out));
    want[0] = NO_STRING;
    into[0] = out->period;
    pb_reader_init(&rd, raw, raw, len);
    while (pb_next(&rd, &f, &err) > 0) {
        if (f.wire != PB_LEN)
            continue;
        if (f.number == F_PERIOD_TYPE) {
            want[0] = value_type_name(f.data, f.len);
        } else if (f.number == F_SAMPLE_TYPE) {
            if (out->nsample == PROFD_TYPE_NAMES) {
                out->cut = true;
                continue;
            }
            want[nwant] = value_type_name(f.data, f.len);
            into[nwant++] = out->sample[out->nsample++];
        }
    }
    uint64_t last = 0;   /* the string table is read up to the last index wanted */
    for (size_t i = 0; i < nwant; i++)
        if (want[i] != NO_STRING && want[i] > last)
            last = want[i];
    uint64_t index = 0;
    pb_reader_init(&rd, raw, raw, len);
    while (index <= last && pb_next(&rd, &f, &err) > 0) {
        if (f.number != F_STRING || f.wire != PB_LEN)
            continue;
        for (size_t i = 0; i < nwant; i++)
            if (want[i] == index)
                copy_name(f.data, f.len, into[i], out);
        index++;
    }
}

/* One name into out, cut as profd_pprof_type_names cuts it. */
static void name_of(const struct profd_profile *p, uint32_t index, char *into,
                    struct profd_type_names *out)
{
    if (index < p->nstrings)
        copy_name((const uint8_t *)p->strings[index].ptr, p->strings[index].len, into, out);
}

void profd_profile_type_names(const struct profd_profile *p, struct profd_type_names *out)
{
    memset(out, 0, sizeof(*out));
    name_of(p, p->period_type.type, out->period, out);
    for (uint32_t i = 0; i < p->nsample_types; i++) {
        if (out->nsample == PROFD_TYPE_NAMES) {
            out->cut = true;
            break;
        }
        name_of(p, p->sample_types[i].type, out->sample[out->nsample++], out);
    }
}
