// SPDX-License-Identifier: Apache-2.0
#include "oauth2_token.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_auth.h"
#include "clock.h"
#include "file_io.h"
#include "grow.h"
#include "json_pull.h"

#define EXPIRY_DELTA_NS (10 * 1000000000LL)   /* fetched anew this long before expiry */
#define MAX_ANSWER (1 << 20)

struct answer {
    char *p;
    size_t len, cap;
};

struct oauth2_token {
    const struct client_oauth2 *o;
    CURL *curl;
    struct curl_slist *proxy_headers;   /* proxy_connect_header's, which curl points at */
    char *header;          /* "Authorization: Bearer <token>", or NULL */
    int64_t refresh_at;    /* monotonic ns when to fetch again; INT64_MAX: never */
    /* the fetch under way: the request's escaped id, secret and body,
     * which the handle points at, and the answer so far */
    char *id, *secret, *body;
    struct answer answer;
};

bool oauth2_set(const struct client_oauth2 *o)
{
    return o->client_id || o->client_secret || o->client_secret_file || o->token_url ||
           o->scopes.n || o->endpoint_params.n;
}

/* Whether s can go in a header line: visible ASCII only (RFC 6750's
 * token characters are a subset), so no line can be smuggled in. */
static bool header_safe(const char *s)
{
    for (; *s; s++)
        if (*s < 0x21 || *s > 0x7e)
            return false;
    return true;
}

/* A lifetime in whole seconds, 0 (none) unless it is positive and sane. */
static int64_t lifetime(double seconds)
{
    return seconds > 0 && seconds < 1e9 ? (int64_t)seconds : 0;
}

int oauth2_token_parse(const char *body, size_t len, char **token, int64_t *expires_in,
                       char *why, size_t whylen)
{
    struct json_pull j;
    json_pull_init(&j, body, len);
    const char *key, *s;
    size_t slen;
    double seconds;
    *token = NULL;
    *expires_in = 0;
    if (json_pull_object(&j))
        while (json_pull_member(&j, &key)) {
            /* the name first: reading a value may reuse the buffer key is in */
            bool is_token = !strcmp(key, "access_token"), is_expiry = !strcmp(key, "expires_in");
            bool text = json_pull_kind(&j) == JSON_PULL_STRING;
            if (is_token && text) {
                if (json_pull_string(&j, &s, &slen)) {
                    free(*token);
                    *token = slen ? must_strdup(s) : NULL;
                }
            } else if (is_expiry && text) {   /* as some servers write it: "3600" */
                if (json_pull_string(&j, &s, &slen))
                    *expires_in = lifetime(strtod(s, NULL));
            } else if (is_expiry) {
                if (json_pull_number(&j, &seconds))
                    *expires_in = lifetime(seconds);
            } else {
                json_pull_skip(&j);
            }
        }
    bool whole = !json_pull_failed(&j) && json_pull_end(&j);
    if (!whole || !*token || !header_safe(*token)) {
        if (!whole)
            json_pull_error(&j, why, whylen);
        else if (!*token)
            snprintf(why, whylen, "the answer has no access_token");
        else
            snprintf(why, whylen, "the access_token holds a byte no header can carry");
        free(*token);
        *token = NULL;
        json_pull_free(&j);
        return -1;
    }
    json_pull_free(&j);
    return 0;
}

