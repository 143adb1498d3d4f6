// SPDX-License-Identifier: Apache-2.0
/*
 * receiver pprof_scrape: pulls the /debug/pprof endpoints of targets on a schedule, the
 * way Prometheus scrapes metrics. Every (target, profile) pair has its own
 * timer, offset within the interval by a hash of its identity so scrapes
 * spread out, and at most one request in flight; the pairs due at one
 * instant of the spread's grid share that instant's wake-up of the loop. Transfers run on libcurl's
 * multi interface inside the daemon's event loop. Cumulative profiles are
 * turned into deltas between scrapes.
 */
#include <event2/event.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../lib/clock.h"
#include "../../lib/grow.h"
#include "../../lib/http_client.h"
#include "../../lib/instant_timers.h"
#include "../../lib/key_map.h"
#include "config.h"
#include "http_discovery.h"
#include "job_credentials.h"
#include "k8s_discovery.h"
#include "presets.h"
#include "targets.h"
#include "validate.h"

struct state;

/* libcurl 7.88 walks a multi handle's whole connection cache whenever a
 * transfer is removed. Targets are spread over several multi handles (a
 * target's profiles on one, so that they reuse its connection), to keep
 * every cache small; see scrape_new. */
#define HTTP_CLIENTS 16

/* Scrapes start on a grid of this many milliseconds (see scrape_new). */
#define SPREAD_SLOT_MS 50

/* One (target, profile) pair and everything it keeps between scrapes. */
struct scrape {
    struct state *s;
    struct scrape_unit u;
    struct instant_timer due;      /* at next_due_ns */
    int64_t next_due_ns;
    CURL *easy;
    struct curl_slist *headers;
    struct curl_slist *proxy_headers;   /* proxy_connect_header's */
    struct client_tls_route route;   /* for tls_config.server_name */
    const char *unreadable;        /* a secret file the last scrape could not read (the
                                    * job's option), or NULL */
    uint8_t *body;
    size_t len, cap;
    bool in_flight;                /* the transfer runs */
    bool awaiting_token;           /* due, it waits for its job's oauth2 token */
    /* Its response is being turned into a record and emitted on the
     * receiver's own thread (run_aside), which alone touches the pair's
     * body, delta and gauges meanwhile; removed meanwhile (retired), the
     * pair is freed once that ends. */
    bool handling, retired;
    int64_t started_ns, prev_ok_ns;
    struct profd_delta_state *delta;
    int up;                        /* -1 before the first scrape */
    char *gauge_labels;
    struct http_client *http;      /* the multi handle of this target */
};

/* A discovery of a job's at work: one of a kubernetes_sd_config's or an
 * http_sd_config's, or neither when it could not start. */
struct discovery {
    struct k8s_discovery *k8s;
    struct http_discovery *http;
};

struct state {
    const struct profd_host *host;
    struct profd_component *self;
    const struct config *cfg;
    struct profile_def **defs;     /* per job */
    size_t *ndefs;
    char **sd_signature;           /* per job */
    struct unit_memo *memo;        /* per job: the units its found groups made */
    struct scrape **scrapes;
    size_t nscrapes;
    struct http_client *http[HTTP_CLIENTS];
    struct http_client *token_http;          /* the jobs' oauth2 token fetches */
    struct job_credentials **credentials;    /* per job, while started */
    struct instant_timers *timers;  /* the pairs' */
    struct event *refresh_ev;
    struct discovery *discoveries;   /* per job, its kubernetes_sd_configs' then its
                                        http_sd_configs', in order */
    size_t *disc_first, *ndisc;      /* per job: where its discoveries are, how many */
    bool started;
};

static const struct job *job_of(const struct state *s, const struct scrape *sc)
{
    return &((const struct job *)s->cfg->scrape_configs.items)[sc->u.job];
}

/* The largest body sc's scrapes take: its job's body_size_limit, within
 * the receiver's max_body_size. */
static uint64_t body_limit(const struct scrape *sc)
{
    uint64_t job = job_of(sc->s, sc)->body_size_limit, all = sc->s->cfg->max_body_size;
    return job && job < all ? job : all;
}

static const struct profile_def *def_of(const struct state *s, const struct scrape *sc)
{
    return &s->defs[sc->u.job][sc->u.def];
}

/* ---- create ---- */

