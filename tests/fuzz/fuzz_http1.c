// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: the HTTP/1.1 request head parser on the input as a
 * head, and the chunk-size parser on each of its lines. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/http1_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    char *buf = malloc(len + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, len);
    buf[len] = '\0';
    for (size_t start = 0, i = 0; i <= len; i++) {
        if (i == len || buf[i] == '\n') {
            uint64_t size;
            http1_chunk_size(buf + start, i - start, &size);
            start = i + 1;
        }
    }
    struct http1_head h;
    char why[160];
    if (http1_parse_head(buf, len, &h, why, sizeof(why)) == 0) {
        http1_field(&h, "Content-Type");
        for (size_t i = 0; i < h.nfields; i++)
            if (!h.fields[i].name || !h.fields[i].value)
                abort();
    }
    free(buf);
    return 0;
}
