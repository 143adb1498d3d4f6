// SPDX-License-Identifier: Apache-2.0
/*
 * receiver parca: what Parca Agent pushes, Parca's profile store
 * WriteRaw over gRPC (h2c or TLS). Every raw sample of every series is one
 * record holding the pprof as sent, with the series' labels; a request is
 * accepted whole or refused whole, with the status Parca answers with
 * (INVALID_ARGUMENT for a series without __name__, a bad label name, or a
 * sample that is not pprof).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/pb_reader.h"
#include "../../lib/raw_series.h"
#include "../../lib/serve.h"
#include "profd/plugin.h"

#define WRITE_RAW "/parca.profilestore.v1alpha1.ProfileStoreService/WriteRaw"

enum { S_INVALID_ARGUMENT = 3, S_UNIMPLEMENTED = 12, S_UNAVAILABLE = 14, S_UNAUTHENTICATED = 16 };

struct config {
    char *endpoint;
    struct server_tls tls;
    uint64_t max_message_size;
    char *bearer_token;
};

static const struct profd_option options[] = {
    {"endpoint", PROFD_OPT_STRING, offsetof(struct config, endpoint), "127.0.0.1:7070",
     "host:port to listen on for gRPC (Parca's port)"},
    {"tls", PROFD_OPT_OBJECT, offsetof(struct config, tls), NULL, "TLS settings",
     server_tls_options},
    {"max_message_size", PROFD_OPT_SIZE, offsetof(struct config, max_message_size), "64MiB",
     "largest request accepted, counted after decompression (Parca's own limit)"},
    {"bearer_token", PROFD_OPT_STRING, offsetof(struct config, bearer_token), NULL,
     "when set, requests must carry \"authorization: Bearer <token>\""},
    {0},
};

struct parca_receiver {
    const struct profd_host *host;
    struct profd_component *self;
    const struct config *cfg;
    struct profd_server *server;
};

static int validate(const struct profd_host *host, struct profd_diag *d, const void *cfgp)
{
    const struct config *cfg = cfgp;
    if (server_tls_half(&cfg->tls)) {
        host->diag(d, &cfg->tls, "TLS needs both cert_file and key_file");
        return PROFD_ERR;
    }
    return PROFD_OK;
}

static void handle(void *arg, const struct profd_rpc_request *req, struct profd_rpc_response *res)
{
    struct parca_receiver *r = arg;
    const struct profd_host *host = r->host;
    if (strcmp(req->path, WRITE_RAW) != 0) {
        snprintf(res->message, sizeof(res->message), "unknown method %s", req->path);
        res->grpc_status = S_UNIMPLEMENTED;
        return;
    }
    const char *token = r->cfg->bearer_token, *auth = req->header(req, "authorization");
    if (token && *token && (!auth || strncmp(auth, "Bearer ", 7) || strcmp(auth + 7, token))) {
        snprintf(res->message, sizeof(res->message), "missing or wrong bearer token");
        res->grpc_status = S_UNAUTHENTICATED;
        return;
    }
    struct profd_batch *b = host->batch_new();
    struct pb_reader rd;
    struct pb_field f = {0};
    const char *err = NULL;
    int rc;
    size_t series = 0;
    bool ok = true;
    pb_reader_init(&rd, req->body, req->body, req->len);
    while (ok && (rc = pb_next(&rd, &f, &err)) > 0)
        if (f.number == 2 && f.wire == PB_LEN)
            ok = raw_series_read(host, f.data, f.len, RAW_LABEL_SET, true, series++, b,
                                 res->message, sizeof(res->message));
    if (ok && rc < 0) {
        snprintf(res->message, sizeof(res->message), "WriteRawRequest: %s at byte %zu", err,
                 f.offset);
        ok = false;
    }
    if (ok && b->nrecords && host->emit(r->self, b) != PROFD_OK) {
        snprintf(res->message, sizeof(res->message), "the pipeline is full; retry later");
        res->grpc_status = S_UNAVAILABLE;
    } else if (!ok) {
        res->grpc_status = S_INVALID_ARGUMENT;
    }
    host->batch_unref(b);
}

static int create(const struct profd_host *host, struct profd_component *self, const void *cfg,
                  void **out)
{
    struct parca_receiver *r = calloc(1, sizeof(*r));
    if (!r)
        return PROFD_ERR;
    *r = (struct parca_receiver){host, self, cfg, NULL};
    *out = r;
    return PROFD_OK;
}

static int start(void *st)
{
    struct parca_receiver *r = st;
    const struct config *cfg = r->cfg;
    r->server = serve_endpoint(r->host, r->self, cfg->endpoint, PROFD_RPC_GRPC, &cfg->tls,
                               cfg->max_message_size, handle, r, "Parca WriteRaw (gRPC)");
    return r->server ? PROFD_OK : PROFD_ERR;
}

static int shutdown(void *st)
{
    struct parca_receiver *r = st;
    r->host->server_stop(r->server);
    r->server = NULL;
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
    .type = "parca",
    .description = "Parca's WriteRaw over gRPC, as Parca Agent pushes",
    .options = options,
    .config_size = sizeof(struct config),
    .validate = validate,
    .create = create,
    .start = start,
    .shutdown = shutdown,
    .destroy = destroy,
};

PROFD_PLUGIN_DEFINE(plugin)