static int create(const struct profd_host *host, struct profd_component *self, const void *cfgp,
                  void **out)
{
    const struct config *cfg = cfgp;
    struct state *s = calloc(1, sizeof(*s));
    if (!s)
        return PROFD_ERR;
    *out = s;
    s->host = host;
    s->self = self;
    s->cfg = cfg;
    size_t njobs = cfg->scrape_configs.n;
    s->defs = calloc(njobs + 1, sizeof(*s->defs));
    s->ndefs = calloc(njobs + 1, sizeof(*s->ndefs));
    s->sd_signature = calloc(njobs + 1, sizeof(*s->sd_signature));
    s->memo = calloc(njobs + 1, sizeof(*s->memo));
    if (!s->defs || !s->ndefs || !s->sd_signature || !s->memo)
        return PROFD_ERR;
    const struct job *jobs = cfg->scrape_configs.items;
    for (size_t i = 0; i < njobs; i++) {
        char err[256];
        s->defs[i] = presets_resolve(&jobs[i], &s->ndefs[i], err, sizeof(err));
        if (!s->defs[i])
            return PROFD_ERR;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    return PROFD_OK;
}

/* ---- health ---- */

static void set_gauges(struct scrape *sc, double duration, double size)
{
    const struct profd_host *h = sc->s->host;
    h->gauge_set(sc->s->self, "profd_scrape_up", "1 when the last scrape of a target succeeded.",
                 sc->gauge_labels, sc->up > 0);
    h->gauge_set(sc->s->self, "profd_scrape_duration_seconds", "How long the last scrape took.",
                 sc->gauge_labels, duration);
    h->gauge_set(sc->s->self, "profd_scrape_size_bytes", "Size of the last profile scraped.",
                 sc->gauge_labels, size);
}

/* Publishes a scrape's outcome: the gauges and counters first, then the
 * log line, so that whoever reads the log finds /metrics saying so. */
static void report(struct scrape *sc, bool ok, const char *why, size_t size)
{
    struct state *s = sc->s;
    double duration = (double)(realtime_ns() - sc->started_ns) / 1e9;
    int was = sc->up;
    sc->up = ok;
    set_gauges(sc, duration, (double)size);
    if (!ok)
        s->host->count(s->self, PROFD_C_REFUSED_RECORDS, 1);
    if (!ok && was != 0)
        s->host->log(s->self, PROFD_LOG_WARN, "scrape of %s failed: %s", sc->u.url, why);
    else if (!ok)
        s->host->log(s->self, PROFD_LOG_DEBUG, "scrape of %s failed again: %s", sc->u.url, why);
    else if (was == 0)
        s->host->log(s->self, PROFD_LOG_INFO, "scrape of %s recovered", sc->u.url);
    else
        s->host->log(s->self, PROFD_LOG_DEBUG, "scraped %s: %zu bytes in %.3f s", sc->u.url, size,
                     duration);
}

/* ---- handling a response ---- */

static bool has_type(const struct profd_profile *p, const char *name)
{
    size_t n = strlen(name);
    const struct profd_str *pt = &p->strings[p->period_type.type];
    if (pt->len == n && !memcmp(pt->ptr, name, n))
        return true;
    for (uint32_t i = 0; i < p->nsample_types; i++) {
        const struct profd_str *t = &p->strings[p->sample_types[i].type];
        if (t->len == n && !memcmp(t->ptr, name, n))
            return true;
    }
    return false;
}

/* Keeps only the listed sample types (and their values) in p. */
static void keep_sample_types(struct profd_profile *p, const struct profd_str_list *keep)
{
    uint32_t out = 0;
    bool kept[p->nsample_types + 1];
    for (uint32_t c = 0; c < p->nsample_types; c++) {
        const struct profd_str *t = &p->strings[p->sample_types[c].type];
        kept[c] = false;
        for (size_t k = 0; k < keep->n && !kept[c]; k++)
            kept[c] = strlen(keep->items[k]) == t->len && !memcmp(keep->items[k], t->ptr, t->len);
        if (kept[c])
            p->sample_types[out++] = p->sample_types[c];
    }
    for (size_t i = 0; i < p->nsamples; i++) {
        uint32_t j = 0;
        for (uint32_t c = 0; c < p->nsample_types; c++)
            if (kept[c])
                p->samples[i].values[j++] = p->samples[i].values[c];
    }
    p->nsample_types = out;
}

/* Renames every sample label whose key is also a series label to
 * exported_<key>, so that no consumer merging sample labels into series
 * labels lets a target overwrite its own job, instance or service_name.
 * Returns whether anything was renamed. */
static bool rename_clashing_labels(const struct profd_host *h, struct profd_profile *p,
                                   const struct profd_labels *series)
{
    uint32_t *renamed = NULL;   /* key index -> new key index, 0 = not looked at yet */
    bool changed = false;
    for (size_t i = 0; i < p->nsamples; i++)
        for (uint32_t k = 0; k < p->samples[i].nlabels; k++) {
            struct profd_sample_label *l = &p->samples[i].labels[k];
            if (!renamed && !(renamed = calloc(p->nstrings, sizeof(*renamed))))
                return changed;
            if (!renamed[l->key]) {
                const struct profd_str *key = &p->strings[l->key];
                char *name = strndup(key->ptr, key->len), *exported = NULL;
                renamed[l->key] = l->key;
                if (name && h->labels_get(series, name) &&
                    asprintf(&exported, "exported_%s", name) >= 0)
                    renamed[l->key] = h->profile_intern(p, exported, strlen(exported));
                free(exported);
                free(name);
            }
            changed |= renamed[l->key] != l->key;
            l->key = renamed[l->key];
        }
    free(renamed);
    return changed;
}

/* Turns the body into a record: decoded, checked, delta'd, labeled. Returns
 * a reason on failure; *emit says whether there is anything to send. */
static const char *build_record(struct scrape *sc, struct profd_record *r, bool *emit,
                                char *err, size_t errlen)
{
    const struct profd_host *h = sc->s->host;
    const struct profile_def *def = def_of(sc->s, sc);
    struct profd_profile *p = h->record_profile(r, err, errlen);
    if (!p)
        return err;
    if (def->expect && !has_type(p, def->expect)) {
        snprintf(err, errlen, "not a %s profile: it has no '%s' sample type", def->name,
                 def->expect);
        return err;
    }
    *emit = true;
    int64_t duration = def->seconds;
    if (def->keep_sample_types.n) {
        keep_sample_types(p, &def->keep_sample_types);
        h->record_touch(r);
    }
    if (def->delta) {
        bool cumulative[p->nsample_types + 1];
        for (uint32_t c = 0; c < p->nsample_types; c++) {
            const struct profd_str *t = &p->strings[p->sample_types[c].type];
            cumulative[c] = !(t->len >= 6 && !memcmp(t->ptr, "inuse_", 6));
        }
        int rc = h->profile_delta(&sc->delta, p, cumulative);
        if (rc == 1) {   /* the first scrape only primes */
            *emit = false;
        } else if (rc == 2) {
            h->log(sc->s->self, PROFD_LOG_INFO, "%s: counters went down (restart?); this "
                   "profile counts from the restart", sc->u.url);
        } else {
            duration = sc->started_ns - sc->prev_ok_ns;
            p->time_nanos = sc->prev_ok_ns;
            p->duration_nanos = duration;
        }
        h->record_touch(r);
    }
    if (!job_of(sc->s, sc)->honor_labels && rename_clashing_labels(h, p, &sc->u.labels))
        h->record_touch(r);
    h->labels_copy(&r->labels, &sc->u.labels);
    r->time_nanos = def->delta && duration ? sc->prev_ok_ns : sc->started_ns;
    r->duration_nanos = duration;
    return NULL;
}

/* A 200 response, on the receiver's own thread: the record is built and
 * emitted there, where waiting for room holds up this receiver alone. */
static void handle_response(void *arg)
{
    struct scrape *sc = arg;
    struct state *s = sc->s;
    char err[512];
    size_t size = sc->len;
    struct profd_batch *b = s->host->batch_new();
    bool gz = sc->len >= 2 && sc->body[0] == 0x1f && sc->body[1] == 0x8b;
    struct profd_record *r = s->host->record_add(b, sc->body, sc->len,
                                                 gz ? PROFD_ENC_PPROF_GZIP : PROFD_ENC_PPROF_RAW);
    r->max_decoded = s->cfg->max_body_size;
    sc->body = NULL;
    sc->len = sc->cap = 0;
    bool emit = false;
    const char *why = build_record(sc, r, &emit, err, sizeof(err));
    if (why) {
        report(sc, false, why, size);
    } else {
        report(sc, true, NULL, size);
        sc->prev_ok_ns = sc->started_ns;
        if (emit && s->host->emit(s->self, b) == PROFD_ERETRY)
            s->host->log(s->self, PROFD_LOG_WARN, "pipeline full: profile from %s dropped",
                         sc->u.url);
    }
    s->host->batch_unref(b);
}

static void scrape_free(struct scrape *sc);

static void response_handled(void *arg)
{
    struct scrape *sc = arg;
    sc->handling = false;
    if (sc->retired)
        scrape_free(sc);
}

static void on_done(void *arg, CURL *easy, CURLcode result)
{
    struct scrape *sc = arg;
    sc->in_flight = false;
    long code = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
    char err[512];
    if (result != CURLE_OK) {
        if (result == CURLE_WRITE_ERROR)
            snprintf(err, sizeof(err), "body larger than %llu bytes (body_size_limit, "
                     "max_body_size)", (unsigned long long)body_limit(sc));
        else
            client_proxy_failure(easy, result, err, sizeof(err));
        report(sc, false, err, sc->len);
        return;
    }
    if (code != 200) {
        /* a secret file that could not be read sent an empty secret */
        snprintf(err, sizeof(err), "HTTP %ld%s%s%s", code, sc->unreadable ? " (" : "",
                 sc->unreadable ? sc->unreadable : "", sc->unreadable ? " could not be read)" : "");
        report(sc, false, err, sc->len);
        return;
    }
    sc->handling = true;
    sc->s->host->run_aside(sc->s->self, handle_response, response_handled, sc);
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
    struct scrape *sc = arg;
    size_t n = size * nmemb;
    if (sc->len + n > body_limit(sc))
        return 0;   /* curl fails the transfer with CURLE_WRITE_ERROR */
    if (sc->len + n > sc->cap) {
        curl_off_t expected = -1;
        curl_easy_getinfo(sc->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &expected);
        size_t cap = sc->cap ? sc->cap * 2
                             : expected > 0 && (uint64_t)expected <= body_limit(sc)
                                   ? (size_t)expected
                                   : 16 * 1024;
        while (cap < sc->len + n)
            cap *= 2;
        uint8_t *nb = realloc(sc->body, cap);
        if (!nb)
            return 0;
        sc->body = nb;
        sc->cap = cap;
    }
    memcpy(sc->body + sc->len, data, n);
    sc->len += n;
    return n;
}

/* ---- scheduling ---- */

/* Sets the request headers anew: the job's Authorization line, its files
 * read again whenever they changed since the last scrape, so rotated
 * credentials are picked up; its http_headers, their files read now; and
 * tls_config.server_name's Host. False, with err set, when a header file
 * gave no value. */
static bool apply_headers(struct scrape *sc, char *err, size_t errlen)
{
    const char *line = job_credentials_line(sc->s->credentials[sc->u.job], &sc->unreadable);
    curl_slist_free_all(sc->headers);
    sc->headers = line ? curl_slist_append(NULL, line) : NULL;
    bool ok = http_headers_append(&job_of(sc->s, sc)->http_headers, &sc->headers, err, errlen);
    if (sc->route.host_header)
        sc->headers = curl_slist_append(sc->headers, sc->route.host_header);
    curl_easy_setopt(sc->easy, CURLOPT_HTTPHEADER, sc->headers);
    return ok;
}

static void configure_easy(struct scrape *sc)
{
    const struct job *j = job_of(sc->s, sc);
    CURL *e = sc->easy = curl_easy_init();
    client_tls_route(j->tls_config.server_name, sc->u.url, &sc->route);
    client_tls_route_apply(e, sc->u.url, &sc->route);
    curl_easy_setopt(e, CURLOPT_PRIVATE, sc);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, sc);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, j->enable_compression ? "" : "identity");
    curl_easy_setopt(e, CURLOPT_USERAGENT, "profd");
    curl_easy_setopt(e, CURLOPT_DNS_CACHE_TIMEOUT, -1L);
    /* through proxy_url, else straight to the target whatever http_proxy
     * and the like say (unless proxy_from_environment), as Prometheus
     * scrapes */
    sc->proxy_headers = client_proxy_apply(&j->auth.proxy, e);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, (long)j->follow_redirects);
    curl_easy_setopt(e, CURLOPT_MAXREDIRS, 10L);   /* Go's http.Client's limit */
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION,
                     j->enable_http2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1);
    int64_t timeout = def_of(sc->s, sc)->seconds + j->scrape_timeout;
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(timeout / 1000000));
    client_tls_apply(e, &j->tls_config);
}

