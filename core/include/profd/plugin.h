// SPDX-License-Identifier: Apache-2.0
/*
 * profd plugin ABI: the one header a module includes.
 *
 * A module is a shared object exporting one symbol, PROFD_PLUGIN_ENTRY, that
 * returns a descriptor. The daemon checks abi_version and struct_size, binds
 * the module's options from YAML into a config struct of config_size bytes
 * using the options table, and drives the lifecycle:
 *
 *   validate(cfg)                  pure, no I/O; report problems with diag()
 *   create(host, self, cfg, &st)   allocate state; no threads, no sockets yet
 *   start(st)                      begin work (exporters first, receivers last)
 *   consume(st, batch)             processors and exporters; see below
 *   shutdown(st)                   stop and drain; may run twice or unstarted
 *   destroy(st)                    free everything; never fails
 *
 * Modules reach the daemon only through struct profd_host; they are never
 * linked against daemon symbols.
 */
#ifndef PROFD_PLUGIN_H
#define PROFD_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profd/model.h"
#include "profd/options.h"

/* Raised when a struct modules share changes layout (2: profd_type_names.cut;
 * 3: profd_server_options.costly; 4: profd_host.sd_parse; 5:
 * profd_server_options.read_header_timeout, read_timeout, max_in_flight). */
#define PROFD_ABI_VERSION 5
#define PROFD_PLUGIN_ENTRY profd_plugin_entry
#define PROFD_PLUGIN_ENTRY_NAME "profd_plugin_entry"

/* Return codes shared by every lifecycle function. */
enum {
    PROFD_OK = 0,
    PROFD_ERR = -1,       /* permanent failure: the data is not retried */
    PROFD_ERETRY = -2,    /* retryable failure or backpressure */
};

enum profd_kind {
    PROFD_RECEIVER = 1,
    PROFD_PROCESSOR = 2,
    PROFD_EXPORTER = 3,
};

/* Descriptor flags. */
#define PROFD_PLUGIN_MUTATES 0x1u   /* consume() changes the batch it is given */
/* Exporters: consume() is given the records of every batch queued in one
 * burst (sending_queue.flush_timeout / flush_size) as one batch. */
#define PROFD_PLUGIN_MERGES_BATCHES 0x2u
/* Processors: consume() may take long (reads binaries, fetches over the
 * network), so servers that answer many clients from one event loop hand
 * every request of a pipeline through it to a worker thread. */
#define PROFD_PLUGIN_SLOW 0x4u
/* Processors: consume() may run on several threads at once (what it keeps
 * across calls never changes, or it guards that itself), so the servers'
 * loops call it side by side rather than one after another. */
#define PROFD_PLUGIN_CONCURRENT 0x8u

enum profd_log_level { PROFD_LOG_ERROR, PROFD_LOG_WARN, PROFD_LOG_INFO, PROFD_LOG_DEBUG };

/* Per-component counters exposed on /metrics. */
enum profd_counter {
    PROFD_C_ACCEPTED_RECORDS,
    PROFD_C_ACCEPTED_BYTES,
    PROFD_C_REFUSED_RECORDS,
    PROFD_C_SENT_RECORDS,
    PROFD_C_SENT_BYTES,
    PROFD_C_FAILED_RECORDS,
    PROFD_C_DROPPED_RECORDS,
    PROFD_C_RETRY_LATER_RECORDS,
    PROFD_C_COUNT_
};

struct profd_component;   /* opaque: the daemon's handle for one component */
struct profd_diag;        /* opaque: collects validation errors */
struct profd_relabel;     /* opaque: compiled relabel rules */
struct profd_delta_state; /* opaque: previous cumulative values of one series */
struct event_base;        /* libevent */

/* One group of a static_configs or file_sd_configs entry. */
struct profd_target_group {
    struct profd_str_list targets;   /* host:port */
    struct profd_labels labels;
};

/*
 * Called once every exporter that received a record has finished with it.
 * ok is true when all of them accepted it; false when any failed permanently
 * or dropped it. Runs on an exporter's sender thread or, when nothing took the
 * record, on the thread that submitted it.
 */
