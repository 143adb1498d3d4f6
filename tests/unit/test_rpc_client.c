// SPDX-License-Identifier: Apache-2.0
/* What the RPC client reads of a server's response headers and trailers:
 * grpc-status, grpc-message (percent-encoded), RetryInfo in
 * grpc-status-details-bin and Retry-After, including the numbers a server
 * should not send. */
#include "check.h"

#include "../../lib/client_auth.c"
#include "../../lib/client_proxy.c"
#include "../../lib/http_headers.c"
#include "../../lib/client_credentials.c"
#include "../../lib/client_tls.c"
#include "../../lib/grow.c"
#include "../../lib/oauth2_token.c"
#include "../../lib/rpc_client.c"

/* The unpadded base64 of bytes, as gRPC sends a -bin header. */
static void b64(const uint8_t *bytes, size_t n, char *out)
{
    int len = EVP_EncodeBlock((unsigned char *)out, bytes, (int)n);
    while (len > 0 && out[len - 1] == '=')
        out[--len] = '\0';
}

/* A google.rpc.Status (code 8, RESOURCE_EXHAUSTED) whose one detail is a
 * RetryInfo of seconds and nanos (each a one-byte varint, or ten bytes
 * of 2^62 when seconds is 0xff), in unpadded base64. */
static void retry_info_status(uint8_t seconds, uint8_t nanos, char *out)
{
    static const char type[] = "type.googleapis.com/google.rpc.RetryInfo";
    uint8_t duration[16], any[128], status[160];
    size_t d = 0, a = 0, s = 0;
    duration[d++] = 0x08;   /* seconds */
    if (seconds == 0xff) {
        static const uint8_t two_to_62[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40};
        memcpy(duration + d, two_to_62, sizeof(two_to_62));
        d += sizeof(two_to_62);
    } else {
        duration[d++] = seconds;
    }
    duration[d++] = 0x10;   /* nanos */
    duration[d++] = nanos;
    any[a++] = 0x0a;   /* type_url */
    any[a++] = sizeof(type) - 1;
    memcpy(any + a, type, sizeof(type) - 1);
    a += sizeof(type) - 1;
    any[a++] = 0x12;              /* value: a RetryInfo */
    any[a++] = (uint8_t)(d + 2);
    any[a++] = 0x0a;              /* retry_delay */
    any[a++] = (uint8_t)d;
    memcpy(any + a, duration, d);
    a += d;
    status[s++] = 0x08;   /* code */
    status[s++] = 8;
    status[s++] = 0x1a;   /* details */
    status[s++] = (uint8_t)a;
    memcpy(status + s, any, a);
    s += a;
    b64(status, s, out);
}

/* The header line given to the header callback of a call into *res. */
static void header(struct call *call, const char *line)
{
    char copy[2048];
    snprintf(copy, sizeof(copy), "%s\r\n", line);
    on_header(copy, 1, strlen(copy), call);
}

TEST(retry_info_in_the_status_details)
{
    char text[512];
    retry_info_status(2, 100, text);
    CHECK(retry_info_delay(text, strlen(text)) == 2 * 1000000000LL + 100);
    retry_info_status(0xff, 0, text);   /* 2^62 seconds: as good as forever */
    CHECK(retry_info_delay(text, strlen(text)) == INT64_MAX);
    CHECK(retry_info_delay("AAAA", 4) == -1);   /* a status without one */
    /* the longest detail read, every byte of it decoded: not one past the buffer */
    char longest[1397];
    memset(longest, 'A', sizeof(longest) - 1);
    longest[sizeof(longest) - 1] = '\0';
    CHECK(retry_info_delay(longest, strlen(longest)) == -1);
    CHECK(retry_info_delay(longest, sizeof(longest)) == -1);   /* too long: not read */
}

TEST(status_message_and_waits_from_headers)
{
    struct rpc_result res = {0};
    struct call call = {.res = &res};
    char line[600];
    char cut[] = "grpc-status: 14";   /* the callback given its first 14 bytes alone */
    on_header(cut, 1, 14, &call);
    CHECK_INT(res.grpc_status, 1);    /* not read past them (found by fuzz_rpc_response) */
    header(&call, "grpc-status: 8");
    header(&call, "grpc-message: too%20many%2");   /* a cut escape stays as it is */
    CHECK(call.grpc_status_seen);
    CHECK_INT(res.grpc_status, 8);
    CHECK_STR(res.message, "too many%2");
    char details[512];
    retry_info_status(3, 0, details);
    snprintf(line, sizeof(line), "grpc-status-details-bin: %s", details);
    header(&call, line);
    CHECK(call.retry_info);
    CHECK(res.retry_after == 3000000000LL);
    header(&call, "Retry-After: 120");
    CHECK(res.retry_after == 120000000000LL);
    header(&call, "retry-after: 99999999999999999999");   /* past 64 bits of ns */
    CHECK(res.retry_after == INT64_MAX);
    header(&call, "retry-after: -5");
    CHECK(res.retry_after == 0);
    header(&call, "retry-after: Wed, 21 Oct 2015 07:28:00 GMT");   /* a date past */
    CHECK(res.retry_after == 0);
}

RUN_TESTS()
