// SPDX-License-Identifier: Apache-2.0
/*
 * receiver pyroscope: what Pyroscope's SDKs and eBPF agents push.
 * - push.v1 (`/push.v1.PusherService/Push`): Connect unary (application/proto
 *   or application/json) over HTTP/1.1 or HTTP/2, and gRPC, all on
 *   `endpoint` as on Pyroscope's own port; each raw sample of each series
 *   is a record with the series' labels.
 * - The legacy `POST /ingest` (and `/pyroscope/ingest`): `name`
 *   (`app.cpu{k=v,...}`), `from`, `until`, `sampleRate`, `units`, `spyName`
 *   (the label pyroscope_spy), `format` pprof (raw or gzip body, or the
 *   SDKs' multipart form with `profile`, `prev_profile` and
 *   `sample_type_config`), folded stacks (`folded`, the default, or
 *   `groups`: "stack count" a line), `lines` (a stack a line), `trie` and
 *   `tree` (older agents', trie_tree.h), `jfr` (a Java Flight Recorder
 *   recording, jfr.h) or `speedscope` (speedscope.h), read as
 *   Pyroscope reads them (ingest_query.h; a pprof keeps its own time when
 *   it has one); `aggregationType` changes nothing here, as it changes
 *   nothing in Pyroscope's conversion.
 * service_name defaults to unknown_service and the tenant (X-Scope-OrgID)
 * is kept as the label __tenant_id__, as Pyroscope does; /ingest's records
 * get __delta__="false" as Pyroscope's own ingest path gives them, and
 * push.v1's keep the __delta__ they were sent with. Errors answer with
 * Pyroscope's statuses: 400 bad metadata or request, 401 bad credentials or
 * tenant ID, 413 too large (the server), 422 a body that cannot be
 * converted, 429 when the pipeline is full.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "../../lib/clock.h"
#include "../../lib/grow.h"
#include "../../lib/json_escape.h"
#include "../../lib/label_valid.h"
#include "../../lib/pb_reader.h"
#include "../../lib/profile_family.h"
#include "../../lib/raw_series.h"
#include "../../lib/serve.h"
#include "../../lib/server_auth.h"
#include "../../lib/transport_labels.h"
#include "../../lib/utf8_valid.h"
#include "folded.h"
#include "ingest_query.h"
#include "jfr.h"
#include "multipart.h"
#include "profd/plugin.h"
#include "speedscope.h"
#include "trie_tree.h"

#define PUSH "/push.v1.PusherService/Push"

struct config {
    char *endpoint;
    struct server_tls tls;
    uint64_t max_request_body_size;
    struct serve_limits limits;
    struct server_auth auth;
};

static const struct profd_option options[] = {
    {"endpoint", PROFD_OPT_STRING, offsetof(struct config, endpoint), "127.0.0.1:4040",
     "host:port to listen on: /ingest, push.v1 over Connect (HTTP/1.1 or HTTP/2) and gRPC"},
    {"tls", PROFD_OPT_OBJECT, offsetof(struct config, tls), NULL, "TLS settings",
     server_tls_options},
    {"max_request_body_size", PROFD_OPT_SIZE, offsetof(struct config, max_request_body_size),
     "64MiB", "largest request accepted, counted after decompression"},
    SERVE_LIMITS_OPTIONS(offsetof(struct config, limits)),
    SERVER_AUTH_OPTIONS(offsetof(struct config, auth)),
    {0},
};

enum { C_INVALID_ARGUMENT = 3, C_RESOURCE_EXHAUSTED = 8, C_UNIMPLEMENTED = 12,
       C_UNAUTHENTICATED = 16 };

static const struct config *cfg_of(const struct served_receiver *r)
{
    return r->cfg;
}

static int validate(const struct profd_host *host, struct profd_diag *d, const void *cfgp)
{
    const struct config *cfg = cfgp;
    return serve_validate(host, d, &cfg->tls, &cfg->limits, cfg->max_request_body_size,
                          "max_request_body_size");
}

/* An error: a gRPC status, or an HTTP status with a Connect error body
 * (push) or the message as text (/ingest). */
