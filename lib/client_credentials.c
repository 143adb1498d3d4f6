// SPDX-License-Identifier: Apache-2.0
#include "client_credentials.h"

#include <stdlib.h>
#include <string.h>

#include "../core/base64.h"
#include "file_io.h"
#include "grow.h"
#include "option_set.h"

struct client_credentials {
    const struct client_auth *a;
    struct oauth2_token *oauth2;   /* or NULL */
    char *line;                    /* from the secrets when last read, or NULL */
    const char *unreadable;        /* the secret file last read that could not be, or NULL */
    int64_t stamp;                 /* the secret files' mtimes when last read */
    bool read;                     /* they were read once */
};

struct client_credentials *client_credentials_new(const struct client_auth *a,
                                                  const struct client_tls *tls, int64_t timeout)
{
    struct client_credentials *c = must_malloc(sizeof(*c));
    *c = (struct client_credentials){.a = a};
    if (oauth2_set(&a->oauth2))
        c->oauth2 = oauth2_token_new(a, tls, timeout);
    return c;
}

struct oauth2_token *client_credentials_oauth2(const struct client_credentials *c)
{
    return c->oauth2;
}

/* The secret given as value or, when file is set, read from it; an
 * unreadable file gives "" and is named in c->unreadable. malloc'd. */
static char *secret(struct client_credentials *c, const char *value, const char *file)
{
    if (!option_set(file))
        return must_strdup(value ? value : "");
    char *s = read_secret(file);
    if (!s)
        c->unreadable = file;
    return s ? s : must_strdup("");
}

/* "Authorization: Basic <base64 of user:password>", as RFC 7617 says. */
static char *basic_line(const char *user, const char *password)
{
    char *pair = must_asprintf("%s:%s", user, password);
    size_t n = strlen(pair);
    char *line = must_malloc(sizeof("Authorization: Basic ") + profd_base64_length(n));
    size_t head = strlen(strcpy(line, "Authorization: Basic "));
    line[head + profd_base64_encode(line + head, (const uint8_t *)pair, n)] = '\0';
    free(pair);
    return line;
}

/* The line a's secrets make now, or NULL when a sends none. */
static char *secrets_line(struct client_credentials *c)
{
    const struct client_auth *a = c->a;
    const struct client_authorization *z = &a->authorization;
    char *s = NULL, *line = NULL;
    if (option_set(a->bearer_token) || option_set(a->bearer_token_file)) {
        s = secret(c, a->bearer_token, a->bearer_token_file);
        line = must_asprintf("Authorization: Bearer %s", s);
    } else if (client_authorization_set(a)) {
        s = secret(c, z->credentials, z->credentials_file);
        line = must_asprintf("Authorization: %s %s", option_set(z->type) ? z->type : "Bearer", s);
    } else if (option_set(a->basic_auth.username)) {
        s = secret(c, a->basic_auth.password, a->basic_auth.password_file);
        line = basic_line(a->basic_auth.username, s);
    }
    free(s);
    return line;
}

const char *client_credentials_line(struct client_credentials *c, const char **unreadable)
{
    *unreadable = NULL;
    if (c->oauth2)
        return oauth2_token_current(c->oauth2);
    const struct client_auth *a = c->a;
    int64_t stamp = file_mtime_ns(a->bearer_token_file) ^
                    file_mtime_ns(a->authorization.credentials_file) ^
                    file_mtime_ns(a->basic_auth.password_file);
    if (!c->read || stamp != c->stamp) {
        c->read = true;
        c->stamp = stamp;
        c->unreadable = NULL;
        free(c->line);
        c->line = secrets_line(c);
    }
    *unreadable = c->unreadable;
    return c->line;
}

void client_credentials_free(struct client_credentials *c)
{
    if (!c)
        return;
    oauth2_token_free(c->oauth2);
    free(c->line);
    free(c);
}
