// SPDX-License-Identifier: Apache-2.0
#include "compression.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zstd.h>

#include "alloc.h"
#include "gzip.h"

static bool is(const char *encoding, const char *name)
{
    return strcasecmp(encoding, name) == 0;
}

bool profd_encoding_known(const char *encoding)
{
    return !*encoding || is(encoding, "identity") || is(encoding, "gzip") || is(encoding, "zstd");
}

int profd_compress(const char *encoding, const uint8_t *data, size_t len, uint8_t **out,
                   size_t *out_len)
{
    if (is(encoding, "gzip")) {
        profd_gzip(data, len, out, out_len);
        return 0;
    }
    if (is(encoding, "zstd")) {
        size_t cap = ZSTD_compressBound(len);
        *out = profd_xmalloc(cap ? cap : 1);
        size_t n = ZSTD_compress(*out, cap, data, len, 3);
        if (ZSTD_isError(n)) {
            free(*out);
            return -1;
        }
        *out_len = n;
        return 0;
    }
    if (!profd_encoding_known(encoding))
        return -1;
    *out = profd_xmalloc(len ? len : 1);
    if (len)
        memcpy(*out, data, len);
    *out_len = len;
    return 0;
}

static int unzstd(const uint8_t *data, size_t len, size_t max_out, uint8_t **out,
                  size_t *out_len, char *err, size_t errlen)
{
    ZSTD_DStream *z = ZSTD_createDStream();
    if (!z)
        profd_out_of_memory(sizeof(void *));
    size_t cap = len * 4 + 1024 < max_out ? len * 4 + 1024 : max_out;
    uint8_t *buf = profd_xmalloc(cap + 1);
    ZSTD_inBuffer in = {data, len, 0};
    ZSTD_outBuffer o = {buf, cap, 0};
    size_t rc = 1;
    while (in.pos < in.size || rc != 0) {
        if (o.pos == o.size) {
            if (cap >= max_out) {
                snprintf(err, errlen, "zstd: more than %zu bytes once decompressed", max_out);
                rc = (size_t)PROFD_DECOMPRESS_TOO_LARGE;
                goto fail;
            }
            cap = cap * 2 < max_out ? cap * 2 : max_out;
            buf = profd_xrealloc(buf, cap + 1);
            o.dst = buf;
            o.size = cap;
        }
        size_t before_in = in.pos, before_out = o.pos;
        rc = ZSTD_decompressStream(z, &o, &in);
        if (ZSTD_isError(rc)) {
            snprintf(err, errlen, "zstd: %s at byte %zu", ZSTD_getErrorName(rc), in.pos);
            goto fail;
        }
        if (rc != 0 && in.pos == in.size && before_in == in.pos && before_out == o.pos) {
            snprintf(err, errlen, "zstd: truncated frame");
            goto fail;
        }
    }
    ZSTD_freeDStream(z);
    *out = buf;
    *out_len = o.pos;
    return 0;
fail:
    ZSTD_freeDStream(z);
    free(buf);
    return rc == (size_t)PROFD_DECOMPRESS_TOO_LARGE ? PROFD_DECOMPRESS_TOO_LARGE
                                                    : PROFD_DECOMPRESS_CORRUPT;
}

int profd_decompress(const char *encoding, const uint8_t *data, size_t len, size_t max_out,
                     uint8_t **out, size_t *out_len, char *err, size_t errlen)
{
    if (len == 0 && profd_encoding_known(encoding)) {   /* an empty body is never compressed */
        *out = profd_xmalloc(1);
        *out_len = 0;
        return 0;
    }
    if (is(encoding, "gzip")) {
        int rc = profd_gunzip(data, len, max_out, out, out_len, err, errlen);
        return rc == -2 ? PROFD_DECOMPRESS_TOO_LARGE : rc;
    }
    if (is(encoding, "zstd"))
        return unzstd(data, len, max_out, out, out_len, err, errlen);
    if (!profd_encoding_known(encoding)) {
        snprintf(err, errlen, "unsupported encoding \"%s\"", encoding);
        return PROFD_DECOMPRESS_UNSUPPORTED;
    }
    if (len > max_out) {
        snprintf(err, errlen, "body of %zu bytes is over the limit of %zu", len, max_out);
        return PROFD_DECOMPRESS_TOO_LARGE;
    }
    *out = profd_xmalloc(len ? len : 1);
    if (len)
        memcpy(*out, data, len);
    *out_len = len;
    return 0;
}
