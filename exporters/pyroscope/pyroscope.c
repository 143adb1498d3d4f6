// SPDX-License-Identifier: Apache-2.0
/*
 * exporter pyroscope: records to Pyroscope with push.v1 over Connect
 * (`POST /push.v1.PusherService/Push`, application/proto, the default) or
 * the legacy `POST /ingest?format=pprof` for old servers. Series labels are
 * cleaned the way Pyroscope validates them (clean_labels.c), with the fixes
 * counted. The tenant goes as X-Scope-OrgID: a server's own, else each
 * record's __tenant_id__, with one push.v1 request per tenant. Retries on
 * 429, 408 and 5xx, never on another 4xx. With several servers each gets
 * every batch, and a retry goes only to those that have not taken it, and
 * sends only what they have not taken (tenants' requests, or with
 * /ingest, records).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/client_auth.h"
#include "../../lib/client_tls.h"
#include "../../lib/grow.h"
#include "../../lib/label_valid.h"
#include "../../lib/profile_family.h"
#include "../../lib/raw_series.h"
#include "../../lib/rpc_client.h"
#include "../../lib/running_total.h"
#include "../../lib/tenant_id.h"
#include "../../lib/transport_labels.h"
#include "clean_labels.h"
#include "profd/plugin.h"
#include "type_names.h"

#define PUSH "/push.v1.PusherService/Push"

enum { API_PUSH, API_INGEST };
static const char *const apis[] = {"push", "ingest", NULL};
#define MAX_SERVERS 16

/* Where to send and how to be let in: the top level's, or each of servers. */
struct server {
    char *endpoint;
    char *tenant;
    struct client_auth auth;
    struct profd_str_map headers;
    struct client_tls tls;
};

struct config {
    struct server main;   /* first: SERVER_OPTIONS' offsets are from it */
    struct profd_obj_list servers;
    int api;
    struct profd_str_map external_labels;
    int64_t timeout;
};

#define SERVER_OPTIONS(default_endpoint)                                                   \
    {"endpoint", PROFD_OPT_STRING, offsetof(struct server, endpoint), default_endpoint,     \
     "the server's base URL; https:// means TLS"},                                          \
    {"tenant", PROFD_OPT_STRING, offsetof(struct server, tenant), NULL,                     \
     "sent as X-Scope-OrgID with every profile; unset: each profile's __tenant_id__, if any"}, \
    CLIENT_AUTH_OPTIONS(struct server, auth, "true"),                                     \
    {"headers", PROFD_OPT_STRING_MAP, offsetof(struct server, headers), NULL,               \
     "headers sent with every request"},                                                    \
    {"tls", PROFD_OPT_OBJECT, offsetof(struct server, tls), NULL, "TLS settings",           \
     client_tls_options}

static const struct profd_option server_options[] = {SERVER_OPTIONS(NULL), {0}};

static const struct profd_option options[] = {
    SERVER_OPTIONS("http://127.0.0.1:4040"),
    {"servers", PROFD_OPT_OBJECT_LIST, offsetof(struct config, servers), NULL,
     "several servers, each with its own endpoint, tenant, auth, headers and TLS, each sent "
     "every profile and retried on its own; when set, the top-level endpoint is not used",
     server_options, sizeof(struct server)},
    {"api", PROFD_OPT_ENUM, offsetof(struct config, api), "push",
     "push (push.v1 over Connect), or ingest (/ingest, for old servers)", .choices = apis},
    {"external_labels", PROFD_OPT_STRING_MAP, offsetof(struct config, external_labels), NULL,
     "labels added to every series that lacks them"},
    {"timeout", PROFD_OPT_DURATION, offsetof(struct config, timeout), "30s",
     "deadline of one request"},
    {0},
};

struct pyroscope_exporter {
    const struct profd_host *host;
    struct profd_component *self;
    const struct config *cfg;
    size_t nclients;
    struct rpc_client *clients[MAX_SERVERS];
    bool record_tenants;       /* a server sends the tenants records name */
    bool all_record_tenants;   /* every server does */
    _Atomic size_t label_fixes, type_fixes;
};

/* The servers to send to: the list, or the top level's. */
static const struct server *servers(const struct config *cfg, size_t *n)
{
    *n = cfg->servers.n ? cfg->servers.n : 1;
    return cfg->servers.n ? cfg->servers.items : &cfg->main;
}

