// SPDX-License-Identifier: Apache-2.0
#include "client_auth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "option_set.h"

bool client_authorization_set(const struct client_auth *a)
{
    return option_set(a->authorization.credentials) ||
           option_set(a->authorization.credentials_file);
}

/* How many ways a gives credentials. */
static int ways(const struct client_auth *a)
{
    return (option_set(a->bearer_token) || option_set(a->bearer_token_file)) +
           client_authorization_set(a) + option_set(a->basic_auth.username) +
           oauth2_set(&a->oauth2);
}

bool client_auth_credentials_set(const struct client_auth *a)
{
    return ways(a) > 0;
}

/* Where credentials set more than one way are said to be: at the last of
 * them in the order the options are written. */
static const void *second_way(const struct client_auth *a)
{
    return oauth2_set(&a->oauth2)               ? (const void *)&a->oauth2
           : option_set(a->basic_auth.username) ? (const void *)&a->basic_auth
                                                : (const void *)&a->authorization;
}

/* The option of a given in the config that holds a line break, which
 * would end the header it goes in, and its name; NULL when none does
 * (files' secrets end at their first line). */
static const void *broken_line(const struct client_auth *a, const char **name)
{
    const struct {
        char *const *value;
        const char *name;
    } given[] = {
        {&a->bearer_token, "bearer_token"},
        {&a->authorization.type, "authorization's type"},
        {&a->authorization.credentials, "authorization's credentials"},
        {&a->basic_auth.username, "basic_auth's username"},
        {&a->basic_auth.password, "basic_auth's password"},
    };
    for (size_t i = 0; i < sizeof(given) / sizeof(given[0]); i++)
        if (*given[i].value && strpbrk(*given[i].value, "\r\n")) {
            *name = given[i].name;
            return given[i].value;
        }
    return NULL;
}

int client_auth_validate(const struct profd_host *host, struct profd_diag *d,
                         const struct client_auth *a, const char *what)
{
    const char *name;
    const void *broken = broken_line(a, &name);
    if (broken) {
        host->diag(d, broken, "%s%s holds a line break, which no header can carry", what, name);
        return PROFD_ERR;
    }
    const void *where = NULL;
    const char *why = NULL;
    const struct client_oauth2 *o = &a->oauth2;
    const struct client_authorization *z = &a->authorization;
    if (ways(a) > 1) {
        where = second_way(a);
        why = "at most one of bearer_token (or bearer_token_file), authorization, basic_auth "
              "and oauth2 may be set";
    } else if (option_set(z->credentials) && option_set(z->credentials_file)) {
        where = &z->credentials_file;
        why = "authorization's credentials and credentials_file cannot both be set";
    } else if (z->type && !strcasecmp(z->type, "basic")) {
        where = &z->type;
        why = "authorization type cannot be Basic: use basic_auth";
    } else if (oauth2_set(o) && (!option_set(o->client_id) || !option_set(o->token_url))) {
        where = o;
        why = "oauth2 needs client_id and token_url";
    } else if (option_set(o->client_secret) && option_set(o->client_secret_file)) {
        where = &o->client_secret_file;
        why = "oauth2's client_secret and client_secret_file cannot both be set";
    } else if (option_set(a->bearer_token) && option_set(a->bearer_token_file)) {
        where = &a->bearer_token_file;
        why = "bearer_token and bearer_token_file cannot both be set";
    } else if (option_set(a->basic_auth.password) && option_set(a->basic_auth.password_file)) {
        where = &a->basic_auth.password_file;
        why = "basic_auth's password and password_file cannot both be set";
    } else if ((option_set(a->basic_auth.password) || option_set(a->basic_auth.password_file)) &&
               !option_set(a->basic_auth.username)) {
        where = &a->basic_auth;
        why = "basic_auth needs a username";
    }
    if (why) {
        host->diag(d, where, "%s%s", what, why);
        return PROFD_ERR;
    }
    char oauth2_what[200];
    snprintf(oauth2_what, sizeof(oauth2_what), "%soauth2: ", what);
    if (o->tls_config.server_name) {
        host->diag(d, &o->tls_config.server_name, "%stls_config.server_name is not taken: the "
                   "token URL's host is the name asked for", oauth2_what);
        return PROFD_ERR;
    }
    if (client_proxy_validate(host, d, &a->proxy, what) != PROFD_OK ||
        client_proxy_validate(host, d, &o->proxy, oauth2_what) != PROFD_OK)
        return PROFD_ERR;
    return client_tls_validate(host, d, &o->tls_config, oauth2_what);
}