/* Starts sc's transfer, with its job's credentials and headers as they
 * are now; fails the scrape, unsent, when a header file gave no value. */
static void send_request(struct scrape *sc)
{
    char err[512];
    sc->awaiting_token = false;
    if (!apply_headers(sc, err, sizeof(err))) {
        report(sc, false, err, 0);
        return;
    }
    sc->in_flight = true;   /* before: a transfer failing at once is done inside */
    if (http_client_add(sc->http, sc->easy) != 0)
        sc->in_flight = false;
}

/* The oauth2 token sc waited for came (why NULL), or did not. */
static void on_token(void *waiter, const char *why)
{
    struct scrape *sc = waiter;
    if (why) {
        sc->awaiting_token = false;
        report(sc, false, why, 0);
    } else {
        send_request(sc);
    }
}

static void arm(struct scrape *sc)
{
    instant_timer_arm(sc->s->timers, &sc->due, sc->next_due_ns);
}

/* A pair fell due: it is armed for its next scrape, and this one starts
 * unless the last is still under way. */
static void on_due(struct instant_timer *due, void *arg)
{
    (void)arg;
    struct scrape *sc = (struct scrape *)((char *)due - offsetof(struct scrape, due));
    struct state *s = sc->s;
    int64_t interval = job_of(s, sc)->scrape_interval;
    sc->next_due_ns += interval;
    while (sc->next_due_ns < realtime_ns())   /* the loop was busy: skip, don't burst */
        sc->next_due_ns += interval;
    arm(sc);
    if (sc->in_flight || sc->handling || sc->awaiting_token) {
        s->host->log(s->self, PROFD_LOG_DEBUG, "%s: previous scrape still running", sc->u.url);
        return;
    }
    sc->len = 0;
    sc->started_ns = realtime_ns();
    sc->awaiting_token = true;   /* before: a fetch that cannot start ends inside */
    if (!job_credentials_wait(s->credentials[sc->u.job], sc))
        send_request(sc);
}