static int validate(const struct profd_host *host, struct profd_diag *d, const void *cfgp)
{
    size_t n;
    const struct server *srv = servers(cfgp, &n);
    if (n > MAX_SERVERS) {
        host->diag(d, srv, "at most %d servers", MAX_SERVERS);
        return PROFD_ERR;
    }
    for (size_t i = 0; i < n; i++) {
        const char *url = srv[i].endpoint;
        char why[128];
        if (!url || (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))) {
            host->diag(d, &srv[i].endpoint, "endpoint must be an http:// or https:// URL");
            return PROFD_ERR;
        }
        if (!tenant_id_valid(srv[i].tenant, why, sizeof(why))) {
            host->diag(d, &srv[i].tenant, "%s", why);
            return PROFD_ERR;
        }
        if (client_tls_validate(host, d, &srv[i].tls, "tls: ") != PROFD_OK ||
            client_auth_validate(host, d, &srv[i].auth, "") != PROFD_OK)
            return PROFD_ERR;
    }
    return PROFD_OK;
}

static void count_fixes(struct pyroscope_exporter *e, size_t fixes)
{
    running_total_add(e->host, e->self, &e->label_fixes, fixes, "profd_pyroscope_label_fixes",
                      "Series labels changed or dropped to pass Pyroscope's validation.");
}

/* Server s's own tenant, or NULL when it sends the records' own. */
static const char *server_tenant(const struct pyroscope_exporter *e, size_t s)
{
    size_t n;
    const struct server *srv = &servers(e->cfg, &n)[s];
    return srv->tenant && *srv->tenant ? srv->tenant : NULL;
}

/* The tenant server s sends record i as: its own when it has one, else
 * the record's (tenants[i]); NULL for none. */
static const char *tenant_for(const struct pyroscope_exporter *e, size_t s,
                              const char *const *tenants, size_t i)
{
    const char *own = server_tenant(e, s);
    return own ? own : tenants[i];
}

/* One request to path with tenant (NULL: none) as X-Scope-OrgID. */
static int call(struct pyroscope_exporter *e, struct rpc_client *client, const char *path,
                const char *tenant, const uint8_t *body, size_t len)
{
    struct rpc_result res;
    char *header = tenant ? must_asprintf(TENANT_HEADER ": %s", tenant) : NULL;
    int rc = rpc_client_export(client, e->self, "push", path, header, body, len, &res);
    free(header);
    free(res.body);
    return rc;
}

/* Appends s to the query q, percent-encoding what a URL cannot hold. */
static void query_escape(char *q, size_t n, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = strlen(q);
    for (const unsigned char *p = (const unsigned char *)s; *p && o + 4 < n; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("-_.~", *p)) {
            q[o++] = (char)*p;
        } else {
            q[o++] = '%';
            q[o++] = hex[*p >> 4];
            q[o++] = hex[*p & 15];
        }
    }
    q[o] = '\0';
}

/* One /ingest request for a record: name=<service_name>{labels}, and
 * spyName from the label pyroscope_spy (which Pyroscope makes from it:
 * in the braces too, the label would be there twice). __delta__ is left
 * out: the server marks what /ingest takes itself. */
static int ingest_one(struct pyroscope_exporter *e, struct rpc_client *client,
                      const char *tenant, const struct profd_record *r,
                      const struct profd_labels *labels, const struct pyroscope_pprof *pprof)
{
    char name[4096] = "", query[8192] = "/ingest?format=pprof&name=";
    const char *svc = e->host->labels_get(labels, "service_name");
    const char *spy = e->host->labels_get(labels, "pyroscope_spy");
    snprintf(name, sizeof(name), "%s{", svc ? svc : "unknown_service");
    for (size_t i = 0; i < labels->n; i++) {
        if (!strcmp(labels->items[i].name, "service_name") ||
            !strcmp(labels->items[i].name, "pyroscope_spy") ||
            !strcmp(labels->items[i].name, DELTA_LABEL))
            continue;
        size_t o = strlen(name);
        snprintf(name + o, sizeof(name) - o, "%s%s=%s", name[o - 1] == '{' ? "" : ",",
                 labels->items[i].name, labels->items[i].value);
    }
    strncat(name, "}", sizeof(name) - strlen(name) - 1);
    query_escape(query, sizeof(query), name);
    if (spy) {
        strncat(query, "&spyName=", sizeof(query) - strlen(query) - 1);
        query_escape(query, sizeof(query), spy);
    }
    size_t o = strlen(query);
    snprintf(query + o, sizeof(query) - o, "&from=%lld&until=%lld",
             (long long)(r->time_nanos / 1000000000),
             (long long)((r->time_nanos + r->duration_nanos) / 1000000000));
    return call(e, client, query, tenant, pprof->data, pprof->len);
}