struct oauth2_token *oauth2_token_new(const struct client_auth *a, const struct client_tls *tls,
                                      int64_t timeout)
{
    struct oauth2_token *t = must_malloc(sizeof(*t));
    *t = (struct oauth2_token){.o = &a->oauth2, .curl = curl_easy_init()};
    if (!t->curl)
        abort();
    const struct client_oauth2 *o = &a->oauth2;
    client_tls_apply(t->curl, client_tls_given(&o->tls_config) ? &o->tls_config : tls);
    t->proxy_headers =
        client_proxy_apply(client_proxy_given(&o->proxy) ? &o->proxy : &a->proxy, t->curl);
    curl_easy_setopt(t->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(t->curl, CURLOPT_USERAGENT, "profd/" PROFD_VERSION);
    curl_easy_setopt(t->curl, CURLOPT_TIMEOUT_MS, (long)(timeout / 1000000));
    return t;
}

/* Appends "name=value" to the form body b, form-encoded, '&' between. */
static void form_add(CURL *c, char **b, const char *name, const char *value)
{
    char *n = curl_easy_escape(c, name, 0), *v = curl_easy_escape(c, value, 0);
    char *more = must_asprintf("%s%s%s=%s", *b, **b ? "&" : "", n, v);
    curl_free(n);
    curl_free(v);
    free(*b);
    *b = more;
}

/* The token request's body: the grant, the scopes (space-separated) and
 * the extra parameters. */
static char *request_body(CURL *c, const struct client_oauth2 *o)
{
    char *b = must_strdup("");
    form_add(c, &b, "grant_type", "client_credentials");
    char *scopes = must_strdup("");
    for (size_t i = 0; i < o->scopes.n; i++) {
        char *more = must_asprintf("%s%s%s", scopes, i ? " " : "", o->scopes.items[i]);
        free(scopes);
        scopes = more;
    }
    if (*scopes)
        form_add(c, &b, "scope", scopes);
    free(scopes);
    for (size_t i = 0; i < o->endpoint_params.n; i++)
        form_add(c, &b, o->endpoint_params.keys[i], o->endpoint_params.values[i]);
    return b;
}

static size_t on_answer(char *data, size_t size, size_t n, void *arg)
{
    struct answer *a = arg;
    if (a->len + size * n > MAX_ANSWER)
        return 0;
    a->p = grow_array(a->p, &a->cap, a->len + size * n + 1, 1);
    memcpy(a->p + a->len, data, size * n);
    a->len += size * n;
    a->p[a->len] = '\0';
    return size * n;
}

/* Frees what the fetch under way kept, leaving the handle pointing at
 * none of it. */
static void fetch_clear(struct oauth2_token *t)
{
    curl_easy_setopt(t->curl, CURLOPT_POSTFIELDS, NULL);
    curl_free(t->id);
    curl_free(t->secret);
    free(t->body);
    free(t->answer.p);
    t->id = t->secret = t->body = NULL;
    t->answer = (struct answer){0};
}

bool oauth2_token_due(const struct oauth2_token *t)
{
    return !t->header || monotonic_ns() >= t->refresh_at;
}

int64_t oauth2_token_refresh_at(const struct oauth2_token *t)
{
    return t->header ? t->refresh_at : 0;
}

CURL *oauth2_token_fetch_start(struct oauth2_token *t, char *why, size_t whylen)
{
    const struct client_oauth2 *o = t->o;
    CURL *c = t->curl;
    fetch_clear(t);
    char *secret = o->client_secret_file ? read_secret(o->client_secret_file)
                                         : must_strdup(o->client_secret ? o->client_secret : "");
    if (!secret) {
        snprintf(why, whylen, "client_secret_file %s could not be read", o->client_secret_file);
        return NULL;
    }
    /* RFC 6749 2.3.1: the id and secret form-encoded, then as basic auth */
    t->id = curl_easy_escape(c, o->client_id ? o->client_id : "", 0);
    t->secret = curl_easy_escape(c, secret, 0);
    t->body = request_body(c, o);
    free(secret);
    curl_easy_setopt(c, CURLOPT_URL, o->token_url);
    curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(c, CURLOPT_USERNAME, t->id);
    curl_easy_setopt(c, CURLOPT_PASSWORD, t->secret);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, t->body);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_answer);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &t->answer);
    return c;
}

bool oauth2_token_fetch_finish(struct oauth2_token *t, CURLcode rc, char *why, size_t whylen)
{
    const struct client_oauth2 *o = t->o;
    long status = 0;
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
    const struct answer *a = &t->answer;
    char *token = NULL;
    int64_t expires_in = 0;
    char parse_why[128];
    bool ok = false;
    char failure[160];
    if (rc != CURLE_OK)
        snprintf(why, whylen, "token from %s: %s", o->token_url,
                 client_proxy_failure(t->curl, rc, failure, sizeof(failure)));
    else if (status != 200)
        snprintf(why, whylen, "token from %s: HTTP status %ld: %.160s", o->token_url, status,
                 a->p ? a->p : "");
    else if (oauth2_token_parse(a->p ? a->p : "", a->len, &token, &expires_in, parse_why,
                                sizeof(parse_why)) < 0)
        snprintf(why, whylen, "token from %s: %s", o->token_url, parse_why);
    else
        ok = true;
    fetch_clear(t);
    if (ok) {
        free(t->header);
        t->header = must_asprintf("Authorization: Bearer %s", token);
        t->refresh_at = expires_in ? monotonic_ns() + expires_in * 1000000000LL - EXPIRY_DELTA_NS
                                   : INT64_MAX;
    }
    free(token);
    return ok;
}

const char *oauth2_token_current(const struct oauth2_token *t)
{
    return t->header;
}

const char *oauth2_token_header(struct oauth2_token *t, char *why, size_t whylen)
{
    if (!oauth2_token_due(t))
        return t->header;
    CURL *c = oauth2_token_fetch_start(t, why, whylen);
    return c && oauth2_token_fetch_finish(t, curl_easy_perform(c), why, whylen) ? t->header
                                                                                 : NULL;
}

void oauth2_token_free(struct oauth2_token *t)
{
    if (!t)
        return;
    fetch_clear(t);
    curl_easy_cleanup(t->curl);
    curl_slist_free_all(t->proxy_headers);
    free(t->header);
    free(t);
}
