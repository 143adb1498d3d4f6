// SPDX-License-Identifier: Apache-2.0
/* OAuth 2.0 token endpoints' answers (lib/oauth2_token.c): the token and
 * its lifetime, as servers write them, and answers that hold none. */
#include "check.h"

#include "../../lib/client_auth.c"
#include "../../lib/client_proxy.c"
#include "../../lib/http_headers.c"
#include "../../lib/client_tls.c"
#include "../../lib/grow.c"
#include "../../lib/oauth2_token.c"

/* Parses body; its token ("" for none) and lifetime in *expires_in. */
static const char *parsed(const char *body, int64_t *expires_in, char *why, size_t whylen)
{
    static char kept[256];
    char *token;
    int rc = oauth2_token_parse(body, strlen(body), &token, expires_in, why, whylen);
    CHECK((rc == 0) == (token != NULL));
    snprintf(kept, sizeof(kept), "%s", token ? token : "");
    free(token);
    return kept;
}

TEST(tokens_and_lifetimes_as_servers_write_them)
{
    int64_t ttl;
    char why[128];
    CHECK_STR(parsed("{\"access_token\":\"t1\",\"token_type\":\"Bearer\",\"expires_in\":3600}",
                     &ttl, why, sizeof(why)), "t1");
    CHECK_INT(ttl, 3600);
    /* Azure AD's form: the lifetime as a string; members in any order */
    CHECK_STR(parsed("{\"expires_in\":\"599\",\"ext\":{\"a\":[1,2]},\"access_token\":\"t2\"}", &ttl,
                     why, sizeof(why)), "t2");
    CHECK_INT(ttl, 599);
    CHECK_STR(parsed("{\"access_token\":\"t3\"}", &ttl, why, sizeof(why)), "t3");
    CHECK_INT(ttl, 0);   /* none given: kept until it fails */
    CHECK_STR(parsed("{\"access_token\":\"t4\",\"expires_in\":-5}", &ttl, why, sizeof(why)), "t4");
    CHECK_INT(ttl, 0);
    /* a lifetime that is an object whose names outgrow the name buffer */
    char body[512];
    snprintf(body, sizeof(body), "{\"expires_in\":{\"%0200d\":1},\"access_token\":\"t5\"}", 0);
    CHECK_STR(parsed(body, &ttl, why, sizeof(why)), "t5");
    CHECK_INT(ttl, 0);
}

TEST(answers_without_a_token_say_why)
{
    int64_t ttl;
    char why[128];
    CHECK_STR(parsed("{\"error\":\"invalid_client\"}", &ttl, why, sizeof(why)), "");
    CHECK_STR(why, "the answer has no access_token");
    CHECK_STR(parsed("{\"access_token\":\"\"}", &ttl, why, sizeof(why)), "");
    CHECK_STR(parsed("{\"access_token\":7}", &ttl, why, sizeof(why)), "");
    CHECK_STR(parsed("<html>", &ttl, why, sizeof(why)), "");
    CHECK(strstr(why, "line 1, column 1") != NULL);
    CHECK_STR(parsed("{\"access_token\":\"t\",", &ttl, why, sizeof(why)), "");
    CHECK_STR(parsed("{\"access_token\":\"t\"} trailing", &ttl, why, sizeof(why)), "");
    CHECK_STR(parsed("{\"access_token\":\"t\\r\\nX-Injected: 1\"}", &ttl, why, sizeof(why)),
              "");
    CHECK_STR(why, "the access_token holds a byte no header can carry");
}

TEST(set_means_any_field_given)
{
    struct client_oauth2 o = {0};
    CHECK(!oauth2_set(&o));
    o.token_url = "http://x";
    CHECK(oauth2_set(&o));
}

RUN_TESTS()
