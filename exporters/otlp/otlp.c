// SPDX-License-Identifier: Apache-2.0
/*
 * exporter otlp: records as OTLP ExportProfilesServiceRequests (one
 * dictionary per request) over gRPC or HTTP. Retries are the exporter
 * helper's, on what the OTLP specification calls retryable (gRPC
 * UNAVAILABLE and kin, HTTP 429/502/503/504, no connection), waiting at
 * least what Retry-After or a RetryInfo asked for; never on a 400 or
 * INVALID_ARGUMENT. A record's __tenant_id__ goes as X-Scope-OrgID, one
 * request per tenant, unless the headers name a tenant for every request.
 */
#include <stdio.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/client_auth.h"
#include "../../lib/client_tls.h"
#include "../../lib/grow.h"
#include "../../lib/pb_reader.h"
#include "../../lib/rpc_client.h"
#include "../../lib/running_total.h"
#include "../../lib/tenant_id.h"
#include "profd/plugin.h"

#define GRPC_PATH "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"

enum { PROTO_GRPC, PROTO_HTTP };
static const char *const protocols[] = {"grpc", "http", NULL};
enum { ENCODING_PROTO, ENCODING_JSON };
static const char *const encodings[] = {"proto", "json", NULL};
enum { COMPRESS_GZIP, COMPRESS_ZSTD, COMPRESS_NONE };
static const char *const compressions[] = {"gzip", "zstd", "none", NULL};

struct config {
    char *endpoint;
    int protocol;
    char *path;
    int encoding;
    int compression;
    struct profd_str_map headers;
    int64_t timeout;
    int64_t send_batch_size;
    uint64_t max_request_size;
    struct client_tls tls;
    struct client_auth auth;
};

static const struct profd_option options[] = {
    {"endpoint", PROFD_OPT_STRING, offsetof(struct config, endpoint), "127.0.0.1:4317",
     "host:port or http(s)://host:port; https:// means TLS"},
    {"protocol", PROFD_OPT_ENUM, offsetof(struct config, protocol), "grpc",
     "grpc, or http (protobuf POSTs)", .choices = protocols},
    {"path", PROFD_OPT_STRING, offsetof(struct config, path), "/v1development/profiles",
     "the request path of the http protocol"},
    {"encoding", PROFD_OPT_ENUM, offsetof(struct config, encoding), "proto",
     "proto, or json (OTLP/JSON; http protocol only)", .choices = encodings},
    {"compression", PROFD_OPT_ENUM, offsetof(struct config, compression), "gzip",
     "gzip, zstd or none", .choices = compressions},
    {"headers", PROFD_OPT_STRING_MAP, offsetof(struct config, headers), NULL,
     "headers (gRPC metadata) sent with every request; without an X-Scope-OrgID among them, "
     "each profile's __tenant_id__, if any, is sent as one"},
    {"timeout", PROFD_OPT_DURATION, offsetof(struct config, timeout), "10s",
     "deadline of one request"},
    {"send_batch_size", PROFD_OPT_INT, offsetof(struct config, send_batch_size), "256",
     "most records in one request"},
    {"max_request_size", PROFD_OPT_SIZE, offsetof(struct config, max_request_size), "4MiB",
     "records are split over several requests above this (gRPC servers' default limit); "
     "a single larger record is sent alone"},
    {"tls", PROFD_OPT_OBJECT, offsetof(struct config, tls), NULL, "TLS settings",
     client_tls_options},
    CLIENT_AUTH_OPTIONS(struct config, auth, "true"),
    {0},
};

struct otlp_exporter {
    const struct profd_host *host;
    struct profd_component *self;
    const struct config *cfg;
    struct rpc_client *client;
    bool record_tenants;       /* the headers name no tenant: records' go */
    _Atomic size_t rejected;   /* profiles the receiver refused in a partial success */
};

static int validate(const struct profd_host *host, struct profd_diag *d, const void *cfgp)
{
    const struct config *cfg = cfgp;
    int rc = PROFD_OK;
    if (!cfg->endpoint || !*cfg->endpoint) {
        host->diag(d, &cfg->endpoint, "endpoint is empty");
        rc = PROFD_ERR;
    }
    if (cfg->encoding == ENCODING_JSON && cfg->protocol != PROTO_HTTP) {
        host->diag(d, &cfg->encoding, "json needs protocol: http (gRPC carries protobuf)");
        rc = PROFD_ERR;
    }
    if (cfg->send_batch_size < 1) {
        host->diag(d, &cfg->send_batch_size, "send_batch_size must be at least 1");
        rc = PROFD_ERR;
    }
    if (client_tls_validate(host, d, &cfg->tls, "tls: ") != PROFD_OK ||
        client_auth_validate(host, d, &cfg->auth, "") != PROFD_OK)
        rc = PROFD_ERR;
    return rc;
}

