// SPDX-License-Identifier: Apache-2.0
/* A scrape job's credentials (receivers/pprof_scrape/job_credentials.c):
 * who waits for an oauth2 token, and how each waiter hears of the fetch's
 * end, on a real libevent loop. Compiled in from the module sources. */
#include "check.h"

#include <event2/event.h>

#include "../../lib/client_auth.c"
#include "../../lib/client_proxy.c"
#include "../../lib/http_headers.c"
#include "../../lib/client_credentials.c"
#include "../../lib/client_tls.c"
#include "../../lib/grow.c"
#include "../../lib/http_client.c"
#include "../../lib/oauth2_token.c"
#include "../../receivers/pprof_scrape/job_credentials.c"

/* What the waiters heard: each one's why ("" for a token), in order. */
static char heard[4][256];
static int nheard, who[4];

static void ready(void *waiter, const char *why)
{
    who[nheard] = *(int *)waiter;
    snprintf(heard[nheard++], sizeof(heard[0]), "%s", why ? why : "");
}

static struct job job_with(struct client_auth auth)
{
    return (struct job){.job_name = "j", .auth = auth, .scrape_timeout = 2000000000LL};
}

TEST(without_oauth2_nobody_waits)
{
    struct job j = job_with((struct client_auth){.bearer_token = "t"});
    struct job_credentials *jc = job_credentials_new(&j, NULL, ready);
    int a = 1;
    nheard = 0;
    CHECK(!job_credentials_wait(jc, &a));
    CHECK_INT(nheard, 0);
    const char *unreadable;
    CHECK_STR(job_credentials_line(jc, &unreadable), "Authorization: Bearer t");
    job_credentials_free(jc);
}

TEST(a_fetch_that_cannot_start_fails_its_waiter_at_once)
{
    struct job j = job_with((struct client_auth){
        .oauth2 = {.client_id = "id", .client_secret_file = "/nonexistent/secret",
                   .token_url = "http://127.0.0.1:1/token"}});
    struct job_credentials *jc = job_credentials_new(&j, NULL, ready);
    int a = 1;
    nheard = 0;
    CHECK(job_credentials_wait(jc, &a));
    CHECK_INT(nheard, 1);
    CHECK_INT(who[0], 1);
    CHECK_STR(heard[0], "client_secret_file /nonexistent/secret could not be read");
    job_credentials_free(jc);
}

/* Stops the loop once two waiters heard. */
static void on_tick(evutil_socket_t fd, short what, void *base)
{
    (void)fd;
    (void)what;
    if (nheard >= 2)
        event_base_loopbreak(base);
}

TEST(every_waiter_hears_the_one_fetch_end_but_one_taken_off)
{
    struct event_base *base = event_base_new();
    struct http_client *http = http_client_create(base, job_credentials_fetched);
    /* a port nothing listens on: the fetch fails, saying so */
    struct job j = job_with((struct client_auth){
        .oauth2 = {.client_id = "id", .client_secret = "s", .token_url = "http://127.0.0.1:1/t"}});
    struct job_credentials *jc = job_credentials_new(&j, http, ready);
    int a = 1, b = 2, c = 3;
    nheard = 0;
    CHECK(job_credentials_wait(jc, &a));
    CHECK(job_credentials_wait(jc, &b));
    CHECK(job_credentials_wait(jc, &c));
    job_credentials_unwait(jc, &b);
    CHECK_INT(nheard, 0);   /* the fetch is under way */
    struct event *tick = event_new(base, -1, EV_PERSIST, on_tick, base);
    event_add(tick, &(struct timeval){0, 10000});
    event_base_dispatch(base);
    CHECK_INT(nheard, 2);
    CHECK_INT(who[0] + who[1], 4);   /* a and c, not b */
    CHECK(strstr(heard[0], "token from http://127.0.0.1:1/t: "));
    CHECK_STR(heard[0], heard[1]);
    event_free(tick);
    job_credentials_free(jc);
    http_client_destroy(http);
    event_base_free(base);
}

RUN_TESTS()