static void fail(const struct profd_rpc_request *req, struct profd_rpc_response *res, int code,
                 const char *connect_code, int http_status, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static void fail(const struct profd_rpc_request *req, struct profd_rpc_response *res, int code,
                 const char *connect_code, int http_status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->message, sizeof(res->message), fmt, ap);
    va_end(ap);
    if (req->protocol == PROFD_RPC_GRPC) {
        res->grpc_status = code;
        return;
    }
    res->http_status = http_status;
    if (strcmp(req->path, PUSH) != 0) {
        res->content_type = "text/plain";
        res->body = (uint8_t *)must_asprintf("%s\n", res->message);
        res->len = strlen((char *)res->body);
        return;
    }
    char *escaped = json_escape(res->message);
    res->content_type = "application/json";
    res->body = (uint8_t *)must_asprintf("{\"code\":\"%s\",\"message\":\"%s\"}", connect_code,
                                         escaped);
    res->len = strlen((char *)res->body);
    free(escaped);
}

/* Sets the labels every record of b gets from the request: its tenant
 * (NULL when it named none), and service_name's default. */
static void request_labels(const struct profd_host *host, const char *tenant,
                           struct profd_batch *b)
{
    for (size_t i = 0; i < b->nrecords; i++) {
        struct profd_record *r = b->records[i];
        if (!host->record_label(r, "service_name"))
            host->record_set_label(r, "service_name", "unknown_service");
        if (tenant && *tenant)
            host->record_set_label(r, TENANT_LABEL, tenant);
    }
}

/* Whether a Content-Type is type, parameters aside. */
static bool is_type(const char *content_type, const char *type)
{
    size_t n = strlen(type);
    return !strncasecmp(content_type, type, n) && (!content_type[n] || content_type[n] == ';');
}

/* The series of a PushRequest into b, no profile inflating past
 * max_decoded; false with why set. */
static bool push_series(const struct profd_host *host, const uint8_t *body, size_t len,
                        size_t max_decoded, struct profd_batch *b, char *why, size_t whylen)
{
    struct pb_reader rd;
    struct pb_field f = {0};
    const char *err = NULL;
    int rc;
    size_t n = 0;
    pb_reader_init(&rd, body, body, len);
    while ((rc = pb_next(&rd, &f, &err)) > 0)
        if (f.number == 1 && f.wire == PB_LEN &&
            !raw_series_read(host, f.data, f.len, RAW_LABEL_PAIRS, false, n++, max_decoded, b, why,
                             whylen))
            return false;
    if (rc < 0)
        snprintf(why, whylen, "PushRequest: %s at byte %zu", err, f.offset);
    return rc == 0;
}

static void push(struct served_receiver *r, const struct profd_rpc_request *req,
                 struct profd_rpc_response *res, struct profd_batch *b)
{
    bool http = req->protocol == PROFD_RPC_HTTP;
    bool json = http && is_type(req->content_type, "application/json");
    if (http && !json && !is_type(req->content_type, "application/proto"))
        return fail(req, res, C_UNIMPLEMENTED, "unimplemented", 415,
                    "content type \"%.60s\" is neither application/proto nor application/json",
                    req->content_type);
    const uint8_t *body = req->body;
    size_t len = req->len;
    uint8_t *proto = NULL;
    char why[sizeof(res->message)];
    if (json && r->host->json_to_proto(PROFD_MSG_PUSH_REQUEST, (const char *)body, len, &proto,
                                       &len, why, sizeof(why)) != 0)
        return fail(req, res, C_INVALID_ARGUMENT, "invalid_argument", 400, "PushRequest: %s",
                    why);
    bool ok = push_series(r->host, proto ? proto : body, len,
                          cfg_of(r)->max_request_body_size, b, why, sizeof(why));
    free(proto);
    if (!ok)
        return fail(req, res, C_INVALID_ARGUMENT, "invalid_argument", 400, "%s", why);
    if (json) {   /* PushResponse is empty */
        res->content_type = "application/json";
        res->body = (uint8_t *)must_asprintf("{}");
        res->len = 2;
    } else if (http) {
        res->content_type = "application/proto";
    }
}