static int create(const struct profd_host *host, struct profd_component *self, const void *cfgp,
                  void **out)
{
    const struct config *cfg = cfgp;
    char url[1024];
    snprintf(url, sizeof(url), "%s%s", cfg->endpoint, cfg->protocol == PROTO_HTTP ? cfg->path : "");
    struct rpc_client *client = rpc_client_new(host, self, &(struct rpc_client_options){
        .url = url,
        .protocol = cfg->protocol == PROTO_GRPC ? PROFD_RPC_GRPC : PROFD_RPC_HTTP,
        .content_type = cfg->encoding == ENCODING_JSON ? "application/json"
                                                       : "application/x-protobuf",
        .compression = cfg->compression == COMPRESS_NONE ? "" : compressions[cfg->compression],
        .headers = &cfg->headers,
        .tls = &cfg->tls,
        .auth = &cfg->auth,
        .timeout = cfg->timeout,
    });
    if (!client)
        return PROFD_ERR;
    struct otlp_exporter *e = must_malloc(sizeof(*e));
    *e = (struct otlp_exporter){.host = host, .self = self, .cfg = cfg, .client = client,
                                .record_tenants = true};
    for (size_t i = 0; i < cfg->headers.n; i++)
        e->record_tenants &= strcasecmp(cfg->headers.keys[i], TENANT_HEADER) != 0;
    *out = e;
    return PROFD_OK;
}

/* The partial success of an ExportProfilesServiceResponse, if any: logged,
 * and its profiles counted apart (a record may hold several profiles, and
 * the response does not say whose they were; its records count as sent). */
static void log_partial_success(struct otlp_exporter *e, const uint8_t *body, size_t len)
{
    /* partial_success = 1 { rejected_profiles = 1; error_message = 2 } */
    if (!body || !len)
        return;   /* an empty response: all taken */
    struct pb_reader response, partial, message;
    pb_reader_init(&response, body, body, len);
    uint64_t rejected = pb_find_len(response, 1, &partial) ? pb_find_varint(partial, 1) : 0;
    if (!rejected)
        return;
    bool said = pb_find_len(partial, 2, &message);
    size_t msg_len = said ? (size_t)(message.end - message.p) : 0;
    running_total_add(e->host, e->self, &e->rejected, rejected, "profd_otlp_rejected_profiles",
                      "Profiles the OTLP receiver refused in a partial success.");
    e->host->log(e->self, PROFD_LOG_WARN, "the receiver refused %llu profiles: %.*s",
                 (unsigned long long)rejected, msg_len > 1024 ? 1024 : (int)msg_len,
                 said ? (const char *)message.p : "");
}

/* The records of one request, by their index in the batch, and the
 * tenant they go as (NULL: none). */
struct request {
    struct profd_batch *b;
    const size_t *index;
    size_t n;
    const char *tenant;
};

/* Settles q's records, sent in a request that rc tells the end of:
 * delivered when it was taken and their profile was in it. */
static void settle_request(struct otlp_exporter *e, const struct request *q, int rc)
{
    char why[8];
    for (size_t k = 0; k < q->n; k++) {
        struct profd_record *r = q->b->records[q->index[k]];
        e->host->export_settle(e->self, q->index[k],
                               rc == PROFD_OK && e->host->record_profile(r, why, sizeof(why)));
    }
}

/* Sends q's records as one request, or as halves when that is over
 * max_request_size, and settles those the server took or refused for
 * good. PROFD_ERETRY stops at the request that asked for it. */
