// SPDX-License-Identifier: Apache-2.0
#include "job_credentials.h"

#include <stdio.h>
#include <stdlib.h>

#include "../../lib/client_credentials.h"
#include "../../lib/grow.h"

struct job_credentials {
    struct client_credentials *c;
    struct http_client *http;
    token_ready_fn ready;
    CURL *fetching;      /* the token fetch under way on http, or NULL */
    void **waiting;      /* the waiters for it */
    size_t nwaiting, cap;
};

struct job_credentials *job_credentials_new(const struct job *j, struct http_client *http,
                                            token_ready_fn ready)
{
    struct job_credentials *jc = must_malloc(sizeof(*jc));
    *jc = (struct job_credentials){
        .c = client_credentials_new(&j->auth, &j->tls_config, j->scrape_timeout),
        .http = http,
        .ready = ready,
    };
    return jc;
}

/* Calls ready for every waiter, the list emptied first: a waiter's
 * callback may wait again. */
static void release(struct job_credentials *jc, const char *why)
{
    void **waiting = jc->waiting;
    size_t n = jc->nwaiting;
    jc->waiting = NULL;
    jc->nwaiting = jc->cap = 0;
    for (size_t i = 0; i < n; i++)
        jc->ready(waiting[i], why);
    free(waiting);
}

bool job_credentials_wait(struct job_credentials *jc, void *waiter)
{
    struct oauth2_token *t = client_credentials_oauth2(jc->c);
    if (!t || !oauth2_token_due(t))
        return false;
    jc->waiting = grow_array(jc->waiting, &jc->cap, jc->nwaiting + 1, sizeof(*jc->waiting));
    jc->waiting[jc->nwaiting++] = waiter;
    if (jc->fetching)
        return true;
    char why[256];
    CURL *easy = oauth2_token_fetch_start(t, why, sizeof(why));
    if (!easy) {
        release(jc, why);
        return true;
    }
    curl_easy_setopt(easy, CURLOPT_PRIVATE, jc);
    jc->fetching = easy;   /* before: a fetch failing at once ends inside */
    if (http_client_add(jc->http, easy) != 0) {
        jc->fetching = NULL;
        release(jc, "the token fetch could not start");
    }
    return true;
}

void job_credentials_unwait(struct job_credentials *jc, void *waiter)
{
    for (size_t i = 0; i < jc->nwaiting; i++)
        if (jc->waiting[i] == waiter) {
            jc->waiting[i] = jc->waiting[--jc->nwaiting];
            return;
        }
}

const char *job_credentials_line(struct job_credentials *jc, const char **unreadable)
{
    return client_credentials_line(jc->c, unreadable);
}

void job_credentials_fetched(void *arg, CURL *easy, CURLcode rc)
{
    (void)easy;
    struct job_credentials *jc = arg;
    char why[256];
    jc->fetching = NULL;
    bool ok = oauth2_token_fetch_finish(client_credentials_oauth2(jc->c), rc, why, sizeof(why));
    release(jc, ok ? NULL : why);
}

void job_credentials_free(struct job_credentials *jc)
{
    if (!jc)
        return;
    if (jc->fetching)
        http_client_cancel(jc->http, jc->fetching);
    client_credentials_free(jc->c);
    free(jc->waiting);
    free(jc);
}
