// SPDX-License-Identifier: Apache-2.0
/*
 * exporter pyroscope: records to Pyroscope with push.v1 over Connect
 * (`POST /push.v1.PusherService/Push`, application/proto, the default) or
 * the legacy `POST /ingest?format=pprof` for old servers. Series labels are
 * cleaned the way Pyroscope validates them (clean_labels.c), with the fixes
 * counted; the tenant goes as X-Scope-OrgID. Retries on 429, 408 and 5xx,
 * never on another 4xx.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/client_tls.h"
#include "../../lib/grow.h"
#include "../../lib/raw_series.h"
#include "../../lib/rpc_client.h"
#include "clean_labels.h"
#include "profd/plugin.h"

#define PUSH "/push.v1.PusherService/Push"

enum { API_PUSH, API_INGEST };
static const char *const apis[] = {"push", "ingest", NULL};

struct config {
    char *endpoint;
    int api;
    char *tenant;
    char *bearer_token;
    struct {
        char *username, *password;
    } basic_auth;
    struct profd_str_map headers, external_labels;
    int64_t timeout;
    struct client_tls tls;
};

static const struct profd_option basic_auth_options[] = {
    {"username", PROFD_OPT_STRING, 0, NULL, "user name"},
    {"password", PROFD_OPT_STRING, sizeof(char *), NULL, "password"},
    {0},
};

static const struct profd_option options[] = {
    {"endpoint", PROFD_OPT_STRING, offsetof(struct config, endpoint), "http://127.0.0.1:4040",
     "the server's base URL; https:// means TLS"},
    {"api", PROFD_OPT_ENUM, offsetof(struct config, api), "push",
     "push (push.v1 over Connect), or ingest (/ingest, for old servers)", .choices = apis},
    {"tenant", PROFD_OPT_STRING, offsetof(struct config, tenant), NULL,
     "sent as X-Scope-OrgID"},
    {"bearer_token", PROFD_OPT_STRING, offsetof(struct config, bearer_token), NULL,
     "sent as \"Authorization: Bearer <token>\""},
    {"basic_auth", PROFD_OPT_OBJECT, offsetof(struct config, basic_auth), NULL,
     "HTTP basic auth", basic_auth_options},
    {"headers", PROFD_OPT_STRING_MAP, offsetof(struct config, headers), NULL,
     "headers sent with every request"},
    {"external_labels", PROFD_OPT_STRING_MAP, offsetof(struct config, external_labels), NULL,
     "labels added to every series that lacks them"},
    {"timeout", PROFD_OPT_DURATION, offsetof(struct config, timeout), "30s",
     "deadline of one request"},
    {"tls", PROFD_OPT_OBJECT, offsetof(struct config, tls), NULL, "TLS settings",
     client_tls_options},
    {0},
};

struct pyroscope_exporter {
    const struct profd_host *host;
    struct profd_component *self;
    const struct config *cfg;
    struct rpc_client *client;
    _Atomic size_t label_fixes;
};

static int validate(const struct profd_host *host, struct profd_diag *d, const void *cfgp)
{
    const struct config *cfg = cfgp;
    if (!cfg->endpoint ||
        (strncmp(cfg->endpoint, "http://", 7) && strncmp(cfg->endpoint, "https://", 8))) {
        host->diag(d, &cfg->endpoint, "endpoint must be an http:// or https:// URL");
        return PROFD_ERR;
    }
    return PROFD_OK;
}

static void count_fixes(struct pyroscope_exporter *e, size_t fixes)
{
    if (!fixes)
        return;
    size_t total = atomic_fetch_add(&e->label_fixes, fixes) + fixes;
    e->host->gauge_set(e->self, "profd_pyroscope_label_fixes",
                       "Series labels changed or dropped to pass Pyroscope's validation.", "",
                       (double)total);
}

static int call(struct pyroscope_exporter *e, const char *path, const uint8_t *body, size_t len)
{
    struct rpc_result res;
    int rc = rpc_client_export(e->client, e->self, "push", path, body, len, &res);
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

/* One /ingest request for a record: name=<service_name>{labels}. */
static int ingest_one(struct pyroscope_exporter *e, struct profd_record *r,
                      const struct profd_labels *labels)
{
    char name[4096] = "", query[8192] = "/ingest?format=pprof&name=", why[256];
    const char *svc = e->host->labels_get(labels, "service_name");
    snprintf(name, sizeof(name), "%s{", svc ? svc : "unknown_service");
    for (size_t i = 0; i < labels->n; i++) {
        if (!strcmp(labels->items[i].name, "service_name"))
            continue;
        size_t o = strlen(name);
        snprintf(name + o, sizeof(name) - o, "%s%s=%s", name[o - 1] == '{' ? "" : ",",
                 labels->items[i].name, labels->items[i].value);
    }
    strncat(name, "}", sizeof(name) - strlen(name) - 1);
    query_escape(query, sizeof(query), name);
    size_t o = strlen(query);
    snprintf(query + o, sizeof(query) - o, "&from=%lld&until=%lld",
             (long long)(r->time_nanos / 1000000000),
             (long long)((r->time_nanos + r->duration_nanos) / 1000000000));
    uint8_t *pprof;
    size_t len;
    if (e->host->record_pprof(r, true, false, &pprof, &len, why, sizeof(why)) < 0) {
        e->host->log(e->self, PROFD_LOG_WARN, "left out a record: %s", why);
        return PROFD_OK;
    }
    int rc = call(e, query, pprof, len);
    free(pprof);
    return rc;
}