static struct scrape *scrape_new(struct state *s, struct scrape_unit *u)
{
    struct scrape *sc = calloc(1, sizeof(*sc));
    sc->s = s;
    sc->u = *u;
    memset(u, 0, sizeof(*u));
    sc->up = -1;
    const struct profd_host *h = s->host;
    char *job = escape_label_value(h->labels_get(&sc->u.labels, "job") ?: "");
    char *inst = escape_label_value(h->labels_get(&sc->u.labels, "instance") ?: "");
    if (asprintf(&sc->gauge_labels, "job=\"%s\",instance=\"%s\",profile=\"%s\"", job, inst,
                 def_of(s, sc)->name) < 0)
        sc->gauge_labels = NULL;
    free(job);
    free(inst);
    configure_easy(sc);
    /* Spread: a stable slot within the interval for the target, from its
     * address, and its profiles on the slots after that one, so that they
     * take turns on one connection; slots on a grid of SPREAD_SLOT_MS, so
     * that the pairs of one slot start in one wake-up of the loop. */
    int64_t interval_ms = job_of(s, sc)->scrape_interval / 1000000;
    uint64_t slots = interval_ms > SPREAD_SLOT_MS ? (uint64_t)(interval_ms / SPREAD_SLOT_MS) : 1;
    uint64_t target_slot = h->hash_mod(sc->u.address, slots);
    uint64_t offset_ms = (target_slot + sc->u.def) % slots * SPREAD_SLOT_MS;
    /* The target's multi handle: the one of its part of the interval.
     * libcurl checks every idle connection of a handle once a second while
     * the handle starts transfers (a poll each): a handle whose targets
     * are all due in one part of the interval checks them then, not all
     * the interval long (a fifteenth of the polls at 1,000 targets every
     * 15s). */
    sc->http = s->http[slots >= HTTP_CLIENTS ? target_slot * HTTP_CLIENTS / slots
                                             : h->hash_mod(sc->u.address, HTTP_CLIENTS)];
    const int64_t slot_ns = SPREAD_SLOT_MS * 1000000LL;
    sc->next_due_ns = (realtime_ns() / slot_ns + 1) * slot_ns + (int64_t)offset_ms * 1000000;
    return sc;
}

