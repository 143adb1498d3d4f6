// SPDX-License-Identifier: Apache-2.0
/*
 * receiver otlp: OTLP profiles over gRPC (ProfilesService/Export) and over
 * HTTP (POST of a protobuf ExportProfilesServiceRequest), translated by the
 * daemon's OTLP codec into one record per profile and emitted. Answers as
 * the OTLP specification says: partial success when some profiles were
 * refused, INVALID_ARGUMENT / 400 for a malformed request, UNAVAILABLE / 503
 * when the pipeline pushes back (the client retries). As Pyroscope's OTLP
 * endpoint reads them, every profile holds deltas (__delta__="false") and
 * X-Scope-OrgID names the tenant (__tenant_id__).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/serve.h"
#include "../../lib/server_auth.h"
#include "../../lib/transport_labels.h"
#include "profd/plugin.h"
#include "status.h"

#define GRPC_PATH "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"

struct endpoint_config {
    char *endpoint;
    char *path;                 /* HTTP only */
    struct server_tls tls;
};

struct config {
    struct {
        struct endpoint_config grpc, http;
    } protocols;
    uint64_t max_request_body_size;
    struct serve_limits limits;
    struct server_auth auth;
};

#define SUB(type, field) offsetof(type, field)

static const struct profd_option grpc_options[] = {
    {"endpoint", PROFD_OPT_STRING, SUB(struct endpoint_config, endpoint), "127.0.0.1:4317",
     "host:port to listen on for gRPC; \"\" turns gRPC off"},
    {"tls", PROFD_OPT_OBJECT, SUB(struct endpoint_config, tls), NULL, "TLS settings",
     server_tls_options},
    {0},
};

static const struct profd_option http_options[] = {
    {"endpoint", PROFD_OPT_STRING, SUB(struct endpoint_config, endpoint), "127.0.0.1:4318",
     "host:port to listen on for OTLP/HTTP; \"\" turns it off"},
    {"path", PROFD_OPT_STRING, SUB(struct endpoint_config, path), "/v1development/profiles",
     "the request path"},
    {"tls", PROFD_OPT_OBJECT, SUB(struct endpoint_config, tls), NULL, "TLS settings",
     server_tls_options},
    {0},
};

static const struct profd_option protocol_options[] = {
    {"grpc", PROFD_OPT_OBJECT, offsetof(struct config, protocols.grpc) -
     offsetof(struct config, protocols), NULL, "gRPC server", grpc_options},
    {"http", PROFD_OPT_OBJECT, offsetof(struct config, protocols.http) -
     offsetof(struct config, protocols), NULL, "HTTP server", http_options},
    {0},
};

static const struct profd_option options[] = {
    {"protocols", PROFD_OPT_OBJECT, offsetof(struct config, protocols), NULL,
     "the servers to run", protocol_options},
    {"max_request_body_size", PROFD_OPT_SIZE, offsetof(struct config, max_request_body_size),
     "64MiB", "largest request accepted, counted after decompression"},
    SERVE_LIMITS_OPTIONS(offsetof(struct config, limits)),
    SERVER_AUTH_OPTIONS(offsetof(struct config, auth)),
    {0},
};

struct otlp_receiver {
    const struct profd_host *host;
    struct profd_component *self;
    const struct config *cfg;
    struct profd_server *grpc, *http;
};

/* An endpoint is served unless it is empty or null. */
static bool serving(const char *endpoint)
{
    return endpoint && *endpoint;
}