/* What one consume sends: per record, its labels cleaned and its pprof
 * (no data: left out) and the tenant it names (NULL: none), and whether
 * that is no tenant ID, which the servers that send records' tenants
 * leave the record out for. */
struct outgoing {
    const struct profd_batch *b;
    struct profd_labels *labels;
    struct pyroscope_pprof *pprofs;
    const char **tenants;
    bool *bad_tenants;
};

/* Whether server s sends record i: prepare() kept it, and s has a tenant
 * of its own or the record's is one. */
static bool sends(const struct pyroscope_exporter *e, size_t s, const struct outgoing *o,
                  size_t i)
{
    return o->pprofs[i].data && (!o->bad_tenants[i] || server_tenant(e, s));
}

/* How far the batch this thread is retrying got with each server (bit or
 * index s: server s): the servers done with it, and how much of it each
 * server took, which a retry does not send again: with push.v1 the
 * tenants' requests, with /ingest the records. */
static _Thread_local uint32_t servers_done;
static _Thread_local size_t server_progress[MAX_SERVERS];

/* Pyroscope's default limit on a profile's uncompressed size
 * (validation.max_profile_size_bytes), over which it refuses the whole
 * push.v1 request the profile is in. */
#define PYROSCOPE_MAX_PROFILE (4u << 20)

/* The uncompressed size of pprof: a gzip stream's own count (ISIZE, its
 * last four bytes), else its length. */
static size_t uncompressed_size(const struct pyroscope_pprof *pprof)
{
    const uint8_t *d = pprof->data;
    if (pprof->len < 18 || d[0] != 0x1f || d[1] != 0x8b)
        return pprof->len;
    const uint8_t *isize = d + pprof->len - 4;
    return (size_t)isize[0] | (size_t)isize[1] << 8 | (size_t)isize[2] << 16 |
           (size_t)isize[3] << 24;
}

/* Whether record i goes in a push.v1 request of its own: over the server's
 * default limit, it would have the whole request refused with it, and
 * alone it is refused alone (or taken, by a server whose limit is
 * higher). */
static bool alone(const struct outgoing *o, size_t i)
{
    return uncompressed_size(&o->pprofs[i]) > PYROSCOPE_MAX_PROFILE;
}

/* Whether record i goes in the request of record first, as server s sends
 * them: a record sent, with the same tenant, both going with others (or
 * i is first). */
static bool same_request(const struct pyroscope_exporter *e, size_t s, const struct outgoing *o,
                         size_t first, size_t i)
{
    if (i == first)
        return true;
    return sends(e, s, o, i) && !alone(o, i) && !alone(o, first) &&
           tenant_id_same(tenant_for(e, s, o->tenants, i), tenant_for(e, s, o->tenants, first));
}

/* Whether record i is sent and opens a push.v1 request, as server s sends
 * them: one per tenant of the records that go with others, one for each
 * record that goes alone. */
static bool opens_request(const struct pyroscope_exporter *e, size_t s,
                          const struct outgoing *o, size_t i)
{
    if (!sends(e, s, o, i))
        return false;
    for (size_t j = 0; j < i; j++)
        if (sends(e, s, o, j) && same_request(e, s, o, j, i))
            return false;
    return true;
}

/* Sends server s the push.v1 request record first opens: first and the
 * records after it that go with it. A refusal for good settles them
 * refused. */
