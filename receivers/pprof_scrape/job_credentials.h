// SPDX-License-Identifier: Apache-2.0
/*
 * receiver pprof_scrape: a job's credentials. The Authorization line each
 * of its scrapes sends (lib/client_credentials.h), and for oauth2 the
 * token, fetched on the daemon's loop without blocking it: the scrapes
 * that fall due while none is fresh wait for the fetch, then go, or fail
 * saying why the token endpoint gave none.
 */
#ifndef PPROF_SCRAPE_JOB_CREDENTIALS_H
#define PPROF_SCRAPE_JOB_CREDENTIALS_H

#include <curl/curl.h>
#include <stdbool.h>

#include "../../lib/http_client.h"
#include "config.h"

struct job_credentials;

/* Called for each waiter once the token fetch it waited for ended: why is
 * NULL when a token came, else what went wrong. */
typedef void (*token_ready_fn)(void *waiter, const char *why);

/* j's credentials (j outliving them); token fetches run on http, whose
 * done callback must be job_credentials_fetched, and end in ready. */
struct job_credentials *job_credentials_new(const struct job *j, struct http_client *http,
                                            token_ready_fn ready);

/* Whether waiter must wait before it sends: true when j has oauth2 and no
 * token fresh enough; a fetch is then under way, and ready is called for
 * waiter when it ends (already, when it could not start). */
bool job_credentials_wait(struct job_credentials *jc, void *waiter);

/* Takes waiter off the waiting list, if it is on it: ready will not be
 * called for it. */
void job_credentials_unwait(struct job_credentials *jc, void *waiter);

/* The "Authorization: ..." line to send now, or NULL for none; see
 * client_credentials_line. */
const char *job_credentials_line(struct job_credentials *jc, const char **unreadable);

/* The done callback of the http client the token fetches run on. */
void job_credentials_fetched(void *arg, CURL *easy, CURLcode rc);

/* Frees jc, a token fetch under way stopped; accepts NULL. Its waiters
 * are not called. */
void job_credentials_free(struct job_credentials *jc);

#endif
