// SPDX-License-Identifier: Apache-2.0
/* The HTTP/1.1 request head and chunk-size parser: what it reads, and what
 * it refuses with which status. */
#include "check.h"

#include <stdio.h>
#include <string.h>

#include "../../core/http1_parse.h"

/* Parses text (copied: the parser writes into its buffer); the status. */
static int parse(const char *text, struct http1_head *h, char *copy, size_t n, char *why)
{
    snprintf(copy, n, "%s", text);
    return http1_parse_head(copy, strlen(copy), h, why, 160);
}

TEST(reads_the_request_line_fields_and_framing)
{
    struct http1_head h;
    char buf[512], why[160];
    CHECK_INT(parse("\r\nPOST /ingest?name=a HTTP/1.1\r\nHost: x\r\ncontent-length:  12 \r\n"
                    "X-Scope-OrgID:\tt1\r\nExpect: 100-continue\r\n\r\n", &h, buf, sizeof(buf),
                    why), 0);
    CHECK_STR(h.method, "POST");
    CHECK_STR(h.target, "/ingest?name=a");
    CHECK_INT(h.minor, 1);
    CHECK_INT(h.nfields, 4);
    CHECK(h.has_length && !h.chunked);
    CHECK_INT(h.content_length, 12);
    CHECK_STR(http1_field(&h, "x-scope-orgid"), "t1");   /* any case, value trimmed */
    CHECK(http1_field(&h, "Absent") == NULL);
    CHECK(h.keep_alive);
    CHECK(h.expect_continue);
    CHECK_INT(parse("POST / HTTP/1.1\nTransfer-Encoding: chunked\nConnection: keep-alive, Close"
                    "\n\n", &h, buf, sizeof(buf), why), 0);   /* bare LF line ends */
    CHECK(h.chunked && !h.has_length);
    CHECK(!h.keep_alive);
    CHECK_INT(parse("POST / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &h, buf, sizeof(buf),
                    why), 0);
    CHECK(h.keep_alive);
    CHECK_INT(parse("POST / HTTP/1.0\r\nExpect: 100-continue\r\n\r\n", &h, buf, sizeof(buf),
                    why), 0);
    CHECK(!h.keep_alive && !h.expect_continue);   /* 1.0: neither */
}

TEST(refuses_what_two_readers_could_read_apart)
{
    static const struct {
        const char *head;
        int status;
        const char *why;
    } cases[] = {
        {"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
         "both"},
        {"POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n", 400, "repeated"},
        {"POST / HTTP/1.1\r\nContent-Length: 3x\r\n\r\n", 400, "Content-Length"},
        {"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400, "Content-Length"},
        {"POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", 400,
         "Content-Length"},
        {"POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501, "not supported"},
        {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
         501, "not supported"},
        {"POST / HTTP/1.1\r\nHost : x\r\n\r\n", 400, "header name"},
        {"POST / HTTP/1.1\r\nHost: x\r\n y\r\n\r\n", 400, "folded"},
        {"POST / HTTP/1.1\r\nno colon\r\n\r\n", 400, "malformed header"},
        {"POST / HTTP/2.0\r\n\r\n", 505, "HTTP/1.x"},
        {"POST /\r\n\r\n", 400, "request line"},
        {"POST  / HTTP/1.1\r\n\r\n", 400, "request line"},
        {"PO(ST / HTTP/1.1\r\n\r\n", 400, "method"},
        {"\r\n\r\n", 400, "empty"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        struct http1_head h;
        char buf[512], why[160] = "";
        CHECK_INT(parse(cases[i].head, &h, buf, sizeof(buf), why), cases[i].status);
        CHECK_CONTAINS(why, cases[i].why);
    }
}

TEST(too_many_fields)
{
    char text[8192] = "POST / HTTP/1.1\r\n", buf[8192], why[160];
    for (int i = 0; i <= HTTP1_MAX_FIELDS; i++)
        snprintf(text + strlen(text), sizeof(text) - strlen(text), "X-%d: v\r\n", i);
    strcat(text, "\r\n");
    struct http1_head h;
    CHECK_INT(parse(text, &h, buf, sizeof(buf), why), 431);
}

TEST(chunk_sizes)
{
    uint64_t n;
    CHECK_INT(http1_chunk_size("1a3F", 4, &n), 0);
    CHECK_INT(n, 0x1a3f);
    CHECK_INT(http1_chunk_size("0;name=value", 12, &n), 0);
    CHECK_INT(n, 0);
    CHECK_INT(http1_chunk_size("10 ", 3, &n), 0);
    CHECK_INT(n, 16);
    CHECK_INT(http1_chunk_size("", 0, &n), -1);
    CHECK_INT(http1_chunk_size("x1", 2, &n), -1);
    CHECK_INT(http1_chunk_size("1x", 2, &n), -1);
    CHECK_INT(http1_chunk_size("1000000000000000", 16, &n), -1);   /* 2^60 */
}

RUN_TESTS()
