// SPDX-License-Identifier: Apache-2.0
/* The byte hash: the same bytes the same hash wherever they lie, any byte
 * of a word or of the last 1 to 7 bytes changing it, the length told apart
 * from trailing zeros, and its low bits spread for table indexes. */
#include "check.h"

#include <stdbool.h>

#include "../../lib/hash.h"

TEST(same_bytes_same_hash_wherever_they_lie)
{
    char a[40], b[48];
    for (size_t i = 0; i < sizeof(a); i++)
        a[i] = (char)(i * 37 + 11);
    for (size_t len = 0; len <= sizeof(a); len++) {
        memcpy(b + 3, a, len);   /* unaligned */
        CHECK(hash_bytes(a, len) == hash_bytes(b + 3, len));
    }
    CHECK(hash_string("profd") == hash_bytes("profd", 5));
}

TEST(every_byte_counts)
{
    unsigned char s[23];
    for (size_t len = 1; len <= sizeof(s); len++) {   /* whole words and every tail length */
        memset(s, 'x', sizeof(s));
        uint64_t h = hash_bytes(s, len);
        for (size_t i = 0; i < len; i++) {
            s[i] = 'y';
            if (hash_bytes(s, len) == h)
                CHECK_FAIL_("length %zu: byte %zu changed, the hash did not", len, i);
            s[i] = 'x';
        }
    }
}

TEST(length_is_not_trailing_zeros)
{
    static const char zeros[16] = {0};
    for (size_t len = 0; len < sizeof(zeros); len++)
        CHECK(hash_bytes(zeros, len) != hash_bytes(zeros, len + 1));
    CHECK(hash_bytes("a", 1) != hash_bytes("a\0", 2));
}

TEST(low_bits_spread_for_table_indexes)
{
    /* Strings that differ only in their last byte, past a long common
     * prefix, land in different slots of a 1024-slot table. */
    char s[64];
    memset(s, 'k', sizeof(s));
    bool seen[1024] = {false};
    size_t distinct = 0;
    for (int c = 0; c < 256; c++) {
        s[sizeof(s) - 1] = (char)c;
        size_t slot = hash_bytes(s, sizeof(s)) & 1023;
        distinct += !seen[slot];
        seen[slot] = true;
    }
    CHECK(distinct > 200);   /* 256 balls in 1024 bins: about 226 distinct */
}

RUN_TESTS()