typedef void (*profd_ack_fn)(void *arg, bool ok);

/* How a server speaks: gRPC over HTTP/2 only; or HTTP, where HTTP/1.1 and
 * HTTP/2 (h2c with prior knowledge, or TLS with ALPN) share the port and
 * gRPC calls over HTTP/2 reach the handler as PROFD_RPC_GRPC requests,
 * everything else (Connect's calls among them) as PROFD_RPC_HTTP ones. */
enum profd_rpc_protocol {
    PROFD_RPC_GRPC = 1,
    PROFD_RPC_HTTP = 2,
};

/*
 * One request a server received whole. The body is decompressed already
 * (Content-Encoding, or the gRPC message's grpc-encoding) and, for gRPC, is
 * the one message without its 5-byte prefix. Valid for the handler's call.
 */
struct profd_rpc_request {
    enum profd_rpc_protocol protocol;
    const char *path;
    const char *content_type;   /* "" when absent */
    const uint8_t *body;
    size_t len;
    /* A request header by lowercase name, or NULL. */
    const char *(*header)(const struct profd_rpc_request *req, const char *name);
    void *impl;
    const char *query;          /* HTTP: the URI's query string, "" when none */
};

/* What the handler answers. body is malloc'd and taken over by the server. */
struct profd_rpc_response {
    int http_status;            /* HTTP only; 200 when left 0 */
    int grpc_status;            /* gRPC only; 0 = OK */
    char message[256];          /* grpc-message, or logged for HTTP errors */
    const char *content_type;   /* HTTP only: of body */
    uint8_t *body;
    size_t len;
};

/* Handles one request: on the event loop thread, or, for a large one (a
 * body of 64 KiB or more) or a costly one (profd_server_options.costly),
 * on one of the server's worker threads while the loop serves other
 * requests; so it must be thread-safe, and must not block on the loop. */
typedef void (*profd_rpc_handler)(void *arg, const struct profd_rpc_request *req,
                                  struct profd_rpc_response *res);

struct profd_server_options {
    const char *endpoint;             /* host:port, [v6]:port or :port */
    enum profd_rpc_protocol protocol;
    const char *tls_cert_file;        /* NULL or "": plaintext (gRPC: h2c) */
    const char *tls_key_file;
    const char *tls_client_ca_file;   /* set: clients must present a certificate */
    size_t max_body;                  /* decompressed bytes; larger: 413 / RESOURCE_EXHAUSTED */
    /* ns an HTTP/1.1 request's head may take to come in once it began
     * (then 408, and the connection closed); 0: no limit. */
    int64_t read_header_timeout;
    /* ns a whole request, head and body, may take to come in once it
     * began, checked as its bytes come (then 408 / DEADLINE_EXCEEDED); 0:
     * no limit. */
    int64_t read_timeout;
    /* The most bytes of request bodies held at once, on all of the
     * server's loops (see core/body_budget.h): a request past it is
     * refused with 503 / UNAVAILABLE. 0: no limit. */
    size_t max_in_flight;
    /* Optional: true for a request that costs much work for its size (a
     * JFR recording to convert), which then runs on a worker thread as a
     * large one does rather than on the event loop. Gets the request's
     * path (path_len bytes, not NUL-terminated) and its query ("" when
     * none). Loop's thread. */
    bool (*costly)(const char *path, size_t path_len, const char *query);
};

struct profd_server;   /* opaque */

/* The messages the JSON transcoder knows. */
enum profd_message {
    PROFD_MSG_OTLP_REQUEST = 1,       /* OTLP ExportProfilesServiceRequest */
    PROFD_MSG_OTLP_RESPONSE = 2,      /* OTLP ExportProfilesServiceResponse */
    PROFD_MSG_PUSH_REQUEST = 3,       /* Pyroscope push.v1 PushRequest */
    PROFD_MSG_PUSH_RESPONSE = 4,      /* Pyroscope push.v1 PushResponse */
    PROFD_MSG_WRITERAW_REQUEST = 5,   /* Parca WriteRawRequest */
    PROFD_MSG_WRITERAW_RESPONSE = 6,  /* Parca WriteRawResponse */
};

