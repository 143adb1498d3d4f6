// SPDX-License-Identifier: Apache-2.0
/*
 * receiver parca: what Parca Agent pushes, Parca's profile store
 * WriteRaw over gRPC (h2c or TLS), and its HTTP gateway's JSON form
 * (POST /profiles/writeraw over HTTP/1.1 or HTTP/2), on one port as Parca
 * serves them. Every raw sample of every series is one record holding
 * the pprof as sent, with the series' labels; a request is accepted whole
 * or refused whole, with the status Parca answers with (INVALID_ARGUMENT
 * for a series without __name__, a bad label name, or a sample that is not
 * pprof). A request marked normalized has its addresses made runtime
 * addresses again (address + mapping start - file offset), which is what
 * pprof and the symbolize processor expect. A tenant, named by the
 * X-Scope-OrgID header or else by the request's deprecated tenant field,
 * is kept on every record as __tenant_id__, as the pyroscope and otlp
 * receivers keep theirs (Parca itself has none to keep it for).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/grow.h"
#include "../../lib/json_escape.h"
#include "../../lib/pb_reader.h"
#include "../../lib/raw_series.h"
#include "../../lib/serve.h"
#include "../../lib/server_auth.h"
#include "../../lib/tenant_id.h"
#include "profd/plugin.h"

#define WRITE_RAW "/parca.profilestore.v1alpha1.ProfileStoreService/WriteRaw"
#define GATEWAY_WRITE_RAW "/profiles/writeraw"

enum { S_INVALID_ARGUMENT = 3, S_UNIMPLEMENTED = 12, S_UNAVAILABLE = 14, S_UNAUTHENTICATED = 16 };

struct config {
    char *endpoint;
    struct server_tls tls;
    uint64_t max_message_size;
    struct serve_limits limits;
    struct server_auth auth;
};

static const struct profd_option options[] = {
    {"endpoint", PROFD_OPT_STRING, offsetof(struct config, endpoint), "127.0.0.1:7070",
     "host:port for WriteRaw over gRPC and the gateway's JSON over HTTP/1.1 and HTTP/2 "
     "(Parca's port)"},
    {"tls", PROFD_OPT_OBJECT, offsetof(struct config, tls), NULL, "TLS settings",
     server_tls_options},
    {"max_message_size", PROFD_OPT_SIZE, offsetof(struct config, max_message_size), "64MiB",
     "largest request accepted, counted after decompression (Parca's own limit)"},
    SERVE_LIMITS_OPTIONS(offsetof(struct config, limits)),
    SERVER_AUTH_OPTIONS(offsetof(struct config, auth)),
    {0},
};

static const struct config *cfg_of(const struct served_receiver *r)
{
    return r->cfg;
}

static int validate(const struct profd_host *host, struct profd_diag *d, const void *cfgp)
{
    const struct config *cfg = cfgp;
    return serve_validate(host, d, &cfg->tls, &cfg->limits, cfg->max_message_size,
                          "max_message_size");
}

/* Addresses that came normalized (relative to their object file) made
 * runtime addresses again, as pprof has them, for records first.. of b. */
static void denormalize(const struct profd_host *host, struct profd_batch *b, size_t first)
{
    char err[256];
    for (size_t i = first; i < b->nrecords; i++) {
        struct profd_profile *p = host->record_profile(b->records[i], err, sizeof(err));
        for (uint32_t l = 0; p && l < p->nlocations; l++) {
            struct profd_location *loc = &p->locations[l];
            if (!loc->mapping || loc->mapping > p->nmappings)
                continue;
            const struct profd_mapping *m = &p->mappings[loc->mapping - 1];
            if (m->memory_start)
                loc->address += m->memory_start - m->file_offset;
        }
        host->record_touch(b->records[i]);
    }
}

/* The tenant of a request: its header's, else its tenant field's (len
 * bytes at field, NULL for none), malloc'd, NULL when there is none. 0,
 * or INVALID_ARGUMENT with why in message when it is no tenant ID. */
static int request_tenant(const char *header, const uint8_t *field, size_t len, char **tenant,
                          char *message, size_t message_len)
{
    *tenant = NULL;
    if (header && *header) {
        *tenant = must_strdup(header);
    } else if (field && len) {
        if (memchr(field, 0, len)) {
            snprintf(message, message_len, "tenant: tenant ID contains unsupported byte 0x00");
            return S_INVALID_ARGUMENT;
        }
        *tenant = must_malloc(len + 1);
        memcpy(*tenant, field, len);
        (*tenant)[len] = '\0';
    }
    char why[128];
    if (*tenant && !tenant_id_valid(*tenant, why, sizeof(why))) {
        snprintf(message, message_len, "tenant: %s", why);
        free(*tenant);
        *tenant = NULL;
        return S_INVALID_ARGUMENT;
    }
    return 0;
}

/* A WriteRawRequest into b, no profile inflating past max_decoded, each
 * record given the tenant the header (NULL: none) or else the request
 * names: 0, or the gRPC status with why in message. */
