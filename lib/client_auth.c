// SPDX-License-Identifier: Apache-2.0
#include "client_auth.h"

#include "proxy_url.h"

static bool set(const char *s)
{
    return s && *s;
}

int client_auth_validate(const struct profd_host *host, struct profd_diag *d,
                         const struct client_auth *a, const char *what)
{
    const void *where = NULL;
    const char *why = NULL;
    const struct client_oauth2 *o = &a->oauth2;
    int ways = (set(a->bearer_token) || set(a->bearer_token_file)) +
               set(a->basic_auth.username) + oauth2_set(o);
    if (ways > 1) {
        where = oauth2_set(o) ? (const void *)o : (const void *)&a->basic_auth;
        why = "at most one of bearer_token (or bearer_token_file), basic_auth and oauth2 may be "
              "set";
    } else if (oauth2_set(o) && (!set(o->client_id) || !set(o->token_url))) {
        where = o;
        why = "oauth2 needs client_id and token_url";
    } else if (set(o->client_secret) && set(o->client_secret_file)) {
        where = &o->client_secret_file;
        why = "oauth2's client_secret and client_secret_file cannot both be set";
    } else if (set(a->bearer_token) && set(a->bearer_token_file)) {
        where = &a->bearer_token_file;
        why = "bearer_token and bearer_token_file cannot both be set";
    } else if (set(a->basic_auth.password) && set(a->basic_auth.password_file)) {
        where = &a->basic_auth.password_file;
        why = "basic_auth's password and password_file cannot both be set";
    } else if ((set(a->basic_auth.password) || set(a->basic_auth.password_file)) &&
               !set(a->basic_auth.username)) {
        where = &a->basic_auth;
        why = "basic_auth needs a username";
    }
    if (why) {
        host->diag(d, where, "%s%s", what, why);
        return PROFD_ERR;
    }
    if (!proxy_url_valid(a->proxy_url)) {
        host->diag(d, &a->proxy_url, "%sproxy_url '%s' is not http://, https:// or socks5://",
                   what, a->proxy_url);
        return PROFD_ERR;
    }
    return PROFD_OK;
}

void client_auth_to_rpc(const struct client_auth *a, struct rpc_client_options *o)
{
    o->bearer_token = a->bearer_token;
    o->bearer_token_file = a->bearer_token_file;
    o->username = a->basic_auth.username;
    o->password = a->basic_auth.password;
    o->password_file = a->basic_auth.password_file;
    o->oauth2 = oauth2_set(&a->oauth2) ? &a->oauth2 : NULL;
    o->proxy_url = a->proxy_url;
}
