// SPDX-License-Identifier: Apache-2.0
#include "oauth2_shared.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "grow.h"
#include "oauth2_token.h"

struct oauth2_shared {
    pthread_mutex_t fetch;     /* one fetch at a time; token touched under it alone */
    pthread_mutex_t mu;        /* line and refresh_at, held only to read or set them */
    struct oauth2_token *token;
    char *line;                /* the last token's header line, or NULL */
    int64_t refresh_at;        /* monotonic ns when line is due again */
};

struct oauth2_shared *oauth2_shared_new(const struct client_auth *a, const struct client_tls *tls,
                                  int64_t timeout)
{
    struct oauth2_shared *o = must_malloc(sizeof(*o));
    *o = (struct oauth2_shared){0};
    pthread_mutex_init(&o->fetch, NULL);
    pthread_mutex_init(&o->mu, NULL);
    o->token = oauth2_token_new(a, tls, timeout);
    return o;
}

void oauth2_shared_free(struct oauth2_shared *o)
{
    if (!o)
        return;
    oauth2_token_free(o->token);
    free(o->line);
    pthread_mutex_destroy(&o->fetch);
    pthread_mutex_destroy(&o->mu);
    free(o);
}

bool oauth2_shared_fresh(struct oauth2_shared *o)
{
    pthread_mutex_lock(&o->mu);
    bool fresh = o->line && monotonic_ns() < o->refresh_at;
    pthread_mutex_unlock(&o->mu);
    return fresh;
}

int oauth2_shared_refresh(struct oauth2_shared *o, char *why, size_t whylen)
{
    pthread_mutex_lock(&o->fetch);   /* the line stays readable meanwhile */
    const char *line = oauth2_token_header(o->token, why, whylen);
    char *copy = must_strdup_or_null(line);
    int64_t refresh_at = oauth2_token_refresh_at(o->token);
    pthread_mutex_unlock(&o->fetch);
    if (!copy)
        return -1;
    pthread_mutex_lock(&o->mu);
    free(o->line);
    o->line = copy;
    o->refresh_at = refresh_at;
    pthread_mutex_unlock(&o->mu);
    return 0;
}

char *oauth2_shared_line(struct oauth2_shared *o)
{
    pthread_mutex_lock(&o->mu);
    char *copy = must_strdup_or_null(o->line);
    pthread_mutex_unlock(&o->mu);
    return copy;
}
