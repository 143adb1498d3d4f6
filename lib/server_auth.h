// SPDX-License-Identifier: Apache-2.0
/* What a receiver's server may require of its clients: a bearer token or
 * HTTP basic credentials, the options for them, and the check. */
#ifndef PROFD_LIB_SERVER_AUTH_H
#define PROFD_LIB_SERVER_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "profd/plugin.h"

struct server_auth {
    char *bearer_token;
    struct {
        char *username, *password;
    } basic_auth;
};

static const struct profd_option server_basic_auth_options[] = {
    {"username", PROFD_OPT_STRING, 0, NULL, "the user name clients must send"},
    {"password", PROFD_OPT_STRING, sizeof(char *), NULL, "its password"},
    {0},
};

/* The options of struct server_auth, at offset `at` of a config. */
#define SERVER_AUTH_OPTIONS(at)                                                                 \
    {"bearer_token", PROFD_OPT_STRING, (at) + offsetof(struct server_auth, bearer_token), NULL, \
     "when set, requests must carry \"Authorization: Bearer <token>\""},                        \
    {"basic_auth", PROFD_OPT_OBJECT, (at) + offsetof(struct server_auth, basic_auth), NULL,     \
     "when username is set, requests must carry these HTTP basic credentials",                 \
     server_basic_auth_options}

/* True when req carries what a requires (anything when it requires
 * nothing). Header names are looked up in lowercase, as both HTTP versions
 * allow. */
bool server_authorized(const struct server_auth *a, const struct profd_rpc_request *req);

#endif