/* The profile family of a legacy name suffix or units value (pass 0
 * suffixes, then units), or NULL. */
static const char *family_of(const char *word)
{
    static const char *const map[][2] = {
        {"cpu", "process_cpu"},      {"itimer", "process_cpu"},   {"wall", "wall"},
        {"alloc_objects", "memory"}, {"alloc_space", "memory"},   {"inuse_objects", "memory"},
        {"inuse_space", "memory"},   {"goroutines", "goroutine"}, {"mutex_count", "mutex"},
        {"mutex_duration", "mutex"}, {"block_count", "block"},    {"block_duration", "block"},
        {"samples", "process_cpu"},  {"objects", "memory"},       {"bytes", "memory"},
        {"lock_nanoseconds", "mutex"}, {"lock_samples", "mutex"},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(*map); i++)
        if (!strcmp(word, map[i][0]))
            return map[i][1];
    return NULL;
}

/* The application of name=app.type{...} into app (n bytes, cut to fit),
 * less the type suffix it ends with when family_of knows it: then that
 * suffix's family, else NULL. */
static const char *split_name(const char *name, char *app, size_t n)
{
    size_t len = strcspn(name, "{");
    if (len >= n)
        len = n - 1;
    memcpy(app, name, len);
    app[len] = '\0';
    char *dot = strrchr(app, '.');
    const char *fam = dot ? family_of(dot + 1) : NULL;
    if (fam)
        *dot = '\0';   /* a known type suffix is not part of the service name */
    return fam;
}

/* Whether the braces of name=app.type{k=v,...} set __name__. */
static bool braces_name_it(const char *name)
{
    for (const char *p = strchr(name, '{'); p; p = strchr(p + 1, ','))
        if (!strncmp(p + 1, "__name__=", 9))
            return true;
    return false;
}

/* What an /ingest says of its profile: its name (the application, less a
 * type suffix family_of knows, and that suffix's family or NULL), units,
 * and whether its records' types tell their family (a pprof's, a
 * speedscope file's): those read as a pprof was checked (types), or else
 * those of the record's model. */
struct ingest_what {
    const char *name, *units;
    char app[RAW_MAX_LABEL_VALUE + 1];   /* service_name's value */
    const char *family;
    bool typed;
    const struct profd_type_names *types;
};

/* The family of each record of b that has no __name__ yet: from its types
 * when they tell it (the application as the hint), folded stacks' from
 * units. */
static void family_labels(const struct profd_host *host, struct profd_batch *b,
                          const struct ingest_what *w)
{
    for (size_t i = 0; i < b->nrecords; i++) {
        struct profd_record *r = b->records[i];
        if (host->record_label(r, "__name__"))
            continue;
        char buf[PROFD_TYPE_NAME_SIZE], err[64];
        struct profd_type_names own;
        const struct profd_type_names *types = w->types;
        if (w->typed && !types && host->record_type_names(r, &own, err, sizeof(err)) == 0)
            types = &own;   /* a multipart upload's or a speedscope's, from its model */
        const char *fam = types ? profile_family_of_types(types, w->app, buf, sizeof(buf))
                                : family_of(w->units);
        host->record_set_label(r, "__name__", fam ? fam : "process_cpu");
    }
}

/* The labels in the name's braces on every record of b: in the first pass
 * those named without a dot (also kept in *undotted), in the second the
 * dotted ones, their dots made underscores as Pyroscope's distributor makes
 * them (a name so made that *undotted holds must have the same value there;
 * of the same name given twice, as of the same dotted name, the last is
 * kept, as Pyroscope reads the name). False with why set for a bad label. */
