// SPDX-License-Identifier: Apache-2.0
/* The pyroscope receiver's reading of /ingest's query parameters. Compiled
 * in from the module sources. */
#include "check.h"

#include "../../receivers/pyroscope/ingest_query.c"

#define NOW (1577836800LL * NANOS)   /* 2020-01-01T00:00:00Z */

/* ingest_time of "from=<value>" (value already query-escaped). */
static int64_t from(const char *value)
{
    char query[128];
    snprintf(query, sizeof(query), "name=app&from=%s", value);
    int64_t t = -1;
    CHECK(ingest_time(query, "from", NOW, &t));
    return t;
}

TEST(times_by_their_digits)
{
    CHECK(from("1577836800") == NOW);
    CHECK(from("1577836800001") == NOW + 1000000);
    CHECK(from("1577836800000001") == NOW + 1000);
    CHECK(from("1577836800000000001") == NOW + 1);
    CHECK(from("20200101") == NOW);                       /* a date */
    CHECK(from("20200230") == 20200230LL * NANOS);        /* not a date: seconds */
    CHECK(from("1_577_836_800") == NOW);                  /* '_' ignored */
    CHECK(from("42") == 42 * NANOS);
    int64_t t;
    CHECK(!ingest_time("from=99999999999999999999", "from", NOW, &t));   /* past 64 bits */
}

TEST(times_relative_to_now)
{
    CHECK(from("now") == NOW);
    CHECK(from("now-1s") == NOW - NANOS);
    CHECK(from("now%2B1s") == NOW + NANOS);               /* an escaped '+' */
    CHECK(from("now+1s") == NOW);                         /* '+' is a space: "now 1s" */
    CHECK(from("now-1min") == NOW - 60 * NANOS);
    CHECK(from("now-1m") == NOW - 60 * NANOS);
    CHECK(from("now-1h") == NOW - 3600 * NANOS);
    CHECK(from("now-1d") == NOW - 86400 * NANOS);
    CHECK(from("now-1w") == NOW - 7 * 86400 * NANOS);
    CHECK(from("now-1mon") == NOW - 30 * 86400 * NANOS);
    CHECK(from("now-1M") == NOW - 30 * 86400 * NANOS);
    CHECK(from("now-1y") == NOW - 365 * 86400 * NANOS);
    CHECK(from("now-1h30m") == NOW - 5400 * NANOS);
    CHECK(from("now-1") == NOW);                          /* no unit: nothing */
    CHECK(from("yesterday") == NOW);
    CHECK(from("") == NOW);
    int64_t t;
    CHECK(ingest_time("name=app", "from", NOW, &t) && t == NOW);
    CHECK(!ingest_time("from=now-9999999999999y", "from", NOW, &t));
}

TEST(sample_rate_and_units_fall_back_as_pyroscope_does)
{
    CHECK_INT(ingest_cpu_period("sampleRate=97"), 1000000000 / 97);
    CHECK_INT(ingest_cpu_period("sampleRate=0"), 10000000);   /* 100 Hz */
    CHECK_INT(ingest_cpu_period("sampleRate=-1"), 10000000);
    CHECK_INT(ingest_cpu_period("sampleRate=abc"), 10000000);
    CHECK_INT(ingest_cpu_period("sampleRate="), 10000000);
    CHECK_INT(ingest_cpu_period("name=x"), 10000000);
    char u[32];
    ingest_units("units=lock_samples", u, sizeof(u));
    CHECK_STR(u, "lock_samples");
    ingest_units("units=SAMPLES", u, sizeof(u));
    CHECK_STR(u, "samples");
    ingest_units("units=bytes%20", u, sizeof(u));
    CHECK_STR(u, "samples");
    ingest_units("name=x", u, sizeof(u));
    CHECK_STR(u, "samples");
}

TEST(absent_parameters_take_their_defaults)
{
    int64_t t = -1;
    /* a time read first leaves its digits where the next call's buffer is */
    CHECK(ingest_time("name=app&from=1700000000", "from", NOW, &t));
    CHECK_INT(t, 1700000000LL * NANOS);
    CHECK(ingest_time("name=app", "from", NOW, &t));
    CHECK_INT(t, NOW);
    CHECK_INT(ingest_cpu_period("sampleRate=250"), NANOS / 250);
    CHECK_INT(ingest_cpu_period("name=app"), NANOS / 100);
}

TEST(query_parameters_are_percent_decoded)
{
    char v[16];
    CHECK_INT(ingest_query_param("a=1&name=app.cpu%7Bk%3Dv%7D&b=2", "name", v, sizeof(v)), 12);
    CHECK_STR(v, "app.cpu{k=v}");
    CHECK_INT(ingest_query_param("xname=1&name=a+b", "name", v, sizeof(v)), 3);
    CHECK_STR(v, "a b");
    CHECK_INT(ingest_query_param("names=1", "name", v, sizeof(v)), -1);
    CHECK_INT(ingest_query_param("name=&b=1", "name", v, sizeof(v)), 0);
    CHECK_STR(v, "");
    /* cut to fit, its whole length told */
    CHECK_INT(ingest_query_param("name=0123456789%61bcdefXYZ&c", "name", v, sizeof(v)), 19);
    CHECK_STR(v, "0123456789abcde");
    CHECK_INT(ingest_query_param("name=0123456789abcdef", "name", v, sizeof(v)), 16);
    CHECK_STR(v, "0123456789abcde");
    CHECK_INT(ingest_query_param("name=0123456789abcde", "name", v, sizeof(v)), 15);   /* fits */
}

RUN_TESTS()