static int push_request(struct pyroscope_exporter *e, size_t s, const struct outgoing *o,
                        size_t first)
{
    struct pb_buf push = {0};
    for (size_t i = first; i < o->b->nrecords; i++)
        if (same_request(e, s, o, first, i))
            raw_series_write_pprof(&o->labels[i], o->pprofs[i].data, o->pprofs[i].len,
                                   RAW_LABEL_PAIRS, 1, &push);
    int rc = call(e, e->clients[s], PUSH, tenant_for(e, s, o->tenants, first), push.p, push.len);
    free(push.p);
    for (size_t i = first; rc != PROFD_OK && rc != PROFD_ERETRY && i < o->b->nrecords; i++)
        if (same_request(e, s, o, first, i))
            e->host->export_settle(e->self, i, false);   /* whatever the others do */
    return rc;
}

/* Sends server s what it has not taken of the batch: push.v1 requests,
 * one per tenant (and one for each profile too large to go with others),
 * or an /ingest per record (each answer from the only
 * server settles its record). A refusal for good settles what was
 * refused and does not stop the next request. PROFD_ERETRY when s is to
 * be tried again, else PROFD_OK: s is done. */
static int send_to(struct pyroscope_exporter *e, size_t s, const struct outgoing *o)
{
    size_t *taken = &server_progress[s];
    if (e->cfg->api == API_PUSH) {
        for (size_t i = 0, request = 0; i < o->b->nrecords; i++) {
            if (!opens_request(e, s, o, i) || request++ < *taken)
                continue;
            if (push_request(e, s, o, i) == PROFD_ERETRY)
                return PROFD_ERETRY;
            ++*taken;
        }
        return PROFD_OK;
    }
    for (; *taken < o->b->nrecords; ++*taken) {
        size_t i = *taken;
        if (!sends(e, s, o, i))
            continue;
        int rc = ingest_one(e, e->clients[s], tenant_for(e, s, o->tenants, i), o->b->records[i],
                            &o->labels[i], &o->pprofs[i]);
        if (rc == PROFD_ERETRY)
            return rc;
        if (rc != PROFD_OK)
            e->host->export_settle(e->self, i, false);   /* whatever the others do */
        else if (e->nclients == 1)
            e->host->export_settle(e->self, i, true);
    }
    return PROFD_OK;
}

/* What a record sends: its labels cleaned and its pprof as Pyroscope
 * takes them, the family from its types where its series has no __name__
 * (which Pyroscope refuses a series without), and the tenant it names,
 * *bad_tenant set when that (which a server would send) is no tenant ID:
 * the servers that would send it leave the record out. False when its
 * profile cannot be read: every server leaves it out. Either is logged,
 * as the fixes are counted, when count is set (a batch's first try). */
static bool prepare(struct pyroscope_exporter *e, struct profd_record *r, bool count,
                    struct profd_labels *labels, struct pyroscope_pprof *pprof,
                    const char **tenant, bool *bad_tenant)
{
    struct profd_type_names types;
    char why[256], tenant_why[128], family[PROFD_TYPE_NAME_SIZE];
    bool fixed = false;
    const char *named = e->host->record_label(r, TENANT_LABEL);
    *tenant = named && *named && e->record_tenants ? named : NULL;
    *bad_tenant = !tenant_id_valid(*tenant, tenant_why, sizeof(tenant_why));
    if (*bad_tenant && count)
        e->host->log(e->self, PROFD_LOG_WARN, "left out a record%s: %s",
                     e->all_record_tenants ? "" : " for the servers with no tenant of their own",
                     tenant_why);
    if (e->host->record_type_names(r, &types, why, sizeof(why)) < 0 ||
        pyroscope_pprof_of(e->host, r, &types, pprof, &fixed, why, sizeof(why)) < 0) {
        if (count)
            e->host->log(e->self, PROFD_LOG_WARN, "left out a record: %s", why);
        return false;
    }
    const char *fallback =
        pyroscope_series_name(e->host, &r->labels, &e->cfg->external_labels)
            ? NULL
            : profile_family_of_types(&types, e->host->record_label(r, "service_name"), family,
                                      sizeof(family));
    size_t label_fixes = pyroscope_clean_labels(e->host, &r->labels, &e->cfg->external_labels,
                                                fallback, labels);
    if (count) {
        running_total_add(e->host, e->self, &e->type_fixes, fixed, "profd_pyroscope_type_fixes",
                          "Profiles whose type names were changed to pass Pyroscope's "
                          "validation (no '-' in them).");
        count_fixes(e, label_fixes);
    }
    return true;
}

