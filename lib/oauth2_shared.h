// SPDX-License-Identifier: Apache-2.0
/*
 * An OAuth 2.0 token (oauth2_token.h) shared across threads, as the
 * discoveries' oauth2 options give one (kubernetes_sd_configs' lists and
 * watches, http_sd_configs' requests): fetched on a component's aside
 * thread, the header it makes read on the event loop's. Fetching blocks
 * for at most the client's timeout; reading never waits for a fetch.
 * Thread-safe.
 */
#ifndef PROFD_LIB_OAUTH2_SHARED_H
#define PROFD_LIB_OAUTH2_SHARED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client_auth.h"
#include "client_tls.h"

struct oauth2_shared;

/* The token source of a's oauth2 (a and tls outliving it), its fetches
 * going with tls and a's proxy, each taking at most timeout ns. */
struct oauth2_shared *oauth2_shared_new(const struct client_auth *a, const struct client_tls *tls,
                                  int64_t timeout);

/* Frees o and its token (accepts NULL). */
void oauth2_shared_free(struct oauth2_shared *o);

/* Whether a token is kept that is not yet due to be fetched again. */
bool oauth2_shared_fresh(struct oauth2_shared *o);

/* Fetches a token unless a fresh one is kept (another thread may have
 * just fetched it); 0, or -1 with why saying what the token URL did. */
int oauth2_shared_refresh(struct oauth2_shared *o, char *why, size_t whylen);

/* A copy of the "Authorization: Bearer <token>" line of the token kept
 * (malloc'd), or NULL when none was fetched yet. */
char *oauth2_shared_line(struct oauth2_shared *o);

#endif