/* Frees the pair, or, while its response is handled aside, stops its
 * scrapes and leaves the rest to response_handled. */
static void scrape_free(struct scrape *sc)
{
    struct state *s = sc->s;
    if (sc->handling) {
        sc->retired = true;
        instant_timer_disarm(&sc->due);
        return;
    }
    if (sc->in_flight)
        http_client_cancel(sc->http, sc->easy);
    if (sc->awaiting_token)
        job_credentials_unwait(s->credentials[sc->u.job], sc);
    instant_timer_disarm(&sc->due);
    curl_easy_cleanup(sc->easy);
    curl_slist_free_all(sc->headers);
    curl_slist_free_all(sc->proxy_headers);
    client_tls_route_free(&sc->route);
    if (sc->gauge_labels) {
        s->host->gauge_del(s->self, "profd_scrape_up", sc->gauge_labels);
        s->host->gauge_del(s->self, "profd_scrape_duration_seconds", sc->gauge_labels);
        s->host->gauge_del(s->self, "profd_scrape_size_bytes", sc->gauge_labels);
    }
    free(sc->gauge_labels);
    free(sc->body);
    s->host->delta_state_free(sc->delta);
    scrape_unit_clear(s->host, &sc->u);
    free(sc);
}

/* ---- targets ---- */

/* The pair of unit u's key among the current ones, taken out of them;
 * NULL when none has it. by_key maps the hash of each current key to its
 * pair's place. */
static struct scrape *take_existing(struct state *s, const struct key_map *by_key,
                                    const struct scrape_unit *u)
{
    uint32_t at;
    if (!key_map_get(by_key, u->key_hash, &at))
        return NULL;
    /* Another key of the same hash, or a twin of this key taken already:
     * look at every pair. */
    if (!s->scrapes[at] || strcmp(s->scrapes[at]->u.key, u->key))
        for (at = 0; at < s->nscrapes && !(s->scrapes[at] && !strcmp(s->scrapes[at]->u.key, u->key));)
            at++;
    if (at == s->nscrapes)
        return NULL;
    struct scrape *sc = s->scrapes[at];
    s->scrapes[at] = NULL;
    return sc;
}