/* What host->decompress returns besides 0. */
enum {
    PROFD_DECOMPRESS_CORRUPT = -1,
    PROFD_DECOMPRESS_TOO_LARGE = -2,     /* the output would pass max_out */
    PROFD_DECOMPRESS_UNSUPPORTED = -3,   /* an encoding other than gzip, zstd, identity */
};

/*
 * Services the daemon offers to a module. Every function is thread-safe
 * unless its comment says otherwise. Check host_size before using a member
 * added after the first version.
 */
struct profd_host {
    uint32_t abi_version;
    uint32_t host_size;

    /* Logging, prefixed with the component id. printf-style. */
    void (*log)(struct profd_component *self, enum profd_log_level level, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
    /* Adds n to one of the component's counters. */
    void (*count)(struct profd_component *self, enum profd_counter c, uint64_t n);
    /* The component id, "type" or "type/name". */
    const char *(*id)(struct profd_component *self);
    /* Reports a validation error at the option's location (validate only). */
    void (*diag)(struct profd_diag *d, const void *cfg_field, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
    /* The event loop of the daemon's main thread; receivers add their fds and
     * timers to it. Callbacks run on the main thread. */
    struct event_base *(*event_base)(struct profd_component *self);

    /* Batches and records: see model.h for what a record holds. */
    struct profd_batch *(*batch_new)(void);
    void (*batch_ref)(struct profd_batch *b);
    void (*batch_unref)(struct profd_batch *b);
    /* Creates a record owned by b. Takes ownership of payload (a malloc'd
     * buffer of len bytes in the given encoding). */
    struct profd_record *(*record_add)(struct profd_batch *b, void *payload, size_t len,
                                       enum profd_encoding enc);
    /* A copy of a pprof as received (gzip'd or not) added to b, checked as
     * a decode checks it, inflating to at most max_decoded bytes (0: 1 GiB):
     * a receiver passes its body limit against gzip bombs. Bytes inside
     * the large body of the request being handled are kept as a slice of
     * it rather than copied. The record's time and duration are the
     * profile's; its model is left for record_profile to decode when a
     * component needs it. NULL with errbuf filled, and nothing added, when
     * it is not a profile. */
    struct profd_record *(*record_add_pprof)(struct profd_batch *b, const uint8_t *data,
                                             size_t len, size_t max_decoded, char *errbuf,
                                             size_t errlen);
    /* Sets a series label (copies both strings); replaces an existing one. */
    void (*record_set_label)(struct profd_record *r, const char *name, const char *value);
    /* The value of a series label, or NULL. */
    const char *(*record_label)(const struct profd_record *r, const char *name);
    /* Removes a series label; no-op when absent. */
    void (*record_del_label)(struct profd_record *r, const char *name);
    /* Decodes the payload on first call; NULL with errbuf filled when the
     * payload is malformed. The profile stays owned by the record. */
    struct profd_profile *(*record_profile)(struct profd_record *r, char *errbuf, size_t errlen);
    /* Marks the decoded profile changed, so encoders re-encode it. The
     * bytes the record came in as are freed (with any view of them): a
     * queue counts it by what its profile holds from then on. */
    void (*record_touch)(struct profd_record *r);
    /* Serializes the record as pprof (gzip when gzip is true) into a malloc'd
     * buffer. The original bytes are reused whenever the profile is unchanged. */
    int (*record_pprof)(struct profd_record *r, bool gzip, bool reencode, uint8_t **out,
                        size_t *len, char *errbuf, size_t errlen);
    /* Attaches a completion callback to every record of the batch. */
    void (*batch_set_ack)(struct profd_batch *b, profd_ack_fn fn, void *arg);
    /* Marks every record's ack of b failed: its callback will get ok=false. */
    void (*batch_fail_acks)(struct profd_batch *b);
    /* Removes record i from b and frees it (its ack sees one copy fewer).
     * Only for a module that declares PROFD_PLUGIN_MUTATES. */
    void (*batch_remove)(struct profd_batch *b, size_t i);

    /* Label sets (profd_labels in model.h), e.g. a scrape target's. */
    void (*labels_set)(struct profd_labels *l, const char *name, const char *value);
    const char *(*labels_get)(const struct profd_labels *l, const char *name);
    void (*labels_del)(struct profd_labels *l, const char *name);
    void (*labels_copy)(struct profd_labels *dst, const struct profd_labels *src);
    void (*labels_clear)(struct profd_labels *l);
    /* Sets, or removes, a gauge `name{component="<id>",labels}` on /metrics;
     * labels are in Prometheus syntax (`job="a",instance="b"`) or "". */
    void (*gauge_set)(struct profd_component *self, const char *name, const char *help,
                      const char *labels, double value);
    void (*gauge_del)(struct profd_component *self, const char *name, const char *labels);
    /* Reads a Prometheus file_sd file (YAML or JSON). 0, or -1 with err. */
    int (*sd_file_read)(const char *path, struct profd_target_group **groups, size_t *n,
                        char *err, size_t errlen);
    /* The same from text (NUL-terminated) an http_sd endpoint answered;
     * name (its URL) stands for the file in err. */
    int (*sd_parse)(const char *name, const char *text, struct profd_target_group **groups,
                    size_t *n, char *err, size_t errlen);
    void (*sd_groups_free)(struct profd_target_group *groups, size_t n);
    /* Prometheus's hashmod: md5(s), last 8 bytes big-endian, mod modulus. */
    uint64_t (*hash_mod)(const char *s, uint64_t modulus);

    /* Client-side delta of a cumulative profile, see enum profd_delta_result:
     * 0 = p holds the delta, 1 = first profile (emit nothing), 2 = restart
     * (p holds everything since). *state starts NULL; free it with
     * delta_state_free. */
    int (*profile_delta)(struct profd_delta_state **state, struct profd_profile *p,
                         const bool *cumulative);
    void (*delta_state_free)(struct profd_delta_state *state);

    /* Applies compiled relabel rules (a PROFD_OPT_RELABEL option) to l.
     * Returns false when l is to be dropped. Thread-safe. */
    bool (*relabel)(const struct profd_relabel *rules, struct profd_labels *l);

    /* Receivers: hands the batch to every pipeline the receiver feeds.
     * Processors: hands it to the next stage. Borrows b. Returns PROFD_OK, or
     * PROFD_ERETRY when a queue is full with policy block and the wait ran out. */
    int (*emit)(struct profd_component *self, struct profd_batch *b);
    /* One-shot receivers call this once all their input has been emitted. */
    void (*done)(struct profd_component *self);

    /* Codecs. decode: NULL and errbuf set on malformed input, or gzip'd
     * input inflating past max_decoded bytes (0: 1 GiB). */
    struct profd_profile *(*pprof_decode)(const uint8_t *data, size_t len, size_t max_decoded,
                                          char *errbuf, size_t errlen);
    int (*pprof_encode)(const struct profd_profile *p, bool gzip, uint8_t **out, size_t *len);
    /* Interns a string into p's table and returns its index. */
    uint32_t (*profile_intern)(struct profd_profile *p, const char *s, size_t len);
    /* n bytes from p's arena, freed with p (16-byte aligned, uninitialized). */
    void *(*profile_alloc)(struct profd_profile *p, size_t n);
    void (*profile_free)(struct profd_profile *p);
    /* An empty profile (string table holding only ""); size_hint sizes its
     * arena's first block. */
    struct profd_profile *(*profile_new)(size_t size_hint);
    /* Creates a record owned by b holding profile p (taken over), for
     * receivers that build profiles rather than receive pprof bytes. */
    struct profd_record *(*record_add_profile)(struct profd_batch *b, struct profd_profile *p);

    /* Servers on the daemon's event loop (main thread only). server_start
     * binds and listens; NULL with err set when it cannot. Transport errors
     * (bad framing, encoding, size) are answered, logged and counted as
     * refused by the server itself; everything else reaches fn. server_stop
     * says goodbye to every client (GOAWAY) and closes; accepts NULL. */
    struct profd_server *(*server_start)(struct profd_component *self,
                                         const struct profd_server_options *o,
                                         profd_rpc_handler fn, void *arg, char *err,
                                         size_t errlen);
    void (*server_stop)(struct profd_server *s);
    /* The address a server listens on, port resolved ("127.0.0.1:4317"). */
    const char *(*server_address)(const struct profd_server *s);

    /* From an exporter's consume: wait at least ns before the retry that the
     * PROFD_ERETRY it is about to return asks for (Retry-After, RetryInfo). */
    void (*retry_after)(struct profd_component *self, int64_t ns);
    /* From an exporter's consume: 0 on a batch's first try, n on its nth
     * retry (an exporter sending to several places skips those that took
     * the batch already). */
    unsigned (*export_attempt)(struct profd_component *self);

    /* OTLP profiles (see core/otlp.h): decode appends one record per
     * profile to b and returns 0 (rejected counts refused profiles, message
     * says why), or -1 with err when the request is malformed; a pprof
     * original_payload may inflate to max_decoded bytes (0: 1 GiB). encode
     * writes one ExportProfilesServiceRequest (malloc'd) for n records. */
    int (*otlp_decode)(const uint8_t *data, size_t len, size_t max_decoded, struct profd_batch *b,
                       size_t *rejected, char *message, size_t message_len, char *err,
                       size_t errlen);
    void (*otlp_encode)(struct profd_record *const *records, size_t n, uint8_t **out,
                        size_t *len, size_t *skipped, char *err, size_t errlen);
    /* A message's JSON encoding (protobuf's JSON mapping, OTLP's for OTLP)
     * <-> its protobuf bytes (malloc'd): json_to_proto 0, or -1 with err;
     * proto_to_json never fails. */
    int (*json_to_proto)(enum profd_message which, const char *json, size_t len, uint8_t **out,
                         size_t *out_len, char *err, size_t errlen);
    char *(*proto_to_json)(enum profd_message which, const uint8_t *data, size_t len,
                           size_t *out_len);
    /* Compression for modules: gzip or zstd ("gzip"/"zstd"; "identity" or
     * "" copy). compress: 0, or -1 for an unknown encoding. decompress: 0,
     * or a PROFD_DECOMPRESS_* code with err saying why. */
    int (*compress)(const char *encoding, const uint8_t *data, size_t len, uint8_t **out,
                    size_t *out_len);
    int (*decompress)(const char *encoding, const uint8_t *data, size_t len, size_t max_out,
                      uint8_t **out, size_t *out_len, char *err, size_t errlen);
    /* record_pprof without a copy: *data is the record's own bytes when
     * they are what is asked and the profile is unchanged (*owned NULL,
     * valid as long as the record), else a new encoding that *owned holds
     * (malloc'd). Returns 0 or -1 with errbuf filled. */
    int (*record_pprof_view)(struct profd_record *r, bool gzip, bool reencode,
                             const uint8_t **data, size_t *len, uint8_t **owned, char *errbuf,
                             size_t errlen);
    /* Receivers that read at their own pace (files, scrapes, perf.data),
     * from the event loop's thread: runs fn(arg) on the receiver's own
     * thread, one job at a time in the order given, then done(arg)
     * (unless NULL) back on the loop's thread. An emit in fn may wait for
     * room as the full policy says, holding up this receiver alone; on the
     * loop's thread an emit never waits (a full queue is PROFD_ERETRY at
     * once), as the loop serves every receiver. Jobs given before shutdown
     * run before the receiver's shutdown is called; after that, fn and
     * done run at once. */
    void (*run_aside)(struct profd_component *self, void (*fn)(void *arg),
                      void (*done)(void *arg), void *arg);
    /* record_add_pprof that also reads the profile's type names into
     * *types (model.h) while the check has it inflated: a receiver tells
     * its family without decoding it. */
    struct profd_record *(*record_add_pprof_typed)(struct profd_batch *b, const uint8_t *data,
                                                   size_t len, size_t max_decoded,
                                                   struct profd_type_names *types, char *errbuf,
                                                   size_t errlen);
    /* The type names of r's profile (model.h): from its model when it is
     * decoded, else read from its bytes without decoding it. 0, or
     * PROFD_ERR with errbuf filled. */
    int (*record_type_names)(struct profd_record *r, struct profd_type_names *out, char *errbuf,
                             size_t errlen);
    /* From an exporter's consume: record i of the batch is settled,
     * delivered or refused for good. It then counts as that at once (sent,
     * or failed with its ack failed) whatever consume returns, and stays
     * settled through the batch's retries; the first settling holds. A
     * record left unsettled counts as consume's result says. */
    void (*export_settle)(struct profd_component *self, size_t i, bool delivered);
    /* From an exporter's consume: whether record i of the batch was
     * settled, by this try or an earlier one (a retry skips it). */
    bool (*export_settled)(struct profd_component *self, size_t i);
    /* Building a profile: appends one zeroed sample, location, function
     * or mapping to p's table (grown in its arena) and returns it; the ref
     * of a location, function or mapping is then the table's count
     * (p->nlocations, p->nfunctions, p->nmappings). */
    struct profd_sample *(*profile_add_sample)(struct profd_profile *p);
    struct profd_location *(*profile_add_location)(struct profd_profile *p);
    struct profd_function *(*profile_add_function)(struct profd_profile *p);
    struct profd_mapping *(*profile_add_mapping)(struct profd_profile *p);
    /* A hold on r's ack (NULL when it has none): the ack does not fire
     * before the hold is let go, whatever becomes of r, so a module that
     * keeps what r carried (a processor merging it) can free r itself. */
    struct profd_ack *(*ack_hold)(struct profd_record *r);
    /* Lets go of a hold from ack_hold (accepts NULL); ok false fails the
     * ack, as a record that did not get through. */
    void (*ack_let_go)(struct profd_ack *a, bool ok);
    /* Large transient work on the calling thread (a large profile read,
     * symbolized): until huge_arena_leave(what huge_arena_enter returned),
     * its allocations come from an arena whose memory is backed by huge
     * pages, where page faults are dear (see core/huge_arena.h); blocks
     * allocated there are freed with free() as any. */
    int (*huge_arena_enter)(void);
    void (*huge_arena_leave)(int before);
};

struct profd_plugin {
    uint32_t abi_version;     /* PROFD_ABI_VERSION */
    uint32_t struct_size;     /* sizeof(struct profd_plugin) */
    enum profd_kind kind;
    const char *type;         /* e.g. "pprof_file" */
    const char *description;  /* one line */
    const struct profd_option *options;   /* terminated by a zeroed entry */
    size_t config_size;
    uint32_t flags;           /* PROFD_PLUGIN_* */

    int (*validate)(const struct profd_host *host, struct profd_diag *d, const void *cfg);
    int (*create)(const struct profd_host *host, struct profd_component *self, const void *cfg,
                  void **state);
    int (*start)(void *state);
    /* Processors: may forward with host->emit; called on the thread that
     * emitted (the event loop, a server's worker, a receiver's own), never
     * twice at once for one instance unless it declares
     * PROFD_PLUGIN_CONCURRENT. Exporters: runs on the exporter's
     * sender thread; returns PROFD_ERETRY to have it retried with backoff.
     * The batch is borrowed for the call. */
    int (*consume)(void *state, struct profd_batch *b);
    int (*shutdown)(void *state);
    void (*destroy)(void *state);
};

/* The one symbol every module exports. */
typedef const struct profd_plugin *(*profd_plugin_entry_fn)(void);

#define PROFD_EXPORT __attribute__((visibility("default")))

/* The first two members of every descriptor. */
#define PROFD_PLUGIN_HEADER .abi_version = PROFD_ABI_VERSION, .struct_size = sizeof(struct profd_plugin)

/* Defines the module's entry symbol, returning its descriptor. */
#define PROFD_PLUGIN_DEFINE(descriptor)                                            \
    PROFD_EXPORT const struct profd_plugin *PROFD_PLUGIN_ENTRY(void)               \
    {                                                                              \
        return &(descriptor);                                                      \
    }

#endif