static int write_raw(const struct profd_host *host, const uint8_t *body, size_t len,
                     const char *tenant_header, size_t max_decoded, struct profd_batch *b,
                     char *message, size_t message_len)
{
    struct pb_reader rd;
    struct pb_field f = {0};
    const char *err = NULL;
    int rc;
    size_t series = 0;
    bool normalized = false;
    const uint8_t *tenant_field = NULL;
    size_t tenant_len = 0;
    pb_reader_init(&rd, body, body, len);
    while ((rc = pb_next(&rd, &f, &err)) > 0) {
        if (f.number == 1 && f.wire == PB_LEN) {
            tenant_field = f.data;
            tenant_len = f.len;
        }
        if (f.number == 3 && f.wire == PB_VARINT)
            normalized = f.value != 0;
        if (f.number == 2 && f.wire == PB_LEN &&
            !raw_series_read(host, f.data, f.len, RAW_LABEL_SET, true, series++, max_decoded, b,
                             message, message_len))
            return S_INVALID_ARGUMENT;
    }
    if (rc < 0) {
        snprintf(message, message_len, "WriteRawRequest: %s at byte %zu", err, f.offset);
        return S_INVALID_ARGUMENT;
    }
    char *tenant;
    int code = request_tenant(tenant_header, tenant_field, tenant_len, &tenant, message,
                              message_len);
    if (code)
        return code;
    for (size_t i = 0; tenant && i < b->nrecords; i++)
        host->record_set_label(b->records[i], TENANT_LABEL, tenant);
    free(tenant);
    if (normalized)
        denormalize(host, b, 0);
    return 0;
}

/* The HTTP status grpc-gateway answers a gRPC status with. */
static int http_status_of(int code)
{
    switch (code) {
    case 0: return 200;
    case S_INVALID_ARGUMENT: return 400;
    case S_UNIMPLEMENTED: return 404;
    case S_UNAVAILABLE: return 503;
    case S_UNAUTHENTICATED: return 401;
    default: return 500;
    }
}

/* gRPC: the status and message; the HTTP gateway: its status and its JSON
 * body ({} or {"code": ..., "message": ...}). */
static void answer(const struct profd_rpc_request *req, struct profd_rpc_response *res, int code)
{
    if (req->protocol == PROFD_RPC_GRPC) {
        res->grpc_status = code;
        return;
    }
    res->http_status = http_status_of(code);
    res->content_type = "application/json";
    if (!code) {
        res->body = (uint8_t *)must_asprintf("{}");
    } else {
        char *msg = json_escape(res->message);
        res->body = (uint8_t *)must_asprintf("{\"code\":%d,\"message\":\"%s\",\"details\":[]}",
                                             code, msg);
        free(msg);
    }
    res->len = strlen((char *)res->body);
}

static void handle(void *arg, const struct profd_rpc_request *req, struct profd_rpc_response *res)
{
    struct served_receiver *r = arg;
    const struct profd_host *host = r->host;
    bool grpc = req->protocol == PROFD_RPC_GRPC;
    if (strcmp(req->path, grpc ? WRITE_RAW : GATEWAY_WRITE_RAW) != 0) {
        snprintf(res->message, sizeof(res->message), "unknown method %.100s", req->path);
        return answer(req, res, S_UNIMPLEMENTED);
    }
    if (!server_authorized(&cfg_of(r)->auth, req)) {
        snprintf(res->message, sizeof(res->message), "missing or wrong credentials");
        return answer(req, res, S_UNAUTHENTICATED);
    }
    const uint8_t *body = req->body;
    size_t len = req->len;
    uint8_t *proto = NULL;
    if (!grpc && host->json_to_proto(PROFD_MSG_WRITERAW_REQUEST, (const char *)req->body,
                                     req->len, &proto, &len, res->message,
                                     sizeof(res->message)) != 0)
        return answer(req, res, S_INVALID_ARGUMENT);
    if (proto)
        body = proto;
    struct profd_batch *b = host->batch_new();
    int code = write_raw(host, body, len, req->header(req, "x-scope-orgid"),
                         cfg_of(r)->max_message_size, b, res->message, sizeof(res->message));
    if (!code && b->nrecords && host->emit(r->self, b) != PROFD_OK) {
        snprintf(res->message, sizeof(res->message), "the pipeline is full; retry later");
        code = S_UNAVAILABLE;
    }
    host->batch_unref(b);
    free(proto);
    answer(req, res, code);
}

static int start(void *st)
{
    struct served_receiver *r = st;
    const struct config *cfg = cfg_of(r);
    struct profd_server_options o = {.endpoint = cfg->endpoint, .protocol = PROFD_RPC_HTTP,
                                     .max_body = cfg->max_message_size};
    r->server = serve_endpoint(r->host, r->self, o, &cfg->tls, &cfg->limits, handle, r,
                               "Parca WriteRaw (gRPC, and the gateway's JSON)");
    return r->server ? PROFD_OK : PROFD_ERR;
}

static const struct profd_plugin plugin = {
    PROFD_PLUGIN_HEADER,
    .kind = PROFD_RECEIVER,
    .type = "parca",
    .description = "Parca's WriteRaw over gRPC and its HTTP gateway, as Parca Agent pushes",
    .options = options,
    .config_size = sizeof(struct config),
    .validate = validate,
    .create = served_receiver_create,
    .start = start,
    .shutdown = served_receiver_shutdown,
    .destroy = served_receiver_destroy,
};

PROFD_PLUGIN_DEFINE(plugin)
