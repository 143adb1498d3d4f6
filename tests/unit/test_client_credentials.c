// SPDX-License-Identifier: Apache-2.0
/* A client's Authorization line (lib/client_credentials.c) from each way
 * of giving credentials, files read again when they change; and the rules
 * lib/client_auth.c checks a configuration against. */
#include "check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../config/diag.h"
#include "../../core/graph.h"
#include "../../lib/client_auth.c"
#include "../../lib/client_proxy.c"
#include "../../lib/http_headers.c"
#include "../../lib/client_credentials.c"
#include "../../lib/client_tls.c"
#include "../../lib/grow.c"
#include "../../lib/oauth2_token.c"

static const struct profd_host *host = &profd_host_services;

/* The line a makes now, and the unreadable file it names ("" for none). */
static void check_line(const struct client_auth *a, const char *want, const char *want_unreadable)
{
    struct client_credentials *c = client_credentials_new(a, NULL, 0);
    const char *unreadable;
    const char *line = client_credentials_line(c, &unreadable);
    if (want)
        CHECK_STR(line ? line : "(none)", want);
    else
        CHECK(!line);
    CHECK_STR(unreadable ? unreadable : "", want_unreadable);
    client_credentials_free(c);
}

/* Writes s to path with the given mtime (s), as a rotated secret lands. */
static void write_secret(const char *path, const char *s, time_t mtime)
{
    FILE *f = fopen(path, "w");
    CHECK(f);
    if (!f)
        return;
    fputs(s, f);
    fclose(f);
    struct timespec times[2] = {{mtime, 0}, {mtime, 0}};
    CHECK_INT(utimensat(AT_FDCWD, path, times, 0), 0);
}

TEST(each_way_of_credentials_makes_its_line)
{
    check_line(&(struct client_auth){0}, NULL, "");
    check_line(&(struct client_auth){.bearer_token = "t0k"}, "Authorization: Bearer t0k", "");
    check_line(&(struct client_auth){.authorization = {.credentials = "k1"}},
               "Authorization: Bearer k1", "");
    check_line(&(struct client_auth){.authorization = {.type = "ApiKey", .credentials = "k1"}},
               "Authorization: ApiKey k1", "");
    check_line(&(struct client_auth){.authorization = {.type = "ApiKey"}}, NULL, "");
    /* RFC 7617's example: Aladdin, open sesame */
    check_line(&(struct client_auth){.basic_auth = {"Aladdin", "open sesame", NULL}},
               "Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==", "");
    check_line(&(struct client_auth){.basic_auth = {"ops", NULL, NULL}},
               "Authorization: Basic b3BzOg==", "");   /* "ops:" */
}

TEST(secret_files_are_read_again_when_they_change)
{
    char dir[] = "/tmp/profd-test-credentials-XXXXXX";
    CHECK(mkdtemp(dir));
    char *path = must_asprintf("%s/token", dir);
    write_secret(path, "first\n", 1000);
    struct client_auth a = {.bearer_token_file = path};
    struct client_credentials *c = client_credentials_new(&a, NULL, 0);
    const char *unreadable;
    CHECK_STR(client_credentials_line(c, &unreadable), "Authorization: Bearer first");
    write_secret(path, "second\n", 2000);
    CHECK_STR(client_credentials_line(c, &unreadable), "Authorization: Bearer second");
    CHECK(!unreadable);
    unlink(path);   /* gone: an empty secret, the file named */
    CHECK_STR(client_credentials_line(c, &unreadable), "Authorization: Bearer ");
    CHECK_STR(unreadable ? unreadable : "", path);
    CHECK_STR(client_credentials_line(c, &unreadable), "Authorization: Bearer ");
    CHECK_STR(unreadable ? unreadable : "", path);   /* said on every call while it lasts */
    client_credentials_free(c);
    struct client_auth basic = {.basic_auth = {"ops", "ignored", path}};
    check_line(&basic, "Authorization: Basic b3BzOg==", path);
    write_secret(path, "pw", 3000);
    check_line(&basic, "Authorization: Basic b3BzOnB3", "");   /* "ops:pw" */
    unlink(path);
    rmdir(dir);
    free(path);
}