static bool brace_labels(const struct profd_host *host, const char *braces, bool dotted_pass,
                         struct profd_labels *undotted, struct profd_batch *b, char *why,
                         size_t whylen)
{
    for (const char *p = braces; *p && *p != '}';) {
        size_t len = strcspn(p, ",}");
        const char *eq = memchr(p, '=', len);
        if (!eq) {
            snprintf(why, whylen, "name: bad label \"%.*s\" (not key=value)",
                     (int)(len < 64 ? len : 64), p);
            return false;
        }
        size_t klen = (size_t)(eq - p), vlen = len - klen - 1;
        const char *next = p + len + (p[len] == ',');
        if ((memchr(p, '.', klen) != NULL) != dotted_pass) {
            p = next;
            continue;
        }
        int shown = (int)(klen < 64 ? klen : 64);
        char key[RAW_MAX_LABEL_NAME + 1], val[RAW_MAX_LABEL_VALUE + 1];
        if (klen > RAW_MAX_LABEL_NAME || vlen > RAW_MAX_LABEL_VALUE) {
            snprintf(why, whylen, "name: label \"%.*s\": %s over %d bytes", shown, p,
                     klen > RAW_MAX_LABEL_NAME ? "name" : "value",
                     klen > RAW_MAX_LABEL_NAME ? RAW_MAX_LABEL_NAME : RAW_MAX_LABEL_VALUE);
            return false;
        }
        if (!label_name_undotted(p, klen, key)) {
            snprintf(why, whylen, "name: invalid label name \"%.*s\"", shown, p);
            return false;
        }
        memcpy(val, eq + 1, vlen);
        val[vlen] = '\0';
        const char *given = host->labels_get(undotted, key);
        if (dotted_pass && given && strcmp(given, val)) {
            snprintf(why, whylen, "name: duplicate label name \"%.64s\"", key);
            return false;
        }
        if (!dotted_pass)
            host->labels_set(undotted, key, val);
        for (size_t i = 0; i < b->nrecords; i++)
            host->record_set_label(b->records[i], key, val);
        p = next;
    }
    return true;
}

/* The labels in the name's braces (see brace_labels), service_name (the
 * application; when the braces name a service_name too, the application
 * goes to app_name, as Pyroscope has it) and __name__ (from the type
 * suffix, else see family_labels), on every record of b. False with why set
 * for a bad label. */
static bool name_labels(const struct profd_host *host, const struct ingest_what *w,
                        struct profd_batch *b, char *why, size_t whylen)
{
    size_t n = strcspn(w->name, "{");
    const char *braces = w->name + n + (w->name[n] == '{');
    struct profd_labels undotted = {0};
    bool ok = brace_labels(host, braces, false, &undotted, b, why, whylen) &&
              brace_labels(host, braces, true, &undotted, b, why, whylen);
    host->labels_clear(&undotted);
    if (!ok)
        return false;
    for (size_t i = 0; i < b->nrecords; i++) {
        struct profd_record *r = b->records[i];
        bool named = host->record_label(r, "service_name");
        if (!named || !host->record_label(r, "app_name"))
            host->record_set_label(r, named ? "app_name" : "service_name", w->app);
        if (w->family && !host->record_label(r, "__name__"))
            host->record_set_label(r, "__name__", w->family);
    }
    family_labels(host, b, w);
    return true;
}

/* The first day of 1971, in nanoseconds: a profile time before it is none
 * (old pyspy and rbspy wrote microseconds there). */
#define TIME_1971 (365LL * 86400 * 1000000000)

/* A pprof or a JFR recording keeps the time and duration it says, as
 * Pyroscope keeps them, unless it says none; folded stacks and those take
 * from and until. */
static void ingest_times(struct profd_record *r, bool timed_body, int64_t from, int64_t until)
{
    if (timed_body && r->time_nanos >= TIME_1971) {
        if (!r->duration_nanos)
            r->duration_nanos = until - from;
        return;
    }
    r->time_nanos = from;
    r->duration_nanos = until - from;
}

