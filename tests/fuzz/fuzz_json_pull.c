// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: the JSON pull reader, against jansson. Every value of
 * the input is walked and read with the reader of its kind (strings
 * decoded, numbers converted, members' names read). The two must agree on
 * what is JSON: whatever jansson takes the reader takes (unless it nests
 * past the reader's bound), and whatever jansson refuses the reader
 * refuses, but for numbers past what jansson holds (integers beyond
 * int64_t, reals beyond a double), which the reader takes. Inputs with a
 * NUL byte are left out of the comparison: jansson reads one as the end.
 * Skipping the document must agree with walking it. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/json_pull.h"

/* Reads the value at the cursor with the reader of its kind. */
static void walk(struct json_pull *j)
{
    const char *key, *s;
    size_t len;
    double d;
    int64_t i;
    switch (json_pull_kind(j)) {
    case JSON_PULL_OBJECT:
        if (json_pull_object(j))
            while (json_pull_member(j, &key))
                walk(j);
        break;
    case JSON_PULL_ARRAY:
        if (json_pull_array(j))
            while (json_pull_element(j))
                walk(j);
        break;
    case JSON_PULL_STRING:
        if (json_pull_string(j, &s, &len) && strlen(s) != len)
            abort();   /* a NUL inside: \u0000 must have been refused */
        break;
    case JSON_PULL_NUMBER: {
        struct json_mark m = json_pull_mark(j);
        json_pull_integer(j, &i);
        json_pull_seek(j, m);
        json_pull_number(j, &d);
        break;
    }
    default:
        json_pull_skip(j);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    struct json_pull j;
    json_pull_init(&j, (const char *)data, len);
    walk(&j);
    bool taken = json_pull_end(&j);
    char why[256];
    json_pull_error(&j, why, sizeof(why));
    json_pull_free(&j);

    json_error_t je;   /* jansson reads a NUL byte as the end: only inputs without one */
    json_t *root = memchr(data, 0, len) ? NULL
                                        : json_loadb((const char *)data, len, JSON_DECODE_ANY, &je);
    if (root && !taken && !strstr(why, "nested too deep"))
        abort();   /* jansson's JSON refused */
    /* and what jansson refuses only for numbers past what it holds */
    if (!root && taken && !memchr(data, 0, len) && !strstr(je.text, "too big") &&
        !strstr(je.text, "real number overflow"))
        abort();
    json_decref(root);

    json_pull_init(&j, (const char *)data, len);   /* skipping checks the same */
    if ((json_pull_skip(&j) && json_pull_end(&j)) != taken)
        abort();
    json_pull_free(&j);
    return 0;
}