static int consume(void *st, struct profd_batch *b)
{
    struct pyroscope_exporter *e = st;
    struct outgoing o = {b, calloc(b->nrecords + 1, sizeof(*o.labels)),
                         calloc(b->nrecords + 1, sizeof(*o.pprofs)),
                         calloc(b->nrecords + 1, sizeof(*o.tenants)),
                         calloc(b->nrecords + 1, sizeof(*o.bad_tenants))};
    if (!o.labels || !o.pprofs || !o.tenants || !o.bad_tenants)
        abort();
    bool first_try = e->host->export_attempt(e->self) == 0;
    if (first_try) {
        servers_done = 0;
        memset(server_progress, 0, sizeof(server_progress));
    }
    for (size_t i = 0; i < b->nrecords; i++)
        if (!prepare(e, b->records[i], first_try, &o.labels[i], &o.pprofs[i], &o.tenants[i],
                     &o.bad_tenants[i]) ||
            o.bad_tenants[i])
            e->host->export_settle(e->self, i, false);   /* some server leaves it out */
    /* every server gets the batch; one that failed is retried alone. A
     * record any server refused for good is settled refused; the others
     * count as sent once every server took them. */
    int rc = PROFD_OK;
    for (size_t s = 0; s < e->nclients; s++) {
        if (servers_done & (1u << s))
            continue;
        if (send_to(e, s, &o) == PROFD_ERETRY)
            rc = PROFD_ERETRY;
        else
            servers_done |= 1u << s;
    }
    for (size_t i = 0; i < b->nrecords; i++) {
        e->host->labels_clear(&o.labels[i]);
        pyroscope_pprof_free(&o.pprofs[i]);
    }
    free(o.labels);
    free(o.pprofs);
    free(o.tenants);
    free(o.bad_tenants);
    return rc;
}

/* A client for one server: the protocol's headers, the auth and the
 * configured headers (the tenant goes with each call). */
static struct rpc_client *client_for(const struct profd_host *host, struct profd_component *self,
                                     const struct config *cfg, const struct server *srv)
{
    const char *protocol[2] = {NULL};
    if (cfg->api == API_PUSH)
        protocol[0] = "Connect-Protocol-Version: 1";
    return rpc_client_new(host, self, &(struct rpc_client_options){   /* copies the headers */
        .url = srv->endpoint,
        .protocol = PROFD_RPC_HTTP,
        .content_type = cfg->api == API_PUSH ? "application/proto" : "application/octet-stream",
        .headers = &srv->headers,
        .protocol_headers = protocol,
        .tls = &srv->tls,
        .auth = &srv->auth,
        .timeout = cfg->timeout,
        .retry_408_5xx = true,
    });
}

static void destroy(void *st)
{
    struct pyroscope_exporter *e = st;
    for (size_t i = 0; e && i < e->nclients; i++)
        rpc_client_free(e->clients[i]);
    free(e);
}

static int create(const struct profd_host *host, struct profd_component *self, const void *cfgp,
                  void **out)
{
    const struct config *cfg = cfgp;
    struct pyroscope_exporter *e = calloc(1, sizeof(*e));
    if (!e)
        return PROFD_ERR;
    e->host = host;
    e->self = self;
    e->cfg = cfg;
    size_t n;
    const struct server *srv = servers(cfg, &n);
    e->all_record_tenants = true;
    for (; e->nclients < n; e->nclients++) {
        bool own = server_tenant(e, e->nclients);
        e->record_tenants |= !own;
        e->all_record_tenants &= !own;
        if (!(e->clients[e->nclients] = client_for(host, self, cfg, &srv[e->nclients]))) {
            destroy(e);
            return PROFD_ERR;
        }
    }
    *out = e;
    return PROFD_OK;
}

static const struct profd_plugin plugin = {
    PROFD_PLUGIN_HEADER,
    .kind = PROFD_EXPORTER,
    .type = "pyroscope",
    .description = "sends profiles to Pyroscope (push.v1 over Connect, or /ingest)",
    .options = options,
    .config_size = sizeof(struct config),
    .validate = validate,
    .create = create,
    .consume = consume,
    .destroy = destroy,
    .flags = PROFD_PLUGIN_MERGES_BATCHES,
};

PROFD_PLUGIN_DEFINE(plugin)