TEST(oauth2_sends_the_token_the_caller_fetched)
{
    struct client_auth a = {.oauth2 = {.client_id = "id", .token_url = "http://127.0.0.1:1/t"}};
    struct client_credentials *c = client_credentials_new(&a, NULL, 0);
    const char *unreadable;
    CHECK(client_credentials_oauth2(c));
    CHECK(oauth2_token_due(client_credentials_oauth2(c)));
    CHECK(!client_credentials_line(c, &unreadable));   /* none fetched yet */
    client_credentials_free(c);
    c = client_credentials_new(&(struct client_auth){.bearer_token = "t"}, NULL, 0);
    CHECK(!client_credentials_oauth2(c));
    client_credentials_free(c);
}

/* What client_auth_validate says of a, "" when it takes it. */
static void check_valid(struct client_auth a, const char *want)
{
    struct profd_diag d = {0};
    int rc = client_auth_validate(host, &d, &a, "");
    CHECK_INT(rc, *want ? PROFD_ERR : PROFD_OK);
    CHECK_INT(d.n, *want ? 1 : 0);
    if (d.n)
        CHECK(strstr(d.msgs[0], want));
    profd_diag_free(&d);
}

TEST(credentials_are_given_one_way_once)
{
    const char *one_way = "at most one of bearer_token (or bearer_token_file), authorization, "
                          "basic_auth and oauth2 may be set";
    struct client_oauth2 oauth2 = {.client_id = "id", .token_url = "http://t/"};
    check_valid((struct client_auth){0}, "");
    check_valid((struct client_auth){.bearer_token = "t", .basic_auth = {"u", NULL, NULL}},
                one_way);
    check_valid((struct client_auth){.bearer_token_file = "f", .oauth2 = oauth2}, one_way);
    check_valid((struct client_auth){.authorization = {.credentials = "c"},
                                     .basic_auth = {"u", NULL, NULL}},
                one_way);
    /* a type alone sends nothing, so it is no second way */
    check_valid((struct client_auth){.authorization = {.type = "Bearer"}, .oauth2 = oauth2}, "");
    check_valid((struct client_auth){.authorization = {.credentials = "c", .credentials_file = "f"}},
                "authorization's credentials and credentials_file cannot both be set");
    check_valid((struct client_auth){.authorization = {.type = "basic", .credentials = "c"}},
                "authorization type cannot be Basic: use basic_auth");
    check_valid((struct client_auth){.bearer_token = "t", .bearer_token_file = "f"},
                "bearer_token and bearer_token_file cannot both be set");
    check_valid((struct client_auth){.basic_auth = {NULL, "pw", NULL}},
                "basic_auth needs a username");
    check_valid((struct client_auth){.oauth2 = {.client_id = "id"}},
                "oauth2 needs client_id and token_url");
    check_valid((struct client_auth){.proxy.proxy_url = "ftp://p"}, "proxy_url 'ftp://p' is not");
    check_valid((struct client_auth){.proxy.proxy_url = "http://p:3128"}, "");
    check_valid((struct client_auth){.bearer_token = "t\r\nX-Other: 1"},
                "bearer_token holds a line break, which no header can carry");
    check_valid((struct client_auth){.basic_auth = {"u", "p\n", NULL}},
                "basic_auth's password holds a line break");
    check_valid((struct client_auth){.proxy.no_proxy = "10.0.0.0/8"}, "no_proxy needs proxy_url");
    check_valid((struct client_auth){.proxy = {"http://p:3128", "10.0.0.0/8"}}, "");
    /* proxy_url wins: proxy_from_environment is on by default for some */
    check_valid((struct client_auth){.proxy = {.proxy_url = "http://p:3128",
                                               .proxy_from_environment = true}},
                "");
    /* the oauth2 block's own proxy and TLS, said as its */
    check_valid((struct client_auth){.oauth2 = {.client_id = "id", .token_url = "http://t",
                                                .proxy.no_proxy = "10.0.0.0/8"}},
                "oauth2: no_proxy needs proxy_url");
    check_valid((struct client_auth){.oauth2 = {.client_id = "id", .token_url = "http://t",
                                                .tls_config.min_version = "TLS9"}},
                "oauth2: ");
    check_valid((struct client_auth){.oauth2 = {.client_id = "id", .token_url = "http://t",
                                                .tls_config.server_name = "t.example"}},
                "oauth2: tls_config.server_name is not taken");
}

RUN_TESTS()
