// SPDX-License-Identifier: Apache-2.0
/* Outbound TLS settings (lib/client_tls.c): a server_name's route (the
 * URL renamed, the connection still to its own host and port), and which
 * versions and names are accepted. */
#include "check.h"

#include "../../config/diag.h"
#include "../../core/graph.h"
#include "../../lib/client_tls.c"
#include "../../lib/grow.c"

static const struct profd_host *host = &profd_host_services;

/* Checks the route of url for name against the renamed URL, connect-to
 * entry and Host header wanted (all NULL: as it is). */
static void check_route(const char *name, const char *url, const char *want_url,
                        const char *want_to, const char *want_host)
{
    struct client_tls_route r;
    client_tls_route(name, url, &r);
    if (!want_url) {
        CHECK(!r.url && !r.connect_to && !r.host_header);
        return;
    }
    CHECK_STR(r.url, want_url);
    CHECK(r.connect_to && !r.connect_to->next);
    CHECK_STR(r.connect_to ? r.connect_to->data : "", want_to);
    CHECK_STR(r.host_header, want_host);
    client_tls_route_free(&r);
    CHECK(!r.url && !r.connect_to && !r.host_header);
}

TEST(a_server_name_renames_https_urls_and_connects_where_they_point)
{
    check_route("a.example", "https://10.0.0.1:8443/debug/pprof/heap?seconds=5",
                "https://a.example:8443/debug/pprof/heap?seconds=5",
                "a.example:8443:10.0.0.1:8443", "Host: 10.0.0.1:8443");
    check_route("a.example", "https://10.0.0.1", "https://a.example",   /* the scheme's port */
                "a.example:443:10.0.0.1:443", "Host: 10.0.0.1");
    check_route("a.example", "https://u:p@[::1]:4317/x", "https://u:p@a.example:4317/x",
                "a.example:4317:[::1]:4317", "Host: [::1]:4317");
    check_route("a.example", "https://h.internal:9090#top", "https://a.example:9090#top",
                "a.example:9090:h.internal:9090", "Host: h.internal:9090");
}

TEST(no_server_name_or_no_tls_goes_as_it_is)
{
    check_route(NULL, "https://10.0.0.1:8443/", NULL, NULL, NULL);
    check_route("", "https://10.0.0.1:8443/", NULL, NULL, NULL);
    check_route("a.example", "http://10.0.0.1:8080/", NULL, NULL, NULL);
    check_route("a.example", "not a url", NULL, NULL, NULL);
}

/* Whether client_tls_validate takes t; a refusal says one thing. */
static bool valid(struct client_tls t)
{
    struct profd_diag d = {0};
    int rc = client_tls_validate(host, &d, &t, "");
    CHECK_INT(d.n, rc == PROFD_OK ? 0 : 1);
    profd_diag_free(&d);
    return rc == PROFD_OK;
}

TEST(versions_and_names_are_checked)
{
    CHECK(valid((struct client_tls){0}));
    CHECK(valid((struct client_tls){.min_version = "TLS10", .max_version = "TLS13"}));
    CHECK(valid((struct client_tls){.min_version = "TLS13", .max_version = "TLS13"}));
    CHECK(valid((struct client_tls){.max_version = "TLS12"}));   /* above TLS12's default */
    CHECK(!valid((struct client_tls){.max_version = "TLS11"}));   /* below it */
    CHECK(!valid((struct client_tls){.min_version = "TLS14"}));
    CHECK(!valid((struct client_tls){.min_version = "tls12"}));
    CHECK(!valid((struct client_tls){.min_version = "TLS13", .max_version = "TLS12"}));
    CHECK(valid((struct client_tls){.server_name = "pprof.example"}));
    CHECK(!valid((struct client_tls){.server_name = ""}));
    CHECK(!valid((struct client_tls){.server_name = "pprof.example:443"}));
    CHECK(!valid((struct client_tls){.server_name = "https://pprof.example"}));
}

RUN_TESTS()