/* What an /ingest body is. */
enum ingest_format {
    FORMAT_FOLDED,        /* "stack count" lines: folded, groups, or no format */
    FORMAT_LINES,         /* a stack a line, each counted once */
    FORMAT_PPROF,         /* a pprof, gzip'd or not */
    FORMAT_MULTIPART,     /* the SDKs' form with a pprof in it */
    FORMAT_JFR,           /* a JFR recording, or pyroscope-java's form with one */
    FORMAT_TRIE,          /* older agents' serialized trie */
    FORMAT_TREE,          /* older agents' serialized tree */
    FORMAT_SPEEDSCOPE,    /* a speedscope file (JSON) */
    FORMAT_UNSUPPORTED,   /* a name no client sends */
};

/* The body's format from the format parameter and the Content-Type, in the
 * order Pyroscope reads them: the named formats, then a multipart form
 * (with any other name; with pprof too, as SDKs send it), then the default,
 * documented as folded. A name Pyroscope does not know is refused rather
 * than read as folded stacks. */
static enum ingest_format ingest_format(const char *format, const char *content_type)
{
    if (!strcmp(format, "trie") || is_type(content_type, "binary/octet-stream+trie"))
        return FORMAT_TRIE;
    if (!strcmp(format, "tree") || is_type(content_type, "binary/octet-stream+tree"))
        return FORMAT_TREE;
    if (!strcmp(format, "lines"))
        return FORMAT_LINES;
    if (!strcmp(format, "jfr"))
        return FORMAT_JFR;
    if (!strcmp(format, "speedscope"))
        return FORMAT_SPEEDSCOPE;
    if (!strncasecmp(content_type, "multipart/form-data", 19))
        return FORMAT_MULTIPART;
    if (!strcmp(format, "pprof"))
        return FORMAT_PPROF;
    if (!*format || !strcmp(format, "folded") || !strcmp(format, "groups"))
        return FORMAT_FOLDED;
    return FORMAT_UNSUPPORTED;
}

