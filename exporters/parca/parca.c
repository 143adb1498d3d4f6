// SPDX-License-Identifier: Apache-2.0
/*
 * exporter parca: records to a Parca server (or Polar Signals) with the
 * profile store's WriteRaw over gRPC: one RawProfileSeries per record, its
 * series labels (__name__ required, as Parca requires it), and the pprof
 * re-encoded so its ids are 1..N in table order, which Parca checks.
 * Requests stay under max_message_size; gRPC messages are not compressed
 * (Parca does not register gzip), the gzip'd pprof inside is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/client_tls.h"
#include "../../lib/grow.h"
#include "../../lib/rpc_client.h"
#include "profd/plugin.h"

#define WRITE_RAW "/parca.profilestore.v1alpha1.ProfileStoreService/WriteRaw"

struct config {
    char *endpoint;
    char *bearer_token;
    char *tenant;
    struct profd_str_map headers;
    int64_t timeout;
    uint64_t max_message_size;
    struct client_tls tls;
};

static const struct profd_option options[] = {
    {"endpoint", PROFD_OPT_STRING, offsetof(struct config, endpoint), "127.0.0.1:7070",
     "host:port or http(s)://host:port; https:// means TLS"},
    {"bearer_token", PROFD_OPT_STRING, offsetof(struct config, bearer_token), NULL,
     "sent as \"authorization: Bearer <token>\""},
    {"tenant", PROFD_OPT_STRING, offsetof(struct config, tenant), NULL,
     "the request's tenant field"},
    {"headers", PROFD_OPT_STRING_MAP, offsetof(struct config, headers), NULL,
     "gRPC metadata sent with every request (e.g. projectID)"},
    {"timeout", PROFD_OPT_DURATION, offsetof(struct config, timeout), "30s",
     "deadline of one request"},
    {"max_message_size", PROFD_OPT_SIZE, offsetof(struct config, max_message_size), "64MiB",
     "records are split over several requests above this (Parca's limit)"},
    {"tls", PROFD_OPT_OBJECT, offsetof(struct config, tls), NULL, "TLS settings",
     client_tls_options},
    {0},
};

struct parca_exporter {
    const struct profd_host *host;
    struct profd_component *self;
    const struct config *cfg;
    struct rpc_client *client;
};

/* A growable protobuf output buffer. */
struct buf {
    uint8_t *p;
    size_t len, cap;
};

