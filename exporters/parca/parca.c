// SPDX-License-Identifier: Apache-2.0
/*
 * exporter parca: records to a Parca server (or Polar Signals) with the
 * profile store's WriteRaw over gRPC: one RawProfileSeries per record, its
 * series labels (__name__ required, as Parca requires it; names made
 * valid and values valid UTF-8, as it refuses the whole request
 * otherwise), and the pprof re-encoded so its ids are 1..N in table order,
 * which Parca checks. The requests' tenant field holds the configured
 * tenant, else each record's __tenant_id__, one request a tenant.
 * Requests stay under max_message_size; gRPC messages are not compressed
 * (Parca does not register gzip), the gzip'd pprof inside is.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/client_auth.h"
#include "../../lib/client_tls.h"
#include "../../lib/grow.h"
#include "../../lib/label_valid.h"
#include "../../lib/raw_series.h"
#include "../../lib/rpc_client.h"
#include "../../lib/running_total.h"
#include "../../lib/tenant_id.h"
#include "../../lib/transport_labels.h"
#include "profd/plugin.h"

#define WRITE_RAW "/parca.profilestore.v1alpha1.ProfileStoreService/WriteRaw"

struct config {
    char *endpoint;
    struct client_auth auth;
    char *tenant;
    struct profd_str_map headers;
    int64_t timeout;
    uint64_t max_message_size;
    struct client_tls tls;
};

static const struct profd_option options[] = {
    {"endpoint", PROFD_OPT_STRING, offsetof(struct config, endpoint), "127.0.0.1:7070",
     "host:port or http(s)://host:port; https:// means TLS"},
    CLIENT_AUTH_OPTIONS(struct config, auth, "true"),
    {"tenant", PROFD_OPT_STRING, offsetof(struct config, tenant), NULL,
     "the requests' tenant field; unset: each profile's __tenant_id__, one request a tenant"},
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
    _Atomic size_t label_fixes;
};

static int validate(const struct profd_host *host, struct profd_diag *d, const void *cfgp)
{
    const struct config *cfg = cfgp;
    if (!cfg->endpoint || !*cfg->endpoint) {
        host->diag(d, &cfg->endpoint, "endpoint is empty");
        return PROFD_ERR;
    }
    char why[128];
    if (!tenant_id_valid(cfg->tenant, why, sizeof(why))) {
        host->diag(d, &cfg->tenant, "%s", why);
        return PROFD_ERR;
    }
    if (client_tls_validate(host, d, &cfg->tls, "tls: ") != PROFD_OK)
        return PROFD_ERR;
    return client_auth_validate(host, d, &cfg->auth, "");
}

static int send_request(struct parca_exporter *e, const struct pb_buf *req)
{
    struct rpc_result res;
    int rc = rpc_client_export(e->client, e->self, "WriteRaw", WRITE_RAW, NULL, req->p, req->len,
                               &res);
    free(res.body);
    return rc;
}

/* r's labels into out (empty) as Parca takes them, since one it refuses
 * fails the whole request: names made valid (__name__ as it is, its value
 * being the profile's name), values valid UTF-8; the fixes counted when
 * count is set. __delta__, Pyroscope's mark of what its server is to make
 * deltas of, and __tenant_id__, the X-Scope-OrgID of Grafana's stores,
 * mean nothing to Parca and are left out. */
static void clean_labels(struct parca_exporter *e, const struct profd_record *r,
                         struct profd_labels *out, bool count)
{
    size_t fixes = 0;
    for (size_t i = 0; i < r->labels.n; i++)
        if (!transport_label(r->labels.items[i].name))
            label_add_valid(e->host, out, r->labels.items[i].name, r->labels.items[i].value,
                            SIZE_MAX, SIZE_MAX, SIZE_MAX, &fixes);
    if (count)
        running_total_add(e->host, e->self, &e->label_fixes, fixes, "profd_parca_label_fixes",
                          "Series labels changed or dropped to pass Parca's validation.");
}

/* What consume makes of a batch before sending it: each record's labels as
 * Parca takes them, the tenant it goes as (NULL: none), and whether a
 * request of this call holds it already. */
struct outgoing {
    struct profd_batch *b;
    struct profd_labels *labels;
    const char **tenants;
    bool *taken;
};

/* Sends req, holding the records of o taken and not settled in
 * [first, end), and settles them as the answer says unless it asks for a
 * retry. */
static int send_and_settle(struct parca_exporter *e, const struct outgoing *o,
                           const struct pb_buf *req, size_t first, size_t end)
{
    int rc = send_request(e, req);
    for (size_t i = first; i < end && rc != PROFD_ERETRY; i++)
        if (o->taken[i] && !e->host->export_settled(e->self, i))
            e->host->export_settle(e->self, i, rc == PROFD_OK);
    return rc;
}

/* Sets o's labels and tenant for record i, the fixes counted when count is
 * set; settles it refused, and logs why, when it has no __name__ or names
 * a tenant that is no tenant ID (which a receiver of profd's would refuse
 * the whole request for). The tenant is the configured one, else the
 * record's __tenant_id__. */