/* Takes the pairs of the units met unchanged (units[i].pair) out of the
 * current ones. False, with none taken, when one of them is not where its
 * unit says (another unit took it: two groups alike). */
static bool claim_unchanged(struct state *s, const struct scrape_unit *units, size_t n)
{
    size_t i = 0;
    for (; i < n; i++) {
        const struct scrape_unit *u = &units[i];
        if (u->pair && (u->slot >= s->nscrapes || s->scrapes[u->slot] != u->pair))
            break;
        if (u->pair)
            s->scrapes[u->slot] = NULL;
    }
    if (i == n)
        return true;
    while (i-- > 0)   /* given back */
        if (units[i].pair)
            s->scrapes[units[i].slot] = units[i].pair;
    return false;
}

/* What a refresh made of one job. */
struct job_build {
    struct scrape_unit *units;
    size_t n;
    struct unit_memo memo;   /* its found groups' units, their pairs filled as they are made */
    bool failed;             /* its targets could not be read: its pairs stay as they are */
};

/* Builds job j's units into *b, the pairs of those met unchanged taken
 * out of the current ones; when they cannot all be, the job is built
 * again whole. Logs a job whose targets cannot be read. */
static void build_job(struct state *s, size_t j, struct job_build *b)
{
    const struct job *jobs = s->cfg->scrape_configs.items;
    struct found_groups found[s->ndisc ? s->ndisc[j] + 1 : 1];
    size_t nfound = 0;
    for (size_t k = 0; s->ndisc && k < s->ndisc[j]; k++) {
        const struct discovery *d = &s->discoveries[s->disc_first[j] + k];
        if (d->k8s)
            found[nfound++] = k8s_discovery_found(d->k8s);
        else if (d->http)
            found[nfound++] = http_discovery_found(d->http);
    }
    char err[512];
    for (int whole = 0; whole < 2; whole++) {
        b->memo = (struct unit_memo){0};
        if (targets_build(s->host, &jobs[j], j, s->defs[j], s->ndefs[j], found, nfound,
                          whole ? NULL : &s->memo[j], &b->memo, &b->units, &b->n, err,
                          sizeof(err)) < 0) {
            s->host->log(s->self, PROFD_LOG_ERROR, "job '%s': %s; keeping its current targets",
                         jobs[j].job_name, err);
            unit_memo_clear(&b->memo);
            b->failed = true;
            return;
        }
        if (whole || claim_unchanged(s, b->units, b->n))
            return;
        for (size_t i = 0; i < b->n; i++)
            scrape_unit_clear(s->host, &b->units[i]);
        free(b->units);
        unit_memo_clear(&b->memo);
    }
}

/* Appends sc to next (of *n, room for *cap), at its place from now on. */
static size_t place(struct scrape ***next, size_t *n, size_t *cap, struct scrape *sc)
{
    *next = grow_array(*next, cap, *n + 1, sizeof(**next));
    (*next)[*n] = sc;
    return (*n)++;
}

/* The pair each of b's units becomes: its own when it was met unchanged,
 * else the current pair of its key, else a new one; appended to next and
 * remembered in b's memo, which becomes job j's. */
static void make_pairs(struct state *s, size_t j, struct job_build *b,
                       const struct key_map *by_key, struct scrape ***next, size_t *n,
                       size_t *cap)
{
    b->memo.pairs = calloc(b->n + 1, sizeof(*b->memo.pairs));
    b->memo.slots = calloc(b->n + 1, sizeof(*b->memo.slots));
    if (!b->memo.pairs || !b->memo.slots)
        abort();
    for (size_t i = 0; i < b->n; i++) {
        struct scrape_unit *u = &b->units[i];
        struct scrape *sc = u->pair ? u->pair : take_existing(s, by_key, u);
        if (!u->pair && sc) {
            scrape_unit_clear(s->host, u);
        } else if (!sc) {
            sc = scrape_new(s, u);
            if (s->started)
                arm(sc);
        }
        b->memo.pairs[i] = sc;
        b->memo.slots[i] = place(next, n, cap, sc);
    }
    free(b->units);
    unit_memo_clear(&s->memo[j]);
    s->memo[j] = b->memo;
}

/* Rebuilds the scrape list; pairs that stay keep their state (deltas).
 * The pairs of found groups met unchanged are taken as they are; the
 * other units find theirs by key among the pairs left. */
