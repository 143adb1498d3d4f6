// SPDX-License-Identifier: Apache-2.0
/* The 64-bit key map: puts, gets, and removals that keep every other key
 * findable, runs that wrap around the table's end included. */
#include "check.h"

#include "../../lib/hash.h"
#include "../../lib/key_map.c"

TEST(put_get_replace)
{
    struct key_map m = {0};
    uint32_t v = 0;
    CHECK(!key_map_get(&m, 7, &v));
    CHECK(!key_map_remove(&m, 7));   /* an empty map */
    for (uint64_t k = 0; k < 1000; k++)
        key_map_put(&m, k * 0x9e3779b97f4a7c15ull, (uint32_t)k);
    CHECK_INT(m.n, 1000);
    key_map_put(&m, 5 * 0x9e3779b97f4a7c15ull, 55);   /* replaced, not added */
    CHECK_INT(m.n, 1000);
    CHECK(key_map_get(&m, 5 * 0x9e3779b97f4a7c15ull, &v));
    CHECK_INT(v, 55);
    CHECK(key_map_get(&m, 999 * 0x9e3779b97f4a7c15ull, &v));
    CHECK_INT(v, 999);
    key_map_free(&m);
}

/* Keys whose home slot (in a table of cap slots) is home. */
static size_t keys_at_home(size_t cap, size_t home, uint64_t *out, size_t want)
{
    size_t n = 0;
    for (uint64_t k = 1; n < want; k++)
        if (((size_t)hash_mix(0, k) & (cap - 1)) == home)
            out[n++] = k;
    return n;
}

TEST(removal_moves_its_run_back)
{
    /* A table of 64 slots: a run of keys at home in the last slot wraps
     * to the first ones, a key at home in slot 0 after them; removing
     * any one leaves every other one found, whatever the order. */
    for (size_t gone = 0; gone < 5; gone++) {
        struct key_map m = {0};
        uint64_t keys[5];
        keys_at_home(64, 63, keys, 3);
        keys_at_home(64, 0, keys + 3, 2);
        for (size_t i = 0; i < 5; i++)
            key_map_put(&m, keys[i], (uint32_t)i);
        CHECK_INT(m.cap, 64);
        CHECK(key_map_remove(&m, keys[gone]));
        CHECK(!key_map_remove(&m, keys[gone]));
        CHECK_INT(m.n, 4);
        for (size_t i = 0; i < 5; i++) {
            uint32_t v = 0;
            CHECK(key_map_get(&m, keys[i], &v) == (i != gone));
            if (i != gone)
                CHECK_INT(v, i);
        }
        key_map_free(&m);
    }
}

TEST(removals_and_puts_at_random)
{
    /* against a plain array of which keys are in */
    enum { KEYS = 300 };
    static bool in[KEYS];
    struct key_map m = {0};
    uint64_t x = 1;
    for (int step = 0; step < 20000; step++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        size_t k = (size_t)(x >> 33) % KEYS;
        if (in[k]) {
            CHECK(key_map_remove(&m, k));
        } else {
            key_map_put(&m, k, (uint32_t)k);
        }
        in[k] = !in[k];
    }
    size_t n = 0;
    for (size_t k = 0; k < KEYS; k++) {
        uint32_t v = 0;
        bool got = key_map_get(&m, k, &v);
        CHECK(got == in[k]);
        if (got)
            CHECK_INT(v, k);
        n += in[k];
    }
    CHECK_INT(m.n, n);
    key_map_free(&m);
}

RUN_TESTS()
