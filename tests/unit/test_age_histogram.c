// SPDX-License-Identifier: Apache-2.0
/* Retention's count of files by age. Compiled in from the module source. */
#include "check.h"

#include "../../exporters/pprof_file/age_histogram.c"

TEST(every_age_is_in_a_bucket_whose_floor_it_reaches)
{
    uint64_t ages[] = {1, 2, 3, 255, 256, 257, 511, 512, 1000, 1000000007, 86400000000000ull,
                       UINT64_MAX};
    unsigned last = 0;
    for (size_t i = 0; i < sizeof(ages) / sizeof(ages[0]); i++) {
        unsigned b = bucket_of(ages[i]);
        CHECK(b < AGE_BUCKETS);
        CHECK(b >= last);   /* older, never a lower bucket */
        last = b;
        CHECK(bucket_floor(b) <= ages[i] && ages[i] <= bucket_last(b));
        if (bucket_last(b) < UINT64_MAX)
            CHECK(bucket_of(bucket_last(b) + 1) > b);
        if (bucket_floor(b) > 1)
            CHECK(bucket_of(bucket_floor(b) - 1) < b);
    }
    /* 256 buckets to a doubling: a week told from a week and 0.4% more */
    uint64_t week = 7 * 86400000000000ull;
    CHECK(bucket_of(week) != bucket_of(week + week / 250));
}

TEST(the_cutoff_takes_whole_buckets_of_the_oldest_until_the_limits_hold)
{
    struct age_histogram *h = calloc(1, sizeof(*h));
    const uint64_t second = 1000000000;
    for (uint64_t s = 1; s <= 1000; s++)   /* a file a second, 100 bytes each */
        age_histogram_add(h, s * second, 100);
    /* Keep 100 files: those 900 s old and more go whole, but for the
     * bucket where the count comes to 100. */
    const struct retention_limits files_100 = {.max_files = 100}, bytes_10k = {.max_bytes = 10000},
                                  both = {.max_files = 500, .max_bytes = 10000},
                                  files_1000 = {.max_files = 1000};
    uint64_t from = age_histogram_cutoff(h, 1000, 100000, &files_100);
    CHECK(from > 100 * second && from <= 101 * second + second);
    uint64_t older = 0;
    for (uint64_t s = 1; s <= 1000; s++)
        older += s * second >= from;
    CHECK(older >= 890 && older <= 900);
    /* Bytes decide alike; the stricter of the two wins. */
    CHECK_INT(age_histogram_cutoff(h, 1000, 100000, &bytes_10k), from);
    CHECK(age_histogram_cutoff(h, 1000, 100000, &both) == from);
    /* Within the limits already: no whole bucket goes. */
    CHECK(age_histogram_cutoff(h, 1000, 100000, &files_1000) == UINT64_MAX ||
          age_histogram_cutoff(h, 1000, 100000, &files_1000) > 1000 * second);
    free(h);
}

RUN_TESTS()
