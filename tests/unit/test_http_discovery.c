// SPDX-License-Identifier: Apache-2.0
/* An http_sd_config's discovery (receivers/pprof_scrape/http_discovery.c):
 * which answers' Content-Type it takes, and the refresh interval it tells
 * the endpoint, as Prometheus writes both. Compiled in from the module
 * sources. */
#include "check.h"

#include "../../lib/client_auth.c"
#include "../../lib/client_proxy.c"
#include "../../lib/http_headers.c"
#include "../../lib/client_credentials.c"
#include "../../lib/client_tls.c"
#include "../../lib/file_io.c"
#include "../../lib/grow.c"
#include "../../lib/http_client.c"
#include "../../lib/key_map.c"
#include "../../lib/oauth2_shared.c"
#include "../../lib/oauth2_token.c"
#include "../../receivers/pprof_scrape/http_discovery.c"
#include "../../receivers/pprof_scrape/targets.c"

TEST(json_with_at_most_a_utf8_charset_is_the_only_type_taken)
{
    static const char *const taken[] = {
        "application/json", "Application/JSON", "application/json;charset=utf-8",
        "application/json; charset=UTF-8", "application/json;\tcharset=\"utf-8\"",
    };
    static const char *const refused[] = {
        "text/plain", "application/jsonp", "application/json; charset=latin1",
        "application/json;", "application/json charset=utf-8", "", "application/x-json",
    };
    for (size_t i = 0; i < sizeof(taken) / sizeof(*taken); i++)
        CHECK(http_sd_content_type_ok(taken[i]));
    for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++)
        CHECK(!http_sd_content_type_ok(refused[i]));
    CHECK(!http_sd_content_type_ok(NULL));
}

TEST(the_refresh_interval_is_told_in_seconds_without_trailing_zeros)
{
    char h[80];
    refresh_header(60000000000LL, h, sizeof(h));
    CHECK_STR(h, "X-Prometheus-Refresh-Interval-Seconds: 60");
    refresh_header(250000000LL, h, sizeof(h));
    CHECK_STR(h, "X-Prometheus-Refresh-Interval-Seconds: 0.25");
    refresh_header(90500000000LL, h, sizeof(h));
    CHECK_STR(h, "X-Prometheus-Refresh-Interval-Seconds: 90.5");
    refresh_header(1000001LL, h, sizeof(h));
    CHECK_STR(h, "X-Prometheus-Refresh-Interval-Seconds: 0.001000001");
    refresh_header(10000000000LL, h, sizeof(h));
    CHECK_STR(h, "X-Prometheus-Refresh-Interval-Seconds: 10");
}

RUN_TESTS()