static int send_records(struct otlp_exporter *e, const struct request *q)
{
    const struct profd_host *host = e->host;
    uint8_t *body;
    size_t len, skipped;
    char err[256];
    struct profd_record **records = calloc(q->n, sizeof(*records));
    if (!records)
        abort();
    for (size_t k = 0; k < q->n; k++)
        records[k] = q->b->records[q->index[k]];
    host->otlp_encode(records, q->n, &body, &len, &skipped, err, sizeof(err));
    free(records);
    if (len > e->cfg->max_request_size && q->n > 1) {
        free(body);
        struct request head = *q, tail = *q;
        head.n = q->n / 2;
        tail.index += head.n;
        tail.n -= head.n;
        int rc = send_records(e, &head);
        return rc == PROFD_ERETRY ? rc : send_records(e, &tail);
    }
    if (skipped)
        host->log(e->self, PROFD_LOG_WARN, "left out %zu records that cannot be decoded: %s",
                  skipped, err);
    bool json = e->cfg->encoding == ENCODING_JSON;
    if (json) {
        char *text = host->proto_to_json(PROFD_MSG_OTLP_REQUEST, body, len, &len);
        free(body);
        body = (uint8_t *)text;
    }
    struct rpc_result res;
    char *header = q->tenant ? must_asprintf(TENANT_HEADER ": %s", q->tenant) : NULL;
    int rc = rpc_client_export(e->client, e->self, "export",
                               e->cfg->protocol == PROTO_GRPC ? GRPC_PATH : NULL, header, body,
                               len, &res);
    free(header);
    free(body);
    if (rc == PROFD_OK && json) {
        uint8_t *proto;
        size_t proto_len;
        if (host->json_to_proto(PROFD_MSG_OTLP_RESPONSE, (const char *)res.body, res.len, &proto,
                                 &proto_len, err, sizeof(err)) == 0) {
            log_partial_success(e, proto, proto_len);
            free(proto);
        }
    } else if (rc == PROFD_OK) {
        log_partial_success(e, res.body, res.len);
    }
    free(res.body);
    if (rc != PROFD_ERETRY)
        settle_request(e, q, rc);
    return rc;
}

/* Sets *tenant to the one record i of b goes as (NULL: none, or the
 * headers name one); when it names no valid one, settles it refused and
 * logs why. */
static void tenant_of(struct otlp_exporter *e, struct profd_batch *b, size_t i,
                      const char **tenant)
{
    const char *named = e->host->record_label(b->records[i], TENANT_LABEL);
    char why[128];
    *tenant = e->record_tenants && named && *named ? named : NULL;
    if (tenant_id_valid(*tenant, why, sizeof(why)))
        return;
    e->host->log(e->self, PROFD_LOG_WARN, "left out a record: %s", why);
    e->host->export_settle(e->self, i, false);
}

/* A batch goes as one request per tenant, of at most send_batch_size
 * records and max_request_size bytes each. A request refused for good
 * does not stop the next; a retry after a retryable failure starts at the
 * request that failed (those before it settled), as OTLP receivers do not
 * deduplicate. */
static int consume(void *st, struct profd_batch *b)
{
    struct otlp_exporter *e = st;
    size_t step = (size_t)e->cfg->send_batch_size;
    size_t *index = calloc(step < b->nrecords ? step : b->nrecords + 1, sizeof(*index));
    const char **tenants = calloc(b->nrecords + 1, sizeof(*tenants));
    if (!index || !tenants)
        abort();
    for (size_t i = 0; i < b->nrecords; i++)
        if (!e->host->export_settled(e->self, i))
            tenant_of(e, b, i, &tenants[i]);
    int rc = PROFD_OK;
    for (size_t first = 0; first < b->nrecords && rc != PROFD_ERETRY;) {
        if (e->host->export_settled(e->self, first)) {
            first++;
            continue;
        }
        struct request q = {b, index, 0, tenants[first]};
        for (size_t i = first; i < b->nrecords && q.n < step; i++)
            if (!e->host->export_settled(e->self, i) && tenant_id_same(tenants[i], q.tenant))
                index[q.n++] = i;
        rc = send_records(e, &q);
    }
    free(index);
    free(tenants);
    return rc == PROFD_ERETRY ? rc : PROFD_OK;
}

static void destroy(void *st)
{
    struct otlp_exporter *e = st;
    if (e)
        rpc_client_free(e->client);
    free(e);
}

static const struct profd_plugin plugin = {
    PROFD_PLUGIN_HEADER,
    .kind = PROFD_EXPORTER,
    .type = "otlp",
    .flags = PROFD_PLUGIN_MERGES_BATCHES,
    .description = "sends profiles as OTLP over gRPC or HTTP",
    .options = options,
    .config_size = sizeof(struct config),
    .validate = validate,
    .create = create,
    .consume = consume,
    .destroy = destroy,
};

PROFD_PLUGIN_DEFINE(plugin)