static void ingest(struct served_receiver *r, const struct profd_rpc_request *req,
                   struct profd_rpc_response *res, struct profd_batch *b)
{
    const struct profd_host *host = r->host;
    char name[INGEST_MAX_NAME + 1], format[32] = "", units[32];
    char spy[RAW_MAX_LABEL_VALUE + 1] = "";   /* the label pyroscope_spy's value */
    long name_len = ingest_query_param(req->query, "name", name, sizeof(name));
    if (name_len <= 0)
        return fail(req, res, C_INVALID_ARGUMENT, "", 400, "the name parameter is missing");
    if (name_len > INGEST_MAX_NAME)
        return fail(req, res, C_INVALID_ARGUMENT, "", 400, "the name parameter is over %d bytes",
                    INGEST_MAX_NAME);
    if (!utf8_is_valid(name, strlen(name)))   /* label names and values, as Pyroscope checks */
        return fail(req, res, C_INVALID_ARGUMENT, "", 400, "name: not valid UTF-8");
    if (strcspn(name, "{") > RAW_MAX_LABEL_VALUE)
        return fail(req, res, C_INVALID_ARGUMENT, "", 400, "name: the application name is over "
                    "%d bytes", RAW_MAX_LABEL_VALUE);
    ingest_query_param(req->query, "format", format, sizeof(format));
    enum ingest_format kind = ingest_format(format, req->content_type);
    if (kind == FORMAT_UNSUPPORTED)
        return fail(req, res, C_INVALID_ARGUMENT, "", 415, "%s \"%.60s\" is not supported "
                    "(pprof, jfr, speedscope, folded or groups, lines, trie, tree)",
                    *format ? "format" : "Content-Type",
                    *format ? format : req->content_type);
    if (ingest_query_param(req->query, "spyName", spy, sizeof(spy)) > RAW_MAX_LABEL_VALUE)
        return fail(req, res, C_INVALID_ARGUMENT, "", 400, "spyName is over %d bytes",
                    RAW_MAX_LABEL_VALUE);
    if (!utf8_is_valid(spy, strlen(spy)))
        return fail(req, res, C_INVALID_ARGUMENT, "", 400, "spyName: not valid UTF-8");
    ingest_units(req->query, units, sizeof(units));
    int64_t now = realtime_ns(), from, until;
    if (!ingest_time(req->query, "from", now, &from))
        return fail(req, res, C_INVALID_ARGUMENT, "", 400, "from is out of range");
    if (!ingest_time(req->query, "until", now, &until))
        return fail(req, res, C_INVALID_ARGUMENT, "", 400, "until is out of range");
    if (from > until)
        return fail(req, res, C_INVALID_ARGUMENT, "", 400, "from is after until");
    char why[sizeof(res->message)];
    struct profd_type_names types;
    bool pprof = kind == FORMAT_PPROF || kind == FORMAT_MULTIPART;
    struct ingest_what w = {.name = name, .units = units,
                            .typed = pprof || kind == FORMAT_SPEEDSCOPE};
    w.family = split_name(name, w.app, sizeof(w.app));
    size_t max = cfg_of(r)->max_request_body_size;
    if (kind == FORMAT_MULTIPART) {
        if (!multipart_record(host, req->content_type, req->body, req->len, max, b, why,
                              sizeof(why)))
            return fail(req, res, C_INVALID_ARGUMENT, "", 422, "%s", why);
    } else if (kind == FORMAT_JFR) {
        int added = jfr_ingest(host, req->content_type, req->body, req->len, max,
                               ingest_cpu_period(req->query), b, why, sizeof(why));
        if (added <= 0)
            return fail(req, res, C_INVALID_ARGUMENT, "", 422, "jfr body: %s",
                        added < 0 ? why : "no samples of the events profiles are made of");
    } else if (kind == FORMAT_SPEEDSCOPE) {
        if (speedscope_records(host, (const char *)req->body, req->len,
                               ingest_cpu_period(req->query), b, why, sizeof(why)) < 0)
            return fail(req, res, C_INVALID_ARGUMENT, "", 422, "speedscope body: %s", why);
    } else if (pprof) {   /* the types read only when the name does not say the family */
        struct profd_type_names *wanted = w.family || braces_name_it(name) ? NULL : &types;
        if (!host->record_add_pprof_typed(b, req->body, req->len, max, wanted, why, sizeof(why)))
            return fail(req, res, C_INVALID_ARGUMENT, "", 422, "pprof body: %s", why);
        w.types = wanted;
    } else {
        struct folded_meta meta = {units, ingest_cpu_period(req->query), from, until - from,
                                   kind == FORMAT_LINES};
        struct profd_profile *p =
            kind == FORMAT_TRIE || kind == FORMAT_TREE
                ? binary_stacks_profile(host, kind == FORMAT_TRIE ? STACKS_TRIE : STACKS_TREE,
                                        req->body, req->len, &meta, why, sizeof(why))
                : folded_profile(host, (const char *)req->body, req->len, &meta, why,
                                 sizeof(why));
        if (!p)
            return fail(req, res, C_INVALID_ARGUMENT, "", 422, "%s body: %s",
                        kind == FORMAT_TRIE ? "trie" : kind == FORMAT_TREE ? "tree" : "folded",
                        why);
        host->record_add_profile(b, p);
    }
    for (size_t i = 0; i < b->nrecords; i++)   /* a recording's several profiles */
        ingest_times(b->records[i], pprof || kind == FORMAT_JFR, from, until);
    if (!name_labels(host, &w, b, why, sizeof(why)))
        return fail(req, res, C_INVALID_ARGUMENT, "", 400, "%s", why);
    for (size_t i = 0; i < b->nrecords; i++) {
        if (*spy || !host->record_label(b->records[i], "pyroscope_spy"))   /* else the braces' */
            host->record_set_label(b->records[i], "pyroscope_spy", *spy ? spy : "unknown");
        /* as Pyroscope marks what /ingest takes: no cumulative columns, so
         * a Pyroscope server they go on to makes no deltas of them */
        host->record_set_label(b->records[i], DELTA_LABEL, "false");
    }
}

