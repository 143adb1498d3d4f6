// SPDX-License-Identifier: Apache-2.0
/*
 * An OAuth 2.0 token (oauth2_token.h) a Kubernetes client's lists and
 * watches share across threads, as kubernetes_sd_configs' oauth2 option
 * gives one: fetched on a component's aside thread (k8s_api_authorize),
 * the header it makes read on the event loop's. Fetching blocks for at
 * most the client's timeout; reading never waits for a fetch.
 * Thread-safe.
 */
#ifndef PROFD_LIB_K8S_OAUTH2_H
#define PROFD_LIB_K8S_OAUTH2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client_auth.h"
#include "client_tls.h"

struct k8s_oauth2;

/* The token source of a's oauth2 (a and tls outliving it), its fetches
 * going with tls and a's proxy, each taking at most timeout ns. */
struct k8s_oauth2 *k8s_oauth2_new(const struct client_auth *a, const struct client_tls *tls,
                                  int64_t timeout);

/* Frees o and its token (accepts NULL). */
void k8s_oauth2_free(struct k8s_oauth2 *o);

/* Whether a token is kept that is not yet due to be fetched again. */
bool k8s_oauth2_fresh(struct k8s_oauth2 *o);

/* Fetches a token unless a fresh one is kept (another thread may have
 * just fetched it); 0, or -1 with why saying what the token URL did. */
int k8s_oauth2_refresh(struct k8s_oauth2 *o, char *why, size_t whylen);

/* A copy of the "Authorization: Bearer <token>" line of the token kept
 * (malloc'd), or NULL when none was fetched yet. */
char *k8s_oauth2_line(struct k8s_oauth2 *o);

#endif
