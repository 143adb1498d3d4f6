// SPDX-License-Identifier: Apache-2.0
/* profd's base64 against RFC 4648's vectors, OpenSSL's encoder, and the
 * inputs proto3's JSON mapping accepts or refuses. */
#include <openssl/evp.h>

#include "../../core/base64.h"
#include "check.h"

static const char *decoded(const char *s)
{
    static char out[256];
    ssize_t n = profd_base64_decode((uint8_t *)out, s, strlen(s));
    if (n < 0)
        return NULL;
    out[n] = '\0';
    return out;
}

TEST(rfc_4648_vectors_both_ways)
{
    static const char *const cases[][2] = {
        {"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char out[16];
        size_t n = profd_base64_encode(out, (const uint8_t *)cases[i][0], strlen(cases[i][0]));
        CHECK_INT(n, profd_base64_length(strlen(cases[i][0])));
        out[n] = '\0';
        CHECK_STR(out, cases[i][1]);
        CHECK_STR(decoded(cases[i][1]), cases[i][0]);
    }
}

TEST(unpadded_and_url_safe_are_accepted)
{
    CHECK_STR(decoded("Zg"), "f");
    CHECK_STR(decoded("Zm8"), "fo");
    CHECK_STR(decoded("Zm9vYmE"), "fooba");
    uint8_t out[8];
    CHECK_INT(profd_base64_decode(out, "-_-_", 4), 3);   /* "+/+/" in the URL-safe alphabet */
    CHECK_INT(out[0], 0xfb);
    CHECK_INT(out[1], 0xff);
    CHECK_INT(out[2], 0xbf);
}

TEST(what_is_not_base64_is_refused)
{
    CHECK(decoded("Z") == NULL);          /* a lone digit */
    CHECK(decoded("Zm9vY") == NULL);
    CHECK(decoded("Zg=") == NULL);        /* padding to a wrong length */
    CHECK(decoded("Z===") == NULL);
    CHECK(decoded("Zm 9v") == NULL);
    CHECK(decoded("Zm9v!") == NULL);
    CHECK(decoded("Zg==Zg==") == NULL);   /* padding inside */
}

TEST(same_as_openssl_at_every_length)
{
    uint8_t data[200];
    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (uint8_t)(i * 37 + 11);
    for (size_t len = 0; len <= sizeof(data); len++) {
        char ours[300], theirs[300];
        uint8_t back[200];
        size_t n = profd_base64_encode(ours, data, len);
        int m = EVP_EncodeBlock((unsigned char *)theirs, data, (int)len);
        ssize_t k = profd_base64_decode(back, ours, n);
        if ((int)n != m || memcmp(ours, theirs, n) != 0 || k != (ssize_t)len ||
            memcmp(back, data, len) != 0)
            CHECK_INT(len, -1);   /* names the first length that differs */
    }
}

RUN_TESTS()