static int consume(void *st, struct profd_batch *b)
{
    struct pyroscope_exporter *e = st;
    struct pb_buf req = {0};
    int rc = PROFD_OK;
    for (size_t i = 0; i < b->nrecords && rc == PROFD_OK; i++) {
        struct profd_labels labels = {0};
        count_fixes(e, pyroscope_clean_labels(e->host, &b->records[i]->labels,
                                              &e->cfg->external_labels, &labels));
        char why[256];
        if (e->cfg->api == API_INGEST) {
            rc = ingest_one(e, b->records[i], &labels);
        } else if (!raw_series_write(e->host, b->records[i], &labels, RAW_LABEL_PAIRS, false, 1,
                                     &req, why, sizeof(why))) {
            e->host->count(e->self, PROFD_C_FAILED_RECORDS, 1);
            e->host->log(e->self, PROFD_LOG_WARN, "left out a record: %s", why);
        }
        e->host->labels_clear(&labels);
    }
    if (rc == PROFD_OK && e->cfg->api == API_PUSH && req.len)
        rc = call(e, PUSH, req.p, req.len);
    free(req.p);
    return rc;
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
    /* the configured headers, then the protocol's and the auth; the client copies them */
    size_t n = cfg->headers.n;
    struct profd_str_map headers = {0, must_malloc((n + 4) * sizeof(char *)),
                                    must_malloc((n + 4) * sizeof(char *))};
    char *auth = NULL;
    for (size_t i = 0; i < n; i++) {
        headers.keys[i] = cfg->headers.keys[i];
        headers.values[i] = cfg->headers.values[i];
    }
    if (cfg->api == API_PUSH) {
        headers.keys[n] = "Connect-Protocol-Version";
        headers.values[n++] = "1";
    }
    if (cfg->tenant && *cfg->tenant) {
        headers.keys[n] = "X-Scope-OrgID";
        headers.values[n++] = cfg->tenant;
    }
    if (cfg->bearer_token && *cfg->bearer_token) {
        auth = must_asprintf("Bearer %s", cfg->bearer_token);
        headers.keys[n] = "Authorization";
        headers.values[n++] = auth;
    }
    headers.n = n;
    struct rpc_client_options o = {
        .url = cfg->endpoint,
        .protocol = PROFD_RPC_HTTP,
        .content_type = cfg->api == API_PUSH ? "application/proto" : "application/octet-stream",
        .headers = &headers,
        .tls = &cfg->tls,
        .timeout = cfg->timeout,
        .retry_408_5xx = true,
        .username = cfg->basic_auth.username,
        .password = cfg->basic_auth.password,
    };
    char err[256];
    e->client = rpc_client_new(host, &o, err, sizeof(err));
    free(auth);
    free(headers.keys);
    free(headers.values);
    if (!e->client) {
        host->log(self, PROFD_LOG_ERROR, "%s", err);
        free(e);
        return PROFD_ERR;
    }
    *out = e;
    return PROFD_OK;
}

static void destroy(void *st)
{
    struct pyroscope_exporter *e = st;
    if (e)
        rpc_client_free(e->client);
    free(e);
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