/* Whether path is /ingest (or its /pyroscope/ prefixed twin). */
static bool ingest_path(const char *path, size_t len)
{
    static const char prefix[] = "/pyroscope";
    if (len > sizeof(prefix) - 1 && !memcmp(path, prefix, sizeof(prefix) - 1)) {
        path += sizeof(prefix) - 1;
        len -= sizeof(prefix) - 1;
    }
    return len == 7 && !memcmp(path, "/ingest", 7);
}

/* A JFR recording takes a millisecond or so to convert however small its
 * gzip'd body is, and a speedscope file of 60 KB as long: such an /ingest
 * runs on a worker, not on the loop that every other push waits for. */
static bool costly_request(const char *path, size_t path_len, const char *query)
{
    char format[32] = "";
    if (!ingest_path(path, path_len))
        return false;
    ingest_query_param(query, "format", format, sizeof(format));
    enum ingest_format kind = ingest_format(format, "");   /* both named by format alone */
    return kind == FORMAT_JFR || kind == FORMAT_SPEEDSCOPE;
}

static void handle(void *arg, const struct profd_rpc_request *req, struct profd_rpc_response *res)
{
    struct served_receiver *r = arg;
    const struct profd_host *host = r->host;
    if (!server_authorized(&cfg_of(r)->auth, req))
        return fail(req, res, C_UNAUTHENTICATED, "unauthenticated", 401,
                    "missing or wrong credentials");
    char why[160];
    const char *tenant = req->header(req, "x-scope-orgid");
    if (!tenant_id_valid(tenant, why, sizeof(why)))
        return fail(req, res, C_UNAUTHENTICATED, "unauthenticated", 401, "%s", why);
    bool is_push = !strcmp(req->path, PUSH);
    bool is_ingest = req->protocol == PROFD_RPC_HTTP && ingest_path(req->path, strlen(req->path));
    if (!is_push && !is_ingest)
        return fail(req, res, C_UNIMPLEMENTED, "unimplemented", 404, "unknown path %.100s",
                    req->path);
    struct profd_batch *b = host->batch_new();
    if (is_push)
        push(r, req, res, b);
    else
        ingest(r, req, res, b);
    bool failed = res->grpc_status || res->http_status >= 400;
    if (!failed && b->nrecords) {
        request_labels(host, tenant, b);
        if (host->emit(r->self, b) != PROFD_OK) {
            free(res->body);
            res->body = NULL;
            res->len = 0;
            fail(req, res, C_RESOURCE_EXHAUSTED, "resource_exhausted", 429,
                 "the pipeline is full; retry later");
        }
    }
    host->batch_unref(b);
}

static int start(void *st)
{
    struct served_receiver *r = st;
    const struct config *cfg = cfg_of(r);
    struct profd_server_options o = {.endpoint = cfg->endpoint, .protocol = PROFD_RPC_HTTP,
                                     .max_body = cfg->max_request_body_size,
                                     .costly = costly_request};
    r->server = serve_endpoint(r->host, r->self, o, &cfg->tls, &cfg->limits, handle, r,
                               "Pyroscope ingest and push.v1 (HTTP/1.1, HTTP/2, gRPC)");
    return r->server ? PROFD_OK : PROFD_ERR;
}

static const struct profd_plugin plugin = {
    PROFD_PLUGIN_HEADER,
    .kind = PROFD_RECEIVER,
    .type = "pyroscope",
    .description = "Pyroscope's push.v1 (Connect, gRPC) and /ingest, as its SDKs and agents send",
    .options = options,
    .config_size = sizeof(struct config),
    .validate = validate,
    .create = served_receiver_create,
    .start = start,
    .shutdown = served_receiver_shutdown,
    .destroy = served_receiver_destroy,
};

PROFD_PLUGIN_DEFINE(plugin)