static void refresh(struct state *s)
{
    const struct job *jobs = s->cfg->scrape_configs.items;
    size_t njobs = s->cfg->scrape_configs.n;
    struct job_build *builds = calloc(njobs + 1, sizeof(*builds));
    if (!builds)
        abort();
    for (size_t j = 0; j < njobs; j++) {
        free(s->sd_signature[j]);
        s->sd_signature[j] = targets_sd_signature(&jobs[j]);
        build_job(s, j, &builds[j]);
    }
    struct key_map by_key = {0};
    for (size_t i = 0; i < s->nscrapes; i++)
        if (s->scrapes[i])
            key_map_put(&by_key, s->scrapes[i]->u.key_hash, (uint32_t)i);
    struct scrape **next = NULL;
    size_t n = 0, cap = 0;
    for (size_t j = 0; j < njobs; j++) {
        if (!builds[j].failed) {
            make_pairs(s, j, &builds[j], &by_key, &next, &n, &cap);
            continue;
        }
        unit_memo_clear(&s->memo[j]);   /* its places change: built whole next time */
        for (size_t i = 0; i < s->nscrapes; i++)   /* the job's pairs carried over */
            if (s->scrapes[i] && s->scrapes[i]->u.job == j) {
                place(&next, &n, &cap, s->scrapes[i]);
                s->scrapes[i] = NULL;
            }
    }
    free(builds);
    size_t removed = 0;
    for (size_t i = 0; i < s->nscrapes; i++)
        if (s->scrapes[i]) {
            scrape_free(s->scrapes[i]);
            removed++;
        }
    free(s->scrapes);
    key_map_free(&by_key);
    s->scrapes = next;
    s->host->log(s->self, PROFD_LOG_INFO, "%zu scrape target(s) x profile(s); %zu removed", n,
                 removed);
    s->nscrapes = n;
}

static void on_refresh(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct state *s = arg;
    const struct job *jobs = s->cfg->scrape_configs.items;
    bool changed = false;
    for (size_t j = 0; j < s->cfg->scrape_configs.n && !changed; j++) {
        char *sig = targets_sd_signature(&jobs[j]);
        changed = strcmp(sig, s->sd_signature[j]) != 0;
        free(sig);
    }
    if (changed)
        refresh(s);
}

static void on_discovery_change(void *arg)
{
    refresh(arg);
}

/* Starts job j's kubernetes_sd_configs' discoveries into d (one for
 * each; one that has no API to ask is logged and left out). 0, or -1
 * when the loop cannot take one. */
static int start_k8s(struct state *s, size_t j, struct discovery *d)
{
    const struct job *job = &((const struct job *)s->cfg->scrape_configs.items)[j];
    const struct kubernetes_sd_config *kc = job->kubernetes_sd_configs.items;
    for (size_t k = 0; k < job->kubernetes_sd_configs.n; k++) {
        char why[256];
        d[k].k8s = k8s_discovery_new(s->host, s->self, job->job_name, &kc[k],
                                     on_discovery_change, s, why, sizeof(why));
        if (!d[k].k8s)
            s->host->log(s->self, PROFD_LOG_ERROR, "job '%s': kubernetes_sd_configs: %s; "
                         "no targets from it", job->job_name, why);
        else if (k8s_discovery_start(d[k].k8s) < 0)
            return -1;
    }
    return 0;
}

/* Starts job j's http_sd_configs' discoveries into d, one for each. 0,
 * or -1 when the loop cannot take one. */
static int start_http(struct state *s, size_t j, struct discovery *d)
{
    const struct job *job = &((const struct job *)s->cfg->scrape_configs.items)[j];
    const struct http_sd_config *hc = job->http_sd_configs.items;
    for (size_t k = 0; k < job->http_sd_configs.n; k++) {
        d[k].http = http_discovery_new(s->host, s->self, job->job_name, &hc[k],
                                       on_discovery_change, s);
        if (http_discovery_start(d[k].http) < 0)
            return -1;
    }
    return 0;
}

/* Starts the discoveries of every job. 0, or -1 when the loop cannot
 * take one. */
static int start_discoveries(struct state *s)
{
    const struct job *jobs = s->cfg->scrape_configs.items;
    size_t njobs = s->cfg->scrape_configs.n, total = 0;
    for (size_t j = 0; j < njobs; j++)
        total += jobs[j].kubernetes_sd_configs.n + jobs[j].http_sd_configs.n;
    if (total == 0)
        return 0;
    s->discoveries = calloc(total, sizeof(*s->discoveries));
    s->disc_first = calloc(njobs, sizeof(*s->disc_first));
    s->ndisc = calloc(njobs, sizeof(*s->ndisc));
    if (!s->discoveries || !s->disc_first || !s->ndisc)
        abort();
    for (size_t j = 0, at = 0; j < njobs; j++) {
        s->disc_first[j] = at;
        s->ndisc[j] = jobs[j].kubernetes_sd_configs.n + jobs[j].http_sd_configs.n;
        struct discovery *d = &s->discoveries[at];
        at += s->ndisc[j];
        if (start_k8s(s, j, d) < 0 ||
            start_http(s, j, d + jobs[j].kubernetes_sd_configs.n) < 0)
            return -1;
    }
    return 0;
}