static int validate(const struct profd_host *host, struct profd_diag *d, const void *cfgp)
{
    const struct config *cfg = cfgp;
    const struct endpoint_config *eps[] = {&cfg->protocols.grpc, &cfg->protocols.http};
    int rc = PROFD_OK;
    for (size_t i = 0; i < 2; i++)
        if (server_tls_validate(host, d, &eps[i]->tls) != PROFD_OK)
            rc = PROFD_ERR;
    if (cfg->max_request_body_size == 0) {
        host->diag(d, &cfg->max_request_body_size, "max_request_body_size must be above 0");
        rc = PROFD_ERR;
    }
    if (serve_limits_validate(host, d, &cfg->limits, cfg->max_request_body_size,
                              "max_request_body_size") != PROFD_OK)
        rc = PROFD_ERR;
    if (!serving(cfg->protocols.grpc.endpoint) && !serving(cfg->protocols.http.endpoint)) {
        host->diag(d, &cfg->protocols, "both protocols are off: nothing would be received");
        rc = PROFD_ERR;
    }
    return rc;
}

static bool is_type(const char *content_type, const char *want)
{
    size_t n = strlen(want);
    return !strncmp(content_type, want, n) && (content_type[n] == '\0' || content_type[n] == ';');
}

/* The encoding of a request (and so of its answer); -1 when unsupported. */
static int request_format(const struct profd_rpc_request *req)
{
    if (req->protocol == PROFD_RPC_GRPC)
        return ANSWER_GRPC;
    if (is_type(req->content_type, "application/x-protobuf"))
        return ANSWER_PROTOBUF;
    if (is_type(req->content_type, "application/json"))
        return ANSWER_JSON;
    return -1;
}

/* Decodes the request into b; the error in res when it cannot. */
static bool decode(struct otlp_receiver *r, const struct profd_rpc_request *req,
                   enum answer_format format, struct profd_batch *b, size_t *rejected,
                   char *why, size_t whylen, struct profd_rpc_response *res)
{
    const struct profd_host *host = r->host;
    const uint8_t *body = req->body;
    size_t len = req->len;
    uint8_t *transcoded = NULL;
    int rc = 0;
    if (format == ANSWER_JSON) {
        rc = host->json_to_proto(PROFD_MSG_OTLP_REQUEST, (const char *)req->body, req->len,
                                  &transcoded, &len, res->message, sizeof(res->message));
        body = transcoded;
    }
    if (rc == 0)
        rc = host->otlp_decode(body, len, r->cfg->max_request_body_size, b, rejected, why,
                               whylen, res->message, sizeof(res->message));
    free(transcoded);
    if (rc < 0)
        status_error(res, format, STATUS_INVALID_ARGUMENT, 400);
    return rc == 0;
}

/* Sets the labels every record of b gets from the request: Pyroscope's
 * mark that its profiles hold deltas, which a Pyroscope server they go on
 * to makes none of, and the tenant (NULL: none). */
static void request_labels(const struct profd_host *host, const char *tenant,
                           struct profd_batch *b)
{
    for (size_t i = 0; i < b->nrecords; i++) {
        host->record_set_label(b->records[i], DELTA_LABEL, "false");
        if (tenant && *tenant)
            host->record_set_label(b->records[i], TENANT_LABEL, tenant);
    }
}