static void prepare(struct parca_exporter *e, struct outgoing *o, size_t i, bool count)
{
    const struct profd_record *r = o->b->records[i];
    const char *named = e->host->record_label(r, TENANT_LABEL);
    const char *tenant = e->cfg->tenant && *e->cfg->tenant ? e->cfg->tenant : named;
    char why[128];
    clean_labels(e, r, &o->labels[i], count);
    o->tenants[i] = tenant && *tenant ? tenant : NULL;
    if (!e->host->labels_get(&o->labels[i], "__name__"))
        snprintf(why, sizeof(why), "a record without __name__ (Parca requires it)");
    else if (tenant_id_valid(o->tenants[i], why, sizeof(why)))
        return;
    e->host->export_settle(e->self, i, false);
    e->host->log(e->self, PROFD_LOG_WARN, "left out %s", why);
}

/* Sends the records not settled or taken from first on that go as
 * first's tenant, as requests of at most max_message_size: a series that
 * would pass it starts the next request. A request refused for good does
 * not stop the next; PROFD_ERETRY stops at the request that asked for it.
 * Records whose pprof cannot be written are left out (refused), and
 * logged. */
static int send_tenant(struct parca_exporter *e, struct outgoing *o, size_t first)
{
    struct pb_buf req = {0}, series = {0};
    const char *tenant = o->tenants[first];
    int rc = PROFD_OK;
    if (tenant)
        pb_buf_bytes(&req, 1, tenant, strlen(tenant));
    size_t head = req.len, from = first;   /* req holds the records taken in [from, i) */
    for (size_t i = first; i < o->b->nrecords && rc != PROFD_ERETRY; i++) {
        if (o->taken[i] || e->host->export_settled(e->self, i) ||
            !tenant_id_same(o->tenants[i], tenant))
            continue;
        char why[256];
        series.len = 0;
        if (!raw_series_write(e->host, o->b->records[i], &o->labels[i], RAW_LABEL_SET, true, 2,
                              &series, why, sizeof(why))) {
            e->host->export_settle(e->self, i, false);
            e->host->log(e->self, PROFD_LOG_WARN, "left out %s", why);
            continue;
        }
        if (req.len > head && req.len + series.len > e->cfg->max_message_size) {
            if ((rc = send_and_settle(e, o, &req, from, i)) == PROFD_ERETRY)
                break;
            req.len = head;
        }
        if (req.len == head)
            from = i;
        o->taken[i] = true;
        req.p = grow_array(req.p, &req.cap, req.len + series.len, 1);
        memcpy(req.p + req.len, series.p, series.len);
        req.len += series.len;
    }
    if (rc != PROFD_ERETRY && req.len > head)
        rc = send_and_settle(e, o, &req, from, o->b->nrecords);
    free(req.p);
    free(series.p);
    return rc;
}

/* One tenant after another, in the order their first records come; a
 * retry sends only the records not settled, so none twice. Label fixes
 * are counted on a batch's first try. */
static int consume(void *st, struct profd_batch *b)
{
    struct parca_exporter *e = st;
    size_t n = b->nrecords;
    struct outgoing o = {b, calloc(n + 1, sizeof(*o.labels)), calloc(n + 1, sizeof(*o.tenants)),
                         calloc(n + 1, sizeof(*o.taken))};
    if (!o.labels || !o.tenants || !o.taken)
        abort();
    bool count = e->host->export_attempt(e->self) == 0;
    for (size_t i = 0; i < n; i++)
        if (!e->host->export_settled(e->self, i))
            prepare(e, &o, i, count);
    int rc = PROFD_OK;
    for (size_t first = 0; first < n && rc != PROFD_ERETRY; first++)
        if (!o.taken[first] && !e->host->export_settled(e->self, first))
            rc = send_tenant(e, &o, first);
    for (size_t i = 0; i < n; i++)
        e->host->labels_clear(&o.labels[i]);
    free(o.labels);
    free(o.tenants);
    free(o.taken);
    return rc == PROFD_ERETRY ? rc : PROFD_OK;
}

static int create(const struct profd_host *host, struct profd_component *self, const void *cfgp,
                  void **out)
{
    const struct config *cfg = cfgp;
    struct rpc_client *client = rpc_client_new(host, self, &(struct rpc_client_options){
        .url = cfg->endpoint,
        .protocol = PROFD_RPC_GRPC,
        .headers = &cfg->headers,
        .tls = &cfg->tls,
        .auth = &cfg->auth,
        .timeout = cfg->timeout,
    });
    if (!client)
        return PROFD_ERR;
    struct parca_exporter *e = must_malloc(sizeof(*e));
    *e = (struct parca_exporter){.host = host, .self = self, .cfg = cfg, .client = client};
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
    .validate = validate,
    .create = create,
    .consume = consume,
    .destroy = destroy,
    .flags = PROFD_PLUGIN_MERGES_BATCHES,
};

PROFD_PLUGIN_DEFINE(plugin)