static void stop_discoveries(struct state *s)
{
    size_t njobs = s->cfg->scrape_configs.n;
    for (size_t j = 0; s->discoveries && j < njobs; j++)
        for (size_t k = 0; k < s->ndisc[j]; k++) {
            k8s_discovery_free(s->discoveries[s->disc_first[j] + k].k8s);
            http_discovery_free(s->discoveries[s->disc_first[j] + k].http);
        }
    free(s->discoveries);
    free(s->disc_first);
    free(s->ndisc);
    s->discoveries = NULL;
    s->disc_first = s->ndisc = NULL;
}

static int start(void *st)
{
    struct state *s = st;
    struct event_base *base = s->host->event_base(s->self);
    for (size_t i = 0; i < HTTP_CLIENTS; i++)
        if (!(s->http[i] = http_client_create(base, on_done)))
            return PROFD_ERR;
    if (!(s->token_http = http_client_create(base, job_credentials_fetched)))
        return PROFD_ERR;
    const struct job *jobs = s->cfg->scrape_configs.items;
    size_t njobs = s->cfg->scrape_configs.n;
    s->credentials = calloc(njobs + 1, sizeof(*s->credentials));
    if (!s->credentials)
        return PROFD_ERR;
    for (size_t j = 0; j < njobs; j++)
        s->credentials[j] = job_credentials_new(&jobs[j], s->token_http, on_token);
    s->timers = instant_timers_new(base, on_due, s);
    refresh(s);
    s->started = true;
    for (size_t i = 0; i < s->nscrapes; i++)
        arm(s->scrapes[i]);
    if (start_discoveries(s) < 0)
        return PROFD_ERR;
    int64_t every = 0;
    for (size_t j = 0; j < s->cfg->scrape_configs.n; j++) {
        const struct file_sd_config *fc = jobs[j].file_sd_configs.items;
        for (size_t k = 0; k < jobs[j].file_sd_configs.n; k++)
            if (!every || fc[k].refresh_interval < every)
                every = fc[k].refresh_interval;
    }
    if (every > 0) {
        struct timeval tv = {every / 1000000000, (every % 1000000000) / 1000};
        s->refresh_ev = event_new(base, -1, EV_PERSIST, on_refresh, s);
        event_add(s->refresh_ev, &tv);
    }
    return PROFD_OK;
}

static int shutdown_(void *st)
{
    struct state *s = st;
    if (s->refresh_ev)
        event_free(s->refresh_ev);
    s->refresh_ev = NULL;
    stop_discoveries(s);
    for (size_t i = 0; i < s->nscrapes; i++)
        scrape_free(s->scrapes[i]);
    free(s->scrapes);
    s->scrapes = NULL;
    s->nscrapes = 0;
    instant_timers_free(s->timers);
    s->timers = NULL;
    for (size_t i = 0; i < HTTP_CLIENTS; i++) {
        http_client_destroy(s->http[i]);
        s->http[i] = NULL;
    }
    for (size_t j = 0; s->credentials && j < s->cfg->scrape_configs.n; j++)
        job_credentials_free(s->credentials[j]);   /* before the client their fetches run on */
    free(s->credentials);
    s->credentials = NULL;
    http_client_destroy(s->token_http);
    s->token_http = NULL;
    s->started = false;
    return PROFD_OK;
}

static void destroy(void *st)
{
    struct state *s = st;
    if (!s)
        return;
    shutdown_(s);
    size_t njobs = s->cfg->scrape_configs.n;
    for (size_t j = 0; j < njobs; j++) {
        if (s->defs)
            presets_free(s->defs[j], s->defs[j] ? s->ndefs[j] : 0);
        if (s->sd_signature)
            free(s->sd_signature[j]);
        if (s->memo)
            unit_memo_clear(&s->memo[j]);
    }
    free(s->memo);
    free(s->defs);
    free(s->ndefs);
    free(s->sd_signature);
    if (s->defs)
        curl_global_cleanup();
    free(s);
}

static const struct profd_plugin plugin = {
    PROFD_PLUGIN_HEADER,
    .kind = PROFD_RECEIVER,
    .type = "pprof_scrape",
    .description = "scrapes /debug/pprof endpoints, Prometheus-style, with client-side deltas",
    .options = pprof_scrape_options,
    .config_size = sizeof(struct config),
    .validate = scrape_config_validate,
    .create = create,
    .start = start,
    .shutdown = shutdown_,
    .destroy = destroy,
};

PROFD_PLUGIN_DEFINE(plugin)
