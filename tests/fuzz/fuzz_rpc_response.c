// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: what the RPC client reads of a server's response (an
 * OTLP, Parca or Pyroscope backend's, never to be trusted). The first byte
 * picks gRPC (odd) or plain HTTP (even); then header and trailer lines up
 * to an empty line, each given to the header callback as libcurl gives
 * them (grpc-status, grpc-message, grpc-encoding, grpc-status-details-bin,
 * retry-after...), and the rest is the body. The callbacks are static in
 * lib/rpc_client.c, which is included here for them. The body is also
 * read as an OAuth 2.0 token endpoint's answer. */
#include <stdint.h>
#include <stdlib.h>

#include "../../core/compression.h"
#include "../../lib/rpc_client.c"

static const struct profd_host host = {.decompress = profd_decompress};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    if (len == 0)
        return 0;
    struct rpc_client c = {.host = &host,
                           .protocol = data[0] & 1 ? PROFD_RPC_GRPC : PROFD_RPC_HTTP,
                           .retry_408_5xx = data[0] & 2};
    struct rpc_result res = {.http_status = 200 + 100 * (data[0] >> 5)};
    struct call call = {.res = &res};
    const char *p = (const char *)data + 1, *end = (const char *)data + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *stop = nl ? nl + 1 : end;
        if (stop - p <= 2 && (*p == '\n' || *p == '\r')) {
            p = stop;
            break;   /* the empty line: the body follows */
        }
        on_header((char *)p, 1, (size_t)(stop - p), &call);
        p = stop;
    }
    if (p < end && on_body((char *)p, 1, (size_t)(end - p), &call) != (size_t)(end - p)) {
        free(call.body);   /* over the limit: the transfer fails */
        return 0;
    }
    int rc = c.protocol == PROFD_RPC_GRPC ? finish_grpc(&c, &call) : finish_http(&c, &call);
    if (res.retry_after < 0 || strnlen(res.message, sizeof(res.message)) == sizeof(res.message))
        abort();   /* a negative wait, or a message not ended */
    if (rc == PROFD_OK && c.protocol == PROFD_RPC_GRPC && res.len > MAX_RESPONSE)
        abort();   /* the limit holds */
    char *token;
    int64_t expires_in;
    char why[128];
    int parsed = oauth2_token_parse(p, (size_t)(end - p), &token, &expires_in, why, sizeof(why));
    if ((parsed == 0) != (token != NULL) || (token && !*token) || expires_in < 0)
        abort();   /* a token exactly when it said so, never empty; no negative lifetime */
    for (const char *t = token; t && *t; t++)
        if (*t < 0x21 || *t > 0x7e)
            abort();   /* nothing a header line cannot carry */
    free(token);
    free(res.body);
    free(call.body);
    return 0;
}