static void put_varint(struct buf *b, uint64_t v)
{
    b->p = grow_array(b->p, &b->cap, b->len + 10, 1);
    while (v >= 0x80) {
        b->p[b->len++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b->p[b->len++] = (uint8_t)v;
}

/* A length-delimited field: field number, length, bytes. */
static void put_bytes(struct buf *b, unsigned field, const void *data, size_t len)
{
    put_varint(b, (uint64_t)field << 3 | 2);
    put_varint(b, len);
    b->p = grow_array(b->p, &b->cap, b->len + len, 1);
    if (len)
        memcpy(b->p + b->len, data, len);
    b->len += len;
}

/* One RawProfileSeries of record r into out; false with why set when the
 * record cannot go (no __name__, undecodable payload). */
static bool put_series(struct parca_exporter *e, struct profd_record *r, struct buf *out,
                       char *why, size_t whylen)
{
    const struct profd_host *host = e->host;
    if (!host->record_label(r, "__name__")) {
        snprintf(why, whylen, "a record without __name__ (Parca requires it)");
        return false;
    }
    uint8_t *pprof;
    size_t pprof_len;
    if (host->record_pprof(r, true, true, &pprof, &pprof_len, why, whylen) < 0)
        return false;
    struct buf labels = {0}, label = {0}, sample = {0}, series = {0};
    for (size_t i = 0; i < r->labels.n; i++) {
        label.len = 0;
        put_bytes(&label, 1, r->labels.items[i].name, strlen(r->labels.items[i].name));
        put_bytes(&label, 2, r->labels.items[i].value, strlen(r->labels.items[i].value));
        put_bytes(&labels, 1, label.p, label.len);
    }
    put_bytes(&sample, 1, pprof, pprof_len);
    free(pprof);
    put_bytes(&series, 1, labels.p, labels.len);
    put_bytes(&series, 2, sample.p, sample.len);
    put_bytes(out, 2, series.p, series.len);
    free(labels.p);
    free(label.p);
    free(sample.p);
    free(series.p);
    return true;
}

static int send_request(struct parca_exporter *e, const struct buf *req)
{
    struct rpc_result res;
    int rc = rpc_client_call(e->client, WRITE_RAW, req->p, req->len, &res);
    if (rc == PROFD_ERETRY && res.retry_after)
        e->host->retry_after(e->self, res.retry_after);
    if (rc != PROFD_OK)
        e->host->log(e->self, rc == PROFD_ERETRY ? PROFD_LOG_WARN : PROFD_LOG_ERROR,
                     "WriteRaw to %s failed%s: %s", e->cfg->endpoint,
                     rc == PROFD_ERETRY ? " (will retry)" : "", res.message);
    free(res.body);
    return rc;
}

/* One request per max_message_size: a series that would pass it starts the
 * next request. Records that cannot go are left out, counted and logged. */
static int consume(void *st, struct profd_batch *b)
{
    struct parca_exporter *e = st;
    struct buf req = {0}, series = {0};
    int rc = PROFD_OK;
    if (e->cfg->tenant && *e->cfg->tenant)
        put_bytes(&req, 1, e->cfg->tenant, strlen(e->cfg->tenant));
    size_t head = req.len;
    for (size_t i = 0; i < b->nrecords && rc == PROFD_OK; i++) {
        char why[256];
        series.len = 0;
        if (!put_series(e, b->records[i], &series, why, sizeof(why))) {
            e->host->count(e->self, PROFD_C_FAILED_RECORDS, 1);
            e->host->log(e->self, PROFD_LOG_WARN, "left out %s", why);
            continue;
        }
        if (req.len > head && req.len + series.len > e->cfg->max_message_size) {
            rc = send_request(e, &req);
            req.len = head;
        }
        req.p = grow_array(req.p, &req.cap, req.len + series.len, 1);
        memcpy(req.p + req.len, series.p, series.len);
        req.len += series.len;
    }
    if (rc == PROFD_OK && req.len > head)
        rc = send_request(e, &req);
    free(req.p);
    free(series.p);
    return rc;
}

static int create(const struct profd_host *host, struct profd_component *self, const void *cfgp,
                  void **out)
{
    const struct config *cfg = cfgp;
    struct parca_exporter *e = calloc(1, sizeof(*e));
    if (!e)
        return PROFD_ERR;
    *e = (struct parca_exporter){.host = host, .self = self, .cfg = cfg};
    /* the configured headers and authorization; the client copies them */
    size_t n = cfg->headers.n;
    struct profd_str_map headers = {0, must_malloc((n + 1) * sizeof(char *)),
                                    must_malloc((n + 1) * sizeof(char *))};
    for (size_t i = 0; i < n; i++) {
        headers.keys[i] = cfg->headers.keys[i];
        headers.values[i] = cfg->headers.values[i];
    }
    char *auth = NULL;
    if (cfg->bearer_token && *cfg->bearer_token) {
        auth = must_asprintf("Bearer %s", cfg->bearer_token);
        headers.keys[n] = "authorization";
        headers.values[n++] = auth;
    }
    headers.n = n;
    char url[1024];
    snprintf(url, sizeof(url), "%s%s", strstr(cfg->endpoint, "://") ? "" : "http://",
             cfg->endpoint);
    struct rpc_client_options o = {
        .url = url,
        .protocol = PROFD_RPC_GRPC,
        .headers = &headers,
        .ca_file = cfg->tls.ca_file,
        .cert_file = cfg->tls.cert_file,
        .key_file = cfg->tls.key_file,
        .insecure_skip_verify = cfg->tls.insecure_skip_verify,
        .timeout = cfg->timeout,
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
    struct parca_exporter *e = st;
    if (!e)
        return;
    rpc_client_free(e->client);
    free(e);
}

static const struct profd_plugin plugin = {
    PROFD_PLUGIN_HEADER,
    .kind = PROFD_EXPORTER,
    .type = "parca",
    .description = "sends profiles to Parca with WriteRaw over gRPC",
    .options = options,
    .config_size = sizeof(struct config),
    .create = create,
    .consume = consume,
    .destroy = destroy,
    .flags = PROFD_PLUGIN_MERGES_BATCHES,
};

PROFD_PLUGIN_DEFINE(plugin)
