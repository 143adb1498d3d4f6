// SPDX-License-Identifier: Apache-2.0
/*
 * The Authorization header a client sends, from its client_auth: a bearer
 * token, authorization of a type, or basic auth, each secret given or
 * read from its file again whenever the file changes; or an OAuth 2.0
 * token, which the caller has fetched (see oauth2_token.h) the way its
 * thread allows.
 */
#ifndef PROFD_LIB_CLIENT_CREDENTIALS_H
#define PROFD_LIB_CLIENT_CREDENTIALS_H

#include <stdint.h>

#include "client_auth.h"
#include "client_tls.h"
#include "oauth2_token.h"

struct client_credentials;

/* The credentials a says (a outliving them); an oauth2 token's requests
 * go with tls and a's proxy_url and time out after timeout ns (0:
 * never). */
struct client_credentials *client_credentials_new(const struct client_auth *a,
                                                  const struct client_tls *tls, int64_t timeout);

/* The token source of a's oauth2, or NULL when a has none. */
struct oauth2_token *client_credentials_oauth2(const struct client_credentials *c);

/* The "Authorization: ..." line to send now (valid until the next call),
 * or NULL when there is none: an oauth2 token's as it stands (the caller
 * fetches one when due), else the secrets', their files read again when
 * they changed since the last call. A file that cannot be read gives an
 * empty secret, which a server refuses: *unreadable then names it (else
 * NULL), for the caller to say with what the server answered. Calls must
 * not overlap. */
const char *client_credentials_line(struct client_credentials *c, const char **unreadable);

/* Frees c; accepts NULL. */
void client_credentials_free(struct client_credentials *c);

#endif