/* Translates and emits one request; fills res on every path. */
static void handle(void *arg, const struct profd_rpc_request *req, struct profd_rpc_response *res)
{
    struct otlp_receiver *r = arg;
    const struct profd_host *host = r->host;
    bool grpc = req->protocol == PROFD_RPC_GRPC;
    int format = request_format(req);
    enum answer_format answer = format < 0 ? ANSWER_PROTOBUF : (enum answer_format)format;
    if (grpc ? strcmp(req->path, GRPC_PATH) != 0
             : strcmp(req->path, r->cfg->protocols.http.path) != 0) {
        snprintf(res->message, sizeof(res->message), "unknown path %s", req->path);
        return status_error(res, answer, STATUS_UNIMPLEMENTED, 404);
    }
    if (!server_authorized(&r->cfg->auth, req)) {
        snprintf(res->message, sizeof(res->message), "missing or wrong bearer token");
        return status_error(res, answer, STATUS_UNAUTHENTICATED, 401);
    }
    const char *tenant = req->header(req, "x-scope-orgid");
    if (!tenant_id_valid(tenant, res->message, sizeof(res->message)))
        return status_error(res, answer, STATUS_UNAUTHENTICATED, 401);
    if (format < 0) {
        snprintf(res->message, sizeof(res->message),
                 "Content-Type \"%s\" is neither application/x-protobuf nor application/json",
                 req->content_type);
        return status_error(res, answer, STATUS_INVALID_ARGUMENT, 415);
    }
    struct profd_batch *b = host->batch_new();
    size_t rejected = 0;
    char why[256];
    if (!decode(r, req, answer, b, &rejected, why, sizeof(why), res)) {
        host->batch_unref(b);
        return;
    }
    if (rejected) {
        host->count(r->self, PROFD_C_REFUSED_RECORDS, rejected);
        host->log(r->self, PROFD_LOG_WARN, "refused %zu profiles of a request: %s", rejected,
                  why);
    }
    size_t n = b->nrecords;
    request_labels(host, tenant, b);
    if (n && host->emit(r->self, b) != PROFD_OK) {
        host->batch_unref(b);
        snprintf(res->message, sizeof(res->message), "the pipeline is full; retry later");
        return status_error(res, answer, STATUS_UNAVAILABLE, 503);
    }
    host->batch_unref(b);   /* emit counted what was accepted */
    export_response(res, rejected, why);
    if (answer == ANSWER_JSON) {
        size_t len;
        char *json = host->proto_to_json(PROFD_MSG_OTLP_RESPONSE, res->body, res->len, &len);
        free(res->body);
        res->body = (uint8_t *)json;
        res->len = len;
        res->content_type = "application/json";
    } else if (answer == ANSWER_PROTOBUF) {
        res->content_type = "application/x-protobuf";
    }
}

static int create(const struct profd_host *host, struct profd_component *self, const void *cfg,
                  void **out)
{
    struct otlp_receiver *r = calloc(1, sizeof(*r));
    if (!r)
        return PROFD_ERR;
    r->host = host;
    r->self = self;
    r->cfg = cfg;
    *out = r;
    return PROFD_OK;
}

static struct profd_server *serve(struct otlp_receiver *r, const struct endpoint_config *ep,
                                  enum profd_rpc_protocol protocol)
{
    struct profd_server_options o = {.endpoint = ep->endpoint, .protocol = protocol,
                                     .max_body = r->cfg->max_request_body_size};
    return serve_endpoint(r->host, r->self, o, &ep->tls, &r->cfg->limits, handle, r,
                          protocol == PROFD_RPC_GRPC ? "OTLP/gRPC" : "OTLP/HTTP");
}

static int start(void *st)
{
    struct otlp_receiver *r = st;
    const struct config *cfg = r->cfg;
    if (serving(cfg->protocols.grpc.endpoint) &&
        !(r->grpc = serve(r, &cfg->protocols.grpc, PROFD_RPC_GRPC)))
        return PROFD_ERR;
    if (serving(cfg->protocols.http.endpoint) &&
        !(r->http = serve(r, &cfg->protocols.http, PROFD_RPC_HTTP)))
        return PROFD_ERR;
    return PROFD_OK;
}

static int shutdown(void *st)
{
    struct otlp_receiver *r = st;
    r->host->server_stop(r->grpc);
    r->host->server_stop(r->http);
    r->grpc = r->http = NULL;
    return PROFD_OK;
}

static void destroy(void *st)
{
    if (st)
        shutdown(st);
    free(st);
}

static const struct profd_plugin plugin = {
    PROFD_PLUGIN_HEADER,
    .kind = PROFD_RECEIVER,
    .type = "otlp",
    .description = "OTLP profiles over gRPC and HTTP",
    .options = options,
    .config_size = sizeof(struct config),
    .validate = validate,
    .create = create,
    .start = start,
    .shutdown = shutdown,
    .destroy = destroy,
};

PROFD_PLUGIN_DEFINE(plugin)
