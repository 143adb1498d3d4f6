// SPDX-License-Identifier: Apache-2.0
/* The services table modules call; thin adapters over the core API. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../config/diag.h"
#include "../config/tree.h"
#include "alloc.h"
#include "arena.h"
#include "aside.h"
#include "compression.h"
#include "delta.h"
#include "exporter.h"
#include "graph.h"
#include "huge_arena.h"
#include "labels.h"
#include "log.h"
#include "pprof.h"
#include "otlp.h"
#include "proto_json.h"
#include "profile.h"
#include "record.h"
#include "sd_file.h"
#include "relabel.h"
#include "rpc_server.h"

static void host_log(struct profd_component *self, enum profd_log_level level, const char *fmt,
                     ...)
{
    va_list ap;
    va_start(ap, fmt);
    profd_vlog(level, self ? self->id : NULL, fmt, ap);
    va_end(ap);
}

static void host_count(struct profd_component *self, enum profd_counter c, uint64_t n)
{
    if (c < PROFD_C_COUNT_)
        atomic_fetch_add(&self->metrics->counters[c], n);
}

static const char *host_id(struct profd_component *self)
{
    return self->id;
}

static void host_diag(struct profd_diag *d, const void *field, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    const struct cfg_node *at = field ? profd_diag_origin(d, field) : NULL;
    profd_diag_add(d, at ? at : d->context, "%s", msg);
}

static struct event_base *host_event_base(struct profd_component *self)
{
    return self->graph->base;
}

static struct profd_profile *host_pprof_decode(const uint8_t *data, size_t len,
                                               size_t max_decoded, char *err, size_t errlen)
{
    return profd_pprof_decode(data, len, max_decoded ? max_decoded : PROFD_PPROF_MAX_DECODED,
                              err, errlen);
}

static void *host_profile_alloc(struct profd_profile *p, size_t n)
{
    return profd_arena_alloc(p->arena, n);
}

static void host_gauge_set(struct profd_component *self, const char *name, const char *help,
                           const char *labels, double value)
{
    profd_metrics_gauge_set(name, help, self->id, labels, value);
}

static void host_gauge_del(struct profd_component *self, const char *name, const char *labels)
{
    profd_metrics_gauge_del(name, self->id, labels);
}

static uint64_t host_hash_mod(const char *s, uint64_t modulus)
{
    return profd_hash_mod(s, strlen(s), modulus);
}

static int host_profile_delta(struct profd_delta_state **state, struct profd_profile *p,
                              const bool *cumulative)
{
    return (int)profd_profile_delta(state, p, cumulative);
}

static int host_otlp_decode(const uint8_t *data, size_t len, size_t max_decoded,
                            struct profd_batch *b, size_t *rejected, char *message,
                            size_t message_len, char *err, size_t errlen)
{
    struct profd_otlp_result res;
    int rc = profd_otlp_decode(data, len, max_decoded, b, &res, err, errlen);
    *rejected = res.rejected;
    snprintf(message, message_len, "%s", res.message);
    return rc;
}

static void host_retry_after(struct profd_component *self, int64_t ns)
{
    (void)self;
    profd_exporter_retry_after(ns);
}

static unsigned host_export_attempt(struct profd_component *self)
{
    (void)self;
    return profd_exporter_attempt();
}

static void host_export_settle(struct profd_component *self, size_t i, bool delivered)
{
    (void)self;
    profd_exporter_settle(i, delivered);
}

static bool host_export_settled(struct profd_component *self, size_t i)
{
    (void)self;
    return profd_exporter_settled(i);
}

const struct profd_host profd_host_services = {
    .abi_version = PROFD_ABI_VERSION,
    .host_size = sizeof(struct profd_host),
    .log = host_log,
    .count = host_count,
    .id = host_id,
    .diag = host_diag,
    .event_base = host_event_base,
    .batch_new = profd_batch_new,
    .batch_ref = profd_batch_ref,
    .batch_unref = profd_batch_unref,
    .record_add = profd_record_add,
    .record_add_pprof = profd_record_add_pprof,
    .record_add_profile = profd_record_add_profile,
    .profile_new = profd_profile_new,
    .record_set_label = profd_record_set_label,
    .record_label = profd_record_label,
    .record_del_label = profd_record_del_label,
    .record_profile = profd_record_profile,
    .record_touch = profd_record_touch,
    .record_pprof = profd_record_pprof,
    .batch_set_ack = profd_batch_set_ack,
    .batch_fail_acks = profd_batch_fail_acks,
    .batch_remove = profd_batch_remove,
    .labels_set = profd_labels_set,
    .labels_get = profd_labels_get,
    .labels_del = profd_labels_del,
    .labels_copy = profd_labels_copy,
    .labels_clear = profd_labels_clear,
    .relabel = profd_relabel_apply,
    .gauge_set = host_gauge_set,
    .gauge_del = host_gauge_del,
    .sd_file_read = profd_sd_file_read,
    .sd_parse = profd_sd_parse,
    .sd_groups_free = profd_sd_groups_free,
    .hash_mod = host_hash_mod,
    .profile_delta = host_profile_delta,
    .delta_state_free = profd_delta_state_free,
    .emit = profd_graph_emit,
    .done = profd_graph_receiver_done,
    .pprof_decode = host_pprof_decode,
    .pprof_encode = profd_pprof_encode,
    .profile_intern = profd_profile_intern,
    .profile_alloc = host_profile_alloc,
    .profile_free = profd_profile_free,
    .server_start = profd_server_start,
    .server_stop = profd_server_stop,
    .server_address = profd_server_address,
    .retry_after = host_retry_after,
    .export_attempt = host_export_attempt,
    .otlp_decode = host_otlp_decode,
    .otlp_encode = profd_otlp_encode,
    .json_to_proto = profd_json_to_proto,
    .proto_to_json = profd_proto_to_json,
    .compress = profd_compress,
    .decompress = profd_decompress,
    .record_pprof_view = profd_record_pprof_view,
    .run_aside = profd_aside_run,
    .record_add_pprof_typed = profd_record_add_pprof_typed,
    .record_type_names = profd_record_type_names,
    .export_settle = host_export_settle,
    .export_settled = host_export_settled,
    .profile_add_sample = profd_profile_add_sample,
    .profile_add_location = profd_profile_add_location,
    .profile_add_function = profd_profile_add_function,
    .profile_add_mapping = profd_profile_add_mapping,
    .ack_hold = profd_ack_hold,
    .ack_let_go = profd_ack_let_go,
    .huge_arena_enter = profd_huge_arena_enter,
    .huge_arena_leave = profd_huge_arena_leave,
};
