// SPDX-License-Identifier: Apache-2.0
/* profd's MD5 against RFC 1321's test suite and against OpenSSL's. */
#include <openssl/evp.h>

#include "../../core/md5.h"
#include "check.h"

static void hex_of(const uint8_t d[16], char out[33])
{
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

TEST(rfc_1321_suite)
{
    static const char *const cases[][2] = {
        {"", "d41d8cd98f00b204e9800998ecf8427e"},
        {"a", "0cc175b9c0f1b6a831c399e269772661"},
        {"abc", "900150983cd24fb0d6963f7d28e17f72"},
        {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
        {"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
        {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
         "d174ab98d277d9f5a5611c2c9f419d9f"},
        {"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
         "57edf4a22be3c955ac49da2e2107b67a"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint8_t d[16];
        char hex[33];
        profd_md5(cases[i][0], strlen(cases[i][0]), d);
        hex_of(d, hex);
        CHECK_STR(hex, cases[i][1]);
    }
}

TEST(same_as_openssl_at_every_length_around_the_blocks)
{
    uint8_t data[300];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof(data); i++) {
        x = x * 1103515245u + 12345u;
        data[i] = (uint8_t)(x >> 16);
    }
    for (size_t len = 0; len <= sizeof(data); len++) {
        uint8_t ours[16], theirs[16];
        unsigned int n = 0;
        profd_md5(data, len, ours);
        EVP_Digest(data, len, theirs, &n, EVP_md5(), NULL);
        if (memcmp(ours, theirs, 16) != 0)
            CHECK_INT(len, -1);   /* names the first length that differs */
    }
}

RUN_TESTS()
