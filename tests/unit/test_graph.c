// SPDX-License-Identifier: Apache-2.0
/*
 * The pipeline graph and the exporter helper, driven through built-in test
 * modules: fan-out, fan-in, private copies for mutating processors, the
 * lifecycle order, acks, full-queue policies, retries and the drain deadline.
 */
#include "check.h"

#include <dirent.h>
#include <pthread.h>
#include <time.h>

#include "../../config/service.h"
#include "../../core/graph.h"
#include "../../core/record.h"

/* ---- an event log and a gate the test controls ---- */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static char events[4096];
static int delivered;          /* records seen by any sink */
static bool gate_closed;       /* sinks wait while true */
static char labels_seen[64];   /* label i of each record sinks took, in order */

static void note(const char *what, const char *id)
{
    pthread_mutex_lock(&mu);
    strncat(events, what, sizeof(events) - strlen(events) - 1);
    strncat(events, ":", sizeof(events) - strlen(events) - 1);
    strncat(events, id, sizeof(events) - strlen(events) - 1);
    strncat(events, " ", sizeof(events) - strlen(events) - 1);
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&mu);
}

static void reset(void)
{
    pthread_mutex_lock(&mu);
    events[0] = '\0';
    labels_seen[0] = '\0';
    delivered = 0;
    gate_closed = false;
    pthread_mutex_unlock(&mu);
}

/* Waits up to 5 s for delivered >= n. */
static bool wait_delivered(int n)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5;
    pthread_mutex_lock(&mu);
    while (delivered < n && pthread_cond_timedwait(&changed, &mu, &until) == 0)
        ;
    bool ok = delivered >= n;
    pthread_mutex_unlock(&mu);
    return ok;
}

/* ---- test modules ---- */

struct node_state {
    const struct profd_host *host;
    struct profd_component *self;
    const struct sink_cfg *cfg;
    int calls;
};

static struct profd_component *source;   /* the last receiver created */

static int node_create(const struct profd_host *host, struct profd_component *self,
                       const void *cfg, void **out)
{
    struct node_state *s = calloc(1, sizeof(*s));
    *s = (struct node_state){host, self, cfg, 0};
    if (self->kind == PROFD_RECEIVER)
        source = self;
    *out = s;
    return PROFD_OK;
}

static int node_start(void *st)
{
    struct node_state *s = st;
    note("start", s->host->id(s->self));
    return PROFD_OK;
}

static int node_shutdown(void *st)
{
    struct node_state *s = st;
    note("stop", s->host->id(s->self));
    return PROFD_OK;
}

static void node_destroy(void *st)
{
    free(st);
}

static int mutate_consume(void *st, struct profd_batch *b)
{
    struct node_state *s = st;
    for (size_t i = 0; i < b->nrecords; i++)
        s->host->record_set_label(b->records[i], "mutated", "yes");
    return s->host->emit(s->self, b);
}

static int inside, most_inside;   /* threads in meet_consume now, and at most */

/* Waits up to a second, inside the call, for a second thread to be inside
 * too (a loaded machine may start it late); notes how many were at most. */
static int meet_consume(void *st, struct profd_batch *b)
{
    struct node_state *s = st;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 1;
    pthread_mutex_lock(&mu);
    if (++inside > most_inside)
        most_inside = inside;
    pthread_cond_broadcast(&changed);
    while (most_inside < 2 && pthread_cond_timedwait(&changed, &mu, &until) == 0)
        ;
    inside--;
    pthread_mutex_unlock(&mu);
    return s->host->emit(s->self, b);
}

/* Counter c of the component id of kind. */
static uint64_t counter(const char *id, const char *kind, enum profd_counter c)
{
    return atomic_load(&profd_metrics_get(id, kind)->counters[c]);
}

static int largest_batch;   /* most records a sink was given at once */
/* The sent records of a deliver_first sink, as its consume saw them once it
 * settled its first record. */
static uint64_t sent_while_consuming;

/* refuse_first: the first record refused for good, then a retry;
 * deliver_first: the first record delivered, then a permanent error. */
enum { SINK_OK, SINK_RETRY_ONCE, SINK_FAIL, SINK_RETRY_ALWAYS, SINK_REFUSE_FIRST,
       SINK_DELIVER_FIRST };
static const char *const sink_modes[] = {"ok",           "retry_once",    "fail", "retry_always",
                                         "refuse_first", "deliver_first", NULL};

struct sink_cfg {
    int mode;
};

static const struct profd_option sink_options[] = {
    {"mode", PROFD_OPT_ENUM, offsetof(struct sink_cfg, mode), "ok", "behaviour",
     .choices = sink_modes},
    {0},
};

static int sink_consume(void *st, struct profd_batch *b)
{
    struct node_state *s = st;
    pthread_mutex_lock(&mu);
    while (gate_closed)
        pthread_cond_wait(&changed, &mu);
    pthread_mutex_unlock(&mu);
    s->calls++;
    if (s->cfg->mode == SINK_REFUSE_FIRST && s->calls == 1) {
        s->host->export_settle(s->self, 0, false);
        return PROFD_ERETRY;
    }
    if (s->cfg->mode == SINK_RETRY_ALWAYS || (s->cfg->mode == SINK_RETRY_ONCE && s->calls == 1))
        return PROFD_ERETRY;
    if (s->cfg->mode == SINK_FAIL)
        return PROFD_ERR;
    size_t n = 0;   /* records taken this try */
    for (size_t i = 0; i < b->nrecords; i++) {
        if (s->host->export_settled(s->self, i))
            continue;   /* an earlier try's */
        if (s->cfg->mode == SINK_DELIVER_FIRST && n == 1)
            break;
        n++;
        if (s->cfg->mode == SINK_DELIVER_FIRST) {   /* others leave the count to the result */
            s->host->export_settle(s->self, i, true);
            sent_while_consuming = counter(s->host->id(s->self), "exporter", PROFD_C_SENT_RECORDS);
        }
        const char *m = s->host->record_label(b->records[i], "mutated");
        const char *label = s->host->record_label(b->records[i], "i");
        char what[64];
        snprintf(what, sizeof(what), "got%s", m ? "-mutated" : "");
        note(what, s->host->id(s->self));
        pthread_mutex_lock(&mu);
        if (label)
            strncat(labels_seen, label, sizeof(labels_seen) - strlen(labels_seen) - 1);
        pthread_mutex_unlock(&mu);
    }
    pthread_mutex_lock(&mu);
    delivered += (int)n;
    if ((int)b->nrecords > largest_batch)
        largest_batch = (int)b->nrecords;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&mu);
    return s->cfg->mode == SINK_DELIVER_FIRST ? PROFD_ERR : PROFD_OK;
}

#define MODULE(kind_, type_, consume_, flags_, opts_, size_)                                 \
    {PROFD_ABI_VERSION, sizeof(struct profd_plugin), kind_, type_, "test", opts_, size_,  \
     flags_, NULL, node_create, node_start, consume_, node_shutdown, node_destroy}

static const struct profd_plugin test_modules[] = {
    MODULE(PROFD_RECEIVER, "src", NULL, 0, NULL, 0),
    MODULE(PROFD_PROCESSOR, "mut", mutate_consume, PROFD_PLUGIN_MUTATES, NULL, 0),
    MODULE(PROFD_PROCESSOR, "slow", mutate_consume, PROFD_PLUGIN_MUTATES | PROFD_PLUGIN_SLOW,
           NULL, 0),
    MODULE(PROFD_PROCESSOR, "meet", meet_consume, 0, NULL, 0),
    MODULE(PROFD_PROCESSOR, "cmeet", meet_consume, PROFD_PLUGIN_CONCURRENT, NULL, 0),
    MODULE(PROFD_EXPORTER, "sink", sink_consume, 0, sink_options, sizeof(struct sink_cfg)),
    MODULE(PROFD_EXPORTER, "msink", sink_consume, PROFD_PLUGIN_MERGES_BATCHES, sink_options,
           sizeof(struct sink_cfg)),
};

/* ---- harness ---- */

static struct profd_graph *start_graph(const char *yaml, struct profd_loader **lp)
{
    struct profd_loader *l = profd_loader_create(NULL, 0);
    char err[256];
    for (size_t i = 0; i < sizeof(test_modules) / sizeof(*test_modules); i++)
        profd_loader_register(l, &test_modules[i], err, sizeof(err));
    struct profd_diag d = {0};
    struct cfg_node *root = cfg_load_string("g.yaml", yaml, &d);
    struct profd_config *c = root ? profd_config_parse(root, &d) : NULL;
    struct profd_graph *g = c ? profd_graph_prepare(c, l, &d) : NULL;
    for (size_t i = 0; i < d.n; i++)
        fprintf(stderr, "  %s\n", d.msgs[i]);
    profd_diag_free(&d);
    profd_config_free(c);
    if (g && (profd_graph_create(g, NULL) < 0 || profd_graph_start(g) < 0)) {
        profd_graph_destroy(g);
        g = NULL;
    }
    *lp = l;
    return g;
}

/* A case's start: the shared state reset and the graph of yaml started
 * (a failed start is a failure of the case). */
static struct profd_graph *begin_case(const char *yaml, struct profd_loader **lp)
{
    reset();
    struct profd_graph *g = start_graph(yaml, lp);
    CHECK(g != NULL);
    return g;
}

static void stop_graph(struct profd_graph *g, struct profd_loader *l)
{
    profd_graph_destroy(g);
    profd_loader_destroy(l);
}

static struct profd_batch *one_record_batch(void)
{
    struct profd_batch *b = profd_batch_new();
    uint8_t *payload = malloc(100);
    memset(payload, 0, 100);
    struct profd_record *r = profd_record_add(b, payload, 100, PROFD_ENC_PPROF_RAW);
    profd_record_set_label(r, "__name__", "test");
    return b;
}

static int ack_calls, ack_ok, ack_failures;

static void on_ack(void *arg, bool ok)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    ack_calls++;
    ack_ok = ok;
    ack_failures += !ok;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&mu);
}

static int emit_one(bool with_ack)
{
    struct profd_batch *b = one_record_batch();
    if (with_ack)
        profd_batch_set_ack(b, on_ack, NULL);
    int rc = profd_graph_emit(source, b);
    profd_batch_unref(b);
    return rc;
}

/* Closes the sinks' gate (they wait at it) or opens it. */
static void set_gate(bool closed)
{
    pthread_mutex_lock(&mu);
    gate_closed = closed;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&mu);
}

/* Gauge g of exporter id. */
static int64_t gauge(const char *id, enum profd_exporter_gauge g)
{
    return atomic_load(&profd_metrics_get(id, "exporter")->gauges[g]);
}

/* Waits until sink id's queue holds n records (its sender took the rest). */
static void wait_queue_holds(const char *id, int64_t n)
{
    for (int i = 0; i < 500 && gauge(id, PROFD_G_QUEUE_RECORDS) != n; i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
}


/* ---- cases ---- */

TEST(lifecycle_order_and_fan_out)
{
    struct profd_loader *l;
    struct profd_graph *g = begin_case(
        "receivers: {src/lo: {}}\nexporters: {sink/a: {}, sink/b: {}}\n"
        "service: {pipelines: {profiles: {receivers: [src/lo], exporters: [sink/a, sink/b]}}}\n",
        &l);
    if (!g)
        return;
    CHECK_STR(events, "start:sink/a start:sink/b start:src/lo ");
    CHECK_INT(emit_one(false), PROFD_OK);
    CHECK(wait_delivered(2));
    CHECK_CONTAINS(events, "got:sink/a");
    CHECK_CONTAINS(events, "got:sink/b");
    reset();
    stop_graph(g, l);
    CHECK_STR(events, "stop:src/lo stop:sink/b stop:sink/a ");
}

TEST(mutating_processor_gets_a_private_copy)
{
    struct profd_loader *l;
    struct profd_graph *g = begin_case(
        "receivers: {src/mc: {}}\nprocessors: {mut: {}}\nexporters: {sink/m: {}, sink/plain: {}}\n"
        "service: {pipelines: {\n"
        "  profiles/1: {receivers: [src/mc], processors: [mut], exporters: [sink/m]},\n"
        "  profiles/2: {receivers: [src/mc], exporters: [sink/plain]}}}\n",
        &l);
    if (!g)
        return;
    CHECK_INT(emit_one(false), PROFD_OK);
    CHECK(wait_delivered(2));
    CHECK_CONTAINS(events, "got-mutated:sink/m");
    CHECK_CONTAINS(events, "got:sink/plain");
    CHECK(!strstr(events, "got-mutated:sink/plain"));
    stop_graph(g, l);
}

TEST(fan_in_and_ack_after_every_exporter)
{
    reset();
    ack_calls = 0;
    struct profd_loader *l;
    struct profd_graph *g = start_graph(
        "receivers: {src/one: {}, src/two: {}}\nexporters: {sink/fi: {}, sink/fi2: {}}\n"
        "service: {pipelines: {profiles: {receivers: [src/one, src/two], exporters: [sink/fi, sink/fi2]}}}\n",
        &l);
    CHECK(g != NULL);
    if (!g)
        return;
    pthread_mutex_lock(&mu);
    gate_closed = true;
    pthread_mutex_unlock(&mu);
    CHECK_INT(emit_one(true), PROFD_OK);
    pthread_mutex_lock(&mu);
    CHECK_INT(ack_calls, 0);   /* both exporters still hold it */
    gate_closed = false;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&mu);
    CHECK(wait_delivered(2));
    stop_graph(g, l);   /* drains: every ack has fired once this returns */
    CHECK_INT(ack_calls, 1);
    CHECK(ack_ok);
    CHECK_INT(counter("sink/fi", "exporter", PROFD_C_SENT_RECORDS), 1);
    CHECK_INT(counter("src/two", "receiver", PROFD_C_ACCEPTED_RECORDS), 1);
}

TEST(permanent_failure_fails_the_ack)
{
    reset();
    ack_calls = 0;
    struct profd_loader *l;
    struct profd_graph *g = start_graph(
        "receivers: {src/pf: {}}\nexporters: {sink/bad: {mode: fail}, sink/good: {}}\n"
        "service: {pipelines: {profiles: {receivers: [src/pf], exporters: [sink/bad, sink/good]}}}\n",
        &l);
    CHECK(g != NULL);
    if (!g)
        return;
    CHECK_INT(emit_one(true), PROFD_OK);
    CHECK(wait_delivered(1));
    stop_graph(g, l);
    CHECK_INT(ack_calls, 1);
    CHECK(!ack_ok);
    CHECK_INT(counter("sink/bad", "exporter", PROFD_C_FAILED_RECORDS), 1);
}

TEST(retry_then_success)
{
    struct profd_loader *l;
    struct profd_graph *g = begin_case(
        "receivers: {src/rt: {}}\n"
        "exporters: {sink/rt: {mode: retry_once, retry_on_failure: {initial_interval: 1ms}}}\n"
        "service: {pipelines: {profiles: {receivers: [src/rt], exporters: [sink/rt]}}}\n",
        &l);
    if (!g)
        return;
    CHECK_INT(emit_one(false), PROFD_OK);
    CHECK(wait_delivered(1));
    stop_graph(g, l);
    CHECK_INT(counter("sink/rt", "exporter", PROFD_C_SENT_RECORDS), 1);
    CHECK_INT(counter("sink/rt", "exporter", PROFD_C_FAILED_RECORDS), 0);
}

TEST(full_queue_drop_and_block)
{
    struct profd_loader *l;
    struct profd_graph *g = begin_case(
        "receivers: {src/fq: {}}\n"
        "exporters:\n"
        "  sink/drop: {sending_queue: {queue_size: 150, full_policy: drop}}\n"
        "  sink/block: {sending_queue: {queue_size: 250, block_timeout: 20ms}}\n"
        "service: {pipelines: {profiles: {receivers: [src/fq], exporters: [sink/drop, sink/block]}}}\n",
        &l);
    if (!g)
        return;
    set_gate(true);   /* senders take one batch each and wait */
    CHECK_INT(emit_one(false), PROFD_OK);   /* taken by the senders */
    wait_queue_holds("sink/drop", 0);
    wait_queue_holds("sink/block", 0);
    CHECK_INT(emit_one(false), PROFD_OK);   /* queued: 100 of 150 and of 250 bytes */
    CHECK_INT(emit_one(false), PROFD_OK);   /* drop drops, block takes */
    CHECK_INT(counter("sink/drop", "exporter", PROFD_C_DROPPED_RECORDS), 1);
    CHECK_INT(emit_one(false), PROFD_ERETRY);   /* block times out: refused whole */
    CHECK_INT(counter("sink/drop", "exporter", PROFD_C_DROPPED_RECORDS), 1);
    CHECK_INT(counter("sink/drop", "exporter", PROFD_C_ACCEPTED_RECORDS), 3);   /* one dropped */
    CHECK_INT(counter("src/fq", "receiver", PROFD_C_ACCEPTED_RECORDS), 3);
    set_gate(false);
    CHECK(wait_delivered(5));
    stop_graph(g, l);
    CHECK_INT(counter("sink/block", "exporter", PROFD_C_SENT_RECORDS), 3);
    CHECK_INT(counter("sink/drop", "exporter", PROFD_C_SENT_RECORDS), 2);
}

TEST(a_fan_out_one_branch_refuses_is_queued_by_none)
{
    struct profd_loader *l;
    struct profd_graph *g = begin_case(
        "receivers: {src/ao: {}}\n"
        "processors: {mut/ao: {}}\n"
        "exporters: {sink/roomy: {}, sink/tight: {sending_queue: {queue_size: 150}}}\n"
        "service: {pipelines: {\n"
        "  profiles/1: {receivers: [src/ao], processors: [mut/ao], exporters: [sink/roomy]},\n"
        "  profiles/2: {receivers: [src/ao], exporters: [sink/roomy, sink/tight]}}}\n",
        &l);
    if (!g)
        return;
    set_gate(true);
    CHECK_INT(emit_one(false), PROFD_OK);   /* taken by the senders, which wait */
    wait_queue_holds("sink/tight", 0);
    wait_queue_holds("sink/roomy", 1);   /* one of its two batches taken */
    CHECK_INT(emit_one(false), PROFD_OK);   /* queued: 100 of sink/tight's 150 bytes */
    int64_t was = profd_queue_wait_until(PROFD_QUEUE_NO_WAIT);
    CHECK_INT(emit_one(false), PROFD_ERETRY);
    /* sink/roomy, reached along two paths, holds one batch of the first
     * emit and two of the second: nothing of the refused one. */
    CHECK_INT(gauge("sink/roomy", PROFD_G_QUEUE_RECORDS), 3);
    /* Nothing counts the refused emit as taken in. */
    CHECK_INT(counter("src/ao", "receiver", PROFD_C_ACCEPTED_RECORDS), 2);
    CHECK_INT(counter("mut/ao", "processor", PROFD_C_ACCEPTED_RECORDS), 2);
    CHECK_INT(counter("sink/roomy", "exporter", PROFD_C_ACCEPTED_RECORDS), 4);
    CHECK_INT(counter("sink/tight", "exporter", PROFD_C_ACCEPTED_BYTES), 200);
    /* The queue that refused it says so; the other one took nothing. */
    CHECK_INT(counter("sink/tight", "exporter", PROFD_C_RETRY_LATER_RECORDS), 1);
    CHECK_INT(counter("sink/roomy", "exporter", PROFD_C_RETRY_LATER_RECORDS), 0);
    profd_queue_wait_until(was);
    set_gate(false);
    CHECK_INT(emit_one(false), PROFD_OK);   /* the retry: waits for room in sink/tight */
    CHECK(wait_delivered(9));
    stop_graph(g, l);
    CHECK_INT(counter("sink/roomy", "exporter", PROFD_C_SENT_RECORDS), 6);
    CHECK_INT(counter("sink/tight", "exporter", PROFD_C_SENT_RECORDS), 3);
}

enum { EMITTERS = 4, EMITS_EACH = 150 };

/* An emitter thread: EMITS_EACH records, each emitted until taken, a full
 * queue refusing at once. */
static void *emit_until_taken(void *arg)
{
    int *retries = arg;
    profd_queue_wait_until(PROFD_QUEUE_NO_WAIT);
    for (int i = 0; i < EMITS_EACH; i++)
        while (emit_one(false) == PROFD_ERETRY)
            (*retries)++;
    return NULL;
}

TEST(concurrent_fan_out_emits_lose_and_duplicate_nothing)
{
    struct profd_loader *l;
    struct profd_graph *g = begin_case(
        "receivers: {src/cc: {}}\n"
        "processors: {mut/cc: {}}\n"
        "exporters:\n"
        "  sink/c1: {sending_queue: {queue_size: 300, flush_timeout: 0s}}\n"
        "  sink/c2: {sending_queue: {queue_size: 200, flush_timeout: 0s}}\n"
        "service: {pipelines: {\n"
        "  profiles/1: {receivers: [src/cc], exporters: [sink/c1, sink/c2]},\n"
        "  profiles/2: {receivers: [src/cc], processors: [mut/cc], exporters: [sink/c2]}}}\n",
        &l);
    if (!g)
        return;
    pthread_t threads[EMITTERS];
    int retries[EMITTERS] = {0};
    for (int i = 0; i < EMITTERS; i++)
        pthread_create(&threads[i], NULL, emit_until_taken, &retries[i]);
    int refused = 0;
    for (int i = 0; i < EMITTERS; i++) {
        pthread_join(threads[i], NULL);
        refused += retries[i];
    }
    CHECK(refused > 0);   /* the queues were full at times */
    CHECK(counter("sink/c1", "exporter", PROFD_C_RETRY_LATER_RECORDS) +
              counter("sink/c2", "exporter", PROFD_C_RETRY_LATER_RECORDS) >=
          (uint64_t)refused);
    CHECK(wait_delivered(3 * EMITTERS * EMITS_EACH));
    stop_graph(g, l);
    /* Each record once in sink/c1 and twice in sink/c2 (both paths),
     * whatever was refused and retried on the way. */
    CHECK_INT(counter("sink/c1", "exporter", PROFD_C_SENT_RECORDS), EMITTERS * EMITS_EACH);
    CHECK_INT(counter("sink/c2", "exporter", PROFD_C_SENT_RECORDS), 2 * EMITTERS * EMITS_EACH);
    CHECK_INT(counter("src/cc", "receiver", PROFD_C_ACCEPTED_RECORDS), EMITTERS * EMITS_EACH);
}

static void *emit_one_record(void *arg)
{
    (void)arg;
    emit_one(false);
    return NULL;
}

/* The most threads inside processor type at once while two emit a record
 * each through it. */
static int most_inside_of(const char *type)
{
    char yaml[512];
    snprintf(yaml, sizeof(yaml),
             "receivers: {src/m: {}}\nprocessors: {%s: {}}\nexporters: {sink/m: {}}\n"
             "service: {pipelines: {profiles: {receivers: [src/m], processors: [%s], "
             "exporters: [sink/m]}}}\n",
             type, type);
    struct profd_loader *l;
    struct profd_graph *g = begin_case(yaml, &l);
    if (!g)
        return -1;
    inside = most_inside = 0;
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&threads[i], NULL, emit_one_record, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(threads[i], NULL);
    CHECK(wait_delivered(2));
    stop_graph(g, l);
    return most_inside;
}

TEST(a_processor_runs_on_one_thread_at_a_time_unless_it_is_concurrent)
{
    CHECK_INT(most_inside_of("meet"), 1);
    CHECK_INT(most_inside_of("cmeet"), 2);
}

static int64_t mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

TEST(a_full_queue_refuses_at_once_where_waits_are_off_and_at_a_deadline)
{
    struct profd_loader *l;
    struct profd_graph *g = begin_case(
        "receivers: {src/nw: {}}\n"
        "processors: {mut/nw: {}}\n"
        "exporters: {sink/nw: {sending_queue: {queue_size: 150, block_timeout: 10s}}}\n"
        "service: {pipelines: {profiles: {receivers: [src/nw], processors: [mut/nw], "
        "exporters: [sink/nw]}}}\n",
        &l);
    if (!g)
        return;
    set_gate(true);
    CHECK_INT(emit_one(false), PROFD_OK);   /* taken by the sender, which waits */
    wait_queue_holds("sink/nw", 0);
    CHECK(!profd_graph_congested(source, 100));   /* an empty queue takes anything */
    CHECK_INT(emit_one(false), PROFD_OK);   /* queued: 100 of 150 bytes */
    CHECK(profd_graph_congested(source, 100));   /* through the processor */
    CHECK(!profd_graph_congested(source, 50));
    CHECK_INT(profd_queue_wait_until(PROFD_QUEUE_NO_WAIT), 0);   /* the default, replaced */
    int64_t t0 = mono_ms();
    CHECK_INT(emit_one(false), PROFD_ERETRY);
    CHECK(mono_ms() - t0 < 5000);   /* not the 10 s block_timeout */
    /* May wait again, but not past the request's deadline. */
    CHECK_INT(profd_queue_wait_until((mono_ms() + 200) * 1000000), PROFD_QUEUE_NO_WAIT);
    t0 = mono_ms();
    CHECK_INT(emit_one(false), PROFD_ERETRY);
    CHECK(mono_ms() - t0 >= 150 && mono_ms() - t0 < 5000);
    profd_queue_wait_until(0);
    set_gate(false);
    CHECK(wait_delivered(2));
    stop_graph(g, l);
    CHECK_INT(counter("sink/nw", "exporter", PROFD_C_SENT_RECORDS), 2);
}

TEST(idle_sender_waits_for_a_burst)
{
    struct profd_loader *l;
    struct profd_graph *g = begin_case(
        "receivers: {src/fl: {}}\n"
        "exporters:\n"
        "  sink/fl: {sending_queue: {flush_timeout: 300ms, flush_size: 3}}\n"
        "service: {pipelines: {profiles: {receivers: [src/fl], exporters: [sink/fl]}}}\n",
        &l);
    if (!g)
        return;
    /* A lone record waits for flush_timeout. */
    int64_t t0 = mono_ms();
    CHECK_INT(emit_one(false), PROFD_OK);
    CHECK(wait_delivered(1));
    CHECK(mono_ms() - t0 >= 250);
    /* flush_size records end the wait at once. */
    t0 = mono_ms();
    for (int i = 0; i < 3; i++)
        CHECK_INT(emit_one(false), PROFD_OK);
    CHECK(wait_delivered(4));
    CHECK(mono_ms() - t0 < 250);
    /* Shutdown does not wait for the timeout either. */
    CHECK_INT(emit_one(false), PROFD_OK);
    t0 = mono_ms();
    stop_graph(g, l);
    CHECK(mono_ms() - t0 < 250);
    CHECK_INT(counter("sink/fl", "exporter", PROFD_C_SENT_RECORDS), 5);
}

TEST(a_merging_exporter_gets_a_burst_as_one_batch)
{
    reset();
    ack_calls = ack_ok = largest_batch = 0;
    struct profd_loader *l;
    struct profd_graph *g = start_graph(
        "receivers: {src/mg: {}}\n"
        "exporters:\n"
        "  msink/mg: {mode: retry_once, sending_queue: {flush_timeout: 300ms, flush_size: 3},\n"
        "             retry_on_failure: {initial_interval: 5ms}}\n"
        "service: {pipelines: {profiles: {receivers: [src/mg], exporters: [msink/mg]}}}\n",
        &l);
    CHECK(g != NULL);
    if (!g)
        return;
    for (int i = 0; i < 3; i++)
        CHECK_INT(emit_one(true), PROFD_OK);
    CHECK(wait_delivered(3));
    CHECK_INT(largest_batch, 3);   /* one call for the three batches, retried whole */
    stop_graph(g, l);
    CHECK_INT(ack_calls, 3);       /* every record's ack, once the merged batch is done */
    CHECK_INT(ack_ok, 1);          /* ... and the last one said ok */
    CHECK_INT(counter("msink/mg", "exporter", PROFD_C_SENT_RECORDS), 3);
}

/* Emits three records, each with its own ack, into the merging sink of
 * yaml (named id), which gets them as one batch (flush_size 3), and stops
 * the graph once n were delivered. */
static void three_acked_into_one_batch(const char *yaml, int n)
{
    reset();
    ack_calls = ack_failures = largest_batch = 0;
    struct profd_loader *l;
    struct profd_graph *g = start_graph(yaml, &l);
    CHECK(g != NULL);
    if (!g)
        return;
    for (int i = 0; i < 3; i++)
        CHECK_INT(emit_one(true), PROFD_OK);
    CHECK(wait_delivered(n));
    stop_graph(g, l);
    CHECK_INT(largest_batch, 3);
    CHECK_INT(ack_calls, 3);
}

TEST(a_record_refused_for_good_is_not_retried_and_fails_its_ack_alone)
{
    three_acked_into_one_batch(
        "receivers: {src/rf: {}}\n"
        "exporters:\n"
        "  msink/rf: {mode: refuse_first, sending_queue: {flush_timeout: 2s, flush_size: 3},\n"
        "             retry_on_failure: {initial_interval: 5ms}}\n"
        "service: {pipelines: {profiles: {receivers: [src/rf], exporters: [msink/rf]}}}\n",
        2);
    CHECK_INT(delivered, 2);   /* the retry sent the other two alone */
    CHECK_INT(ack_failures, 1);
    CHECK_INT(counter("msink/rf", "exporter", PROFD_C_SENT_RECORDS), 2);
    CHECK_INT(counter("msink/rf", "exporter", PROFD_C_FAILED_RECORDS), 1);
}

TEST(a_permanent_error_after_a_delivery_fails_only_the_rest)
{
    three_acked_into_one_batch(
        "receivers: {src/df: {}}\n"
        "exporters:\n"
        "  msink/df: {mode: deliver_first, sending_queue: {flush_timeout: 2s, flush_size: 3}}\n"
        "service: {pipelines: {profiles: {receivers: [src/df], exporters: [msink/df]}}}\n",
        1);
    CHECK_INT(ack_failures, 2);
    CHECK_INT(counter("msink/df", "exporter", PROFD_C_SENT_RECORDS), 1);
    CHECK_INT(sent_while_consuming, 1);   /* counted when settled, not when the batch ended */
    CHECK_INT(counter("msink/df", "exporter", PROFD_C_FAILED_RECORDS), 2);
    CHECK(counter("msink/df", "exporter", PROFD_C_SENT_BYTES) == 100);   /* its payload */
}

TEST(drain_deadline_drops_what_cannot_be_sent)
{
    reset();
    ack_calls = 0;
    struct profd_loader *l;
    struct profd_graph *g = start_graph(
        "receivers: {src/dd: {}}\n"
        "exporters: {sink/dd: {mode: retry_always, shutdown_timeout: 50ms,\n"
        "                      retry_on_failure: {initial_interval: 5ms, max_interval: 10ms}}}\n"
        "service: {pipelines: {profiles: {receivers: [src/dd], exporters: [sink/dd]}}}\n",
        &l);
    CHECK(g != NULL);
    if (!g)
        return;
    CHECK_INT(emit_one(true), PROFD_OK);
    CHECK_INT(emit_one(true), PROFD_OK);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    stop_graph(g, l);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    CHECK(secs < 2.0);
    CHECK_INT(counter("sink/dd", "exporter", PROFD_C_DROPPED_RECORDS), 2);
    CHECK_INT(ack_calls, 2);
    CHECK(!ack_ok);
}

/* A record whose payload is a valid pprof (an empty profile: its string
 * table alone), labeled i=<i>, with an ack. */
static int emit_valid(int i)
{
    struct profd_batch *b = profd_batch_new();
    uint8_t *payload = malloc(2);
    payload[0] = 0x32;   /* string_table, field 6: one empty string */
    payload[1] = 0x00;
    struct profd_record *r = profd_record_add(b, payload, 2, PROFD_ENC_PPROF_RAW);
    char value[16];
    snprintf(value, sizeof(value), "%d", i);
    profd_record_set_label(r, "__name__", "stored");
    profd_record_set_label(r, "i", value);
    r->time_nanos = 1000 + i;
    profd_batch_set_ack(b, on_ack, NULL);
    int rc = profd_graph_emit(source, b);
    profd_batch_unref(b);
    return rc;
}

/* The files named *<suffix> in dir. */
static int files_in(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name), k = strlen(suffix);
        n += len > k && !strcmp(e->d_name + len - k, suffix);
    }
    if (d)
        closedir(d);
    return n;
}

/* Removes the directory dir and all it holds. */
static void remove_tree(const char *dir)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    CHECK_INT(system(cmd), 0);
}

static const char STORED_GRAPH[] =
    "receivers: {src/st: {}}\n"
    "exporters: {sink/st: {mode: %s, shutdown_timeout: 50ms, sending_queue: {storage: %s%s},\n"
    "                      retry_on_failure: {initial_interval: 5ms, max_interval: 10ms}}}\n"
    "service: {pipelines: {profiles: {receivers: [src/st], exporters: [sink/st]}}}\n";

/* The shared state reset and a graph of STORED_GRAPH started, its sink in
 * mode, its storage in dir, with queue_extra among its queue's options (a
 * failed start is a failure of the case). */
static struct profd_graph *start_stored(const char *mode, const char *dir,
                                        const char *queue_extra, struct profd_loader **l)
{
    char yaml[1024];
    snprintf(yaml, sizeof(yaml), STORED_GRAPH, mode, dir, queue_extra);
    return begin_case(yaml, l);
}

/* Puts a file among the records in directory own that is not one the store
 * wrote (id 99). */
static void put_junk_record(const char *own)
{
    char junk[300];
    snprintf(junk, sizeof(junk), "%s/%020d.rec", own, 99);
    FILE *f = fopen(junk, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("not a record", f);
        fclose(f);
    }
}

/* Records the drain could not send stay in the queue's storage, their acks
 * not failed (they are taken); the next start sends them, as they were,
 * and their files go once they went. A file that does not read back is
 * moved aside and counted as dropped. */
TEST(a_stored_queue_keeps_what_the_drain_left_for_the_next_start)
{
    char dir[] = "/tmp/profd-store-XXXXXX", own[256], rejected[300];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(own, sizeof(own), "%s/sink_st", dir);
    snprintf(rejected, sizeof(rejected), "%s/rejected", own);
    ack_calls = ack_failures = 0;
    struct profd_loader *l;
    struct profd_graph *g = start_stored("retry_always", dir, "", &l);
    if (!g)
        return;
    for (int i = 0; i < 3; i++)
        CHECK_INT(emit_valid(i), PROFD_OK);
    stop_graph(g, l);
    CHECK_INT(counter("sink/st", "exporter", PROFD_C_DROPPED_RECORDS), 0);
    CHECK_INT(ack_calls, 3);
    CHECK_INT(ack_failures, 0);
    CHECK_INT(files_in(own, ".rec"), 3);
    put_junk_record(own);   /* a fourth file */

    g = start_stored("ok", dir, "", &l);
    if (!g)
        return;
    CHECK(wait_delivered(3));
    CHECK_INT(counter("sink/st", "exporter", PROFD_C_DROPPED_RECORDS), 1);   /* the junk */
    for (int i = 0; i < 500 && files_in(own, ".rec"); i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    CHECK_INT(files_in(own, ".rec"), 0);
    CHECK_INT(files_in(rejected, ".rec"), 1);
    CHECK_INT(files_in(rejected, ".error"), 1);
    stop_graph(g, l);
    CHECK_INT(counter("sink/st", "exporter", PROFD_C_SENT_RECORDS), 3);
    remove_tree(dir);
}

/* Records sent, and records failed for good, leave no file behind. */
TEST(a_stored_queue_removes_what_it_settled)
{
    char dir[] = "/tmp/profd-store-XXXXXX", own[256];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(own, sizeof(own), "%s/sink_st", dir);
    const char *modes[] = {"ok", "fail"};
    for (size_t m = 0; m < 2; m++) {
        struct profd_loader *l;
        struct profd_graph *g = start_stored(modes[m], dir, "", &l);
        if (!g)
            return;
        CHECK_INT(emit_valid(0), PROFD_OK);
        stop_graph(g, l);
        CHECK_INT(files_in(own, ".rec"), 0);
    }
    remove_tree(dir);
}

/* With memory_size smaller than a record, every record is kept in its file
 * alone, taken (its ack fires as the push ends) and read back when its
 * turn comes, in order and as it was; what the drain leaves stays, and the
 * next start sends it the same way. */
TEST(a_stored_queue_reads_back_what_memory_has_no_room_for)
{
    char dir[] = "/tmp/profd-store-XXXXXX", own[256];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(own, sizeof(own), "%s/sink_st", dir);
    ack_calls = ack_failures = 0;
    struct profd_loader *l;
    struct profd_graph *g = start_stored("ok", dir, ", memory_size: 1", &l);
    if (!g)
        return;
    set_gate(true);
    for (int i = 0; i < 3; i++)
        CHECK_INT(emit_valid(i), PROFD_OK);
    wait_queue_holds("sink/st", 2);   /* the sender took the first, read it back, waits */
    CHECK_INT(gauge("sink/st", PROFD_G_QUEUE_RECORDS), 2);
    CHECK_INT(gauge("sink/st", PROFD_G_QUEUE_MEMORY_BYTES), 0);
    CHECK(gauge("sink/st", PROFD_G_QUEUE_BYTES) > 0);
    CHECK_INT(gauge("sink/st", PROFD_G_STORED_RECORDS), 3);
    CHECK_INT(ack_calls, 3);   /* taken: the files hold them */
    CHECK_INT(ack_failures, 0);
    set_gate(false);
    CHECK(wait_delivered(3));
    CHECK_STR(labels_seen, "012");
    stop_graph(g, l);
    CHECK_INT(files_in(own, ".rec"), 0);
    CHECK_INT(gauge("sink/st", PROFD_G_STORED_RECORDS), 0);

    g = start_stored("retry_always", dir, ", memory_size: 1", &l);
    if (!g)
        return;
    uint64_t dropped = counter("sink/st", "exporter", PROFD_C_DROPPED_RECORDS);
    for (int i = 3; i < 6; i++)
        CHECK_INT(emit_valid(i), PROFD_OK);
    stop_graph(g, l);   /* the drain gives up: one retried, two in their files alone */
    CHECK_INT(files_in(own, ".rec"), 3);
    CHECK_INT(counter("sink/st", "exporter", PROFD_C_DROPPED_RECORDS), dropped);
    put_junk_record(own);   /* found out as it is read back */

    g = start_stored("ok", dir, ", memory_size: 1", &l);
    if (!g)
        return;
    CHECK(wait_delivered(3));
    CHECK_STR(labels_seen, "345");
    stop_graph(g, l);
    CHECK_INT(files_in(own, ".rec"), 0);
    CHECK_INT(counter("sink/st", "exporter", PROFD_C_DROPPED_RECORDS), dropped + 1);
    remove_tree(dir);
}

TEST(a_draining_queue_takes_nothing_more_and_says_retry)
{
    struct profd_loader *l;
    struct profd_graph *g = begin_case(
        "receivers: {src/dr: {}}\n"
        "exporters: {sink/dr: {sending_queue: {full_policy: drop}}}\n"
        "service: {pipelines: {profiles: {receivers: [src/dr], exporters: [sink/dr]}}}\n",
        &l);
    if (!g)
        return;
    CHECK_INT(emit_one(false), PROFD_OK);
    CHECK(wait_delivered(1));
    profd_queue_drain(g->nodes[0]->queue);   /* the exporter, first of the nodes */
    CHECK_INT(emit_one(false), PROFD_ERETRY);   /* its sender keeps it */
    stop_graph(g, l);
    CHECK_INT(counter("sink/dr", "exporter", PROFD_C_DROPPED_RECORDS), 0);
    CHECK_INT(counter("sink/dr", "exporter", PROFD_C_SENT_RECORDS), 1);
}

TEST(a_slow_processor_downstream_is_known_to_its_receivers)
{
    struct profd_loader *l;
    struct profd_graph *g = begin_case(
        "receivers: {src/fast: {}, src/slow: {}}\n"
        "processors: {mut/a: {}, slow/b: {}}\n"
        "exporters: {sink/s: {}}\n"
        "service: {pipelines: {\n"
        "  profiles/fast: {receivers: [src/fast], processors: [mut/a], exporters: [sink/s]},\n"
        "  profiles/slow: {receivers: [src/slow], processors: [mut/a, slow/b], "
        "exporters: [sink/s]}}}\n",
        &l);
    if (!g)
        return;
    for (size_t i = 0; i < g->n; i++) {
        const struct profd_component *c = g->nodes[i];
        if (!strcmp(c->id, "src/fast") || !strcmp(c->id, "sink/s"))
            CHECK(!profd_graph_slow(c));
        else if (!strcmp(c->id, "src/slow"))
            CHECK(profd_graph_slow(c));   /* behind a processor that is not slow itself */
    }
    stop_graph(g, l);
}

TEST(an_exporter_that_syncs_its_stored_queue_is_slow_to_its_receivers)
{
    char dir[] = "/tmp/profd-slow-XXXXXX", yaml[600];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(yaml, sizeof(yaml),
             "receivers: {src/kept: {}, src/synced: {}}\n"
             "processors: {mut/a: {}}\n"
             "exporters: {sink/kept: {sending_queue: {storage: %s}},\n"
             "            sink/synced: {sending_queue: {storage: %s, storage_fsync: true}}}\n"
             "service: {pipelines: {\n"
             "  profiles/kept: {receivers: [src/kept], processors: [mut/a], "
             "exporters: [sink/kept]},\n"
             "  profiles/synced: {receivers: [src/synced], processors: [mut/a], "
             "exporters: [sink/synced]}}}\n", dir, dir);
    struct profd_loader *l;
    struct profd_graph *g = begin_case(yaml, &l);
    if (g) {
        for (size_t i = 0; i < g->n; i++) {
            const struct profd_component *c = g->nodes[i];
            if (!strcmp(c->id, "src/kept"))
                CHECK(!profd_graph_slow(c));
            else if (!strcmp(c->id, "src/synced"))
                CHECK(profd_graph_slow(c));
        }
        stop_graph(g, l);
    }
    remove_tree(dir);
}

TEST(backoff_grows_and_is_capped)
{
    int64_t s = 1000000000;
    CHECK_INT(profd_backoff_ns(s, 30 * s, 0, 500), s);        /* jitter factor 1.0 */
    CHECK_INT(profd_backoff_ns(s, 30 * s, 1, 500), 3 * s / 2);
    CHECK_INT(profd_backoff_ns(s, 30 * s, 40, 500), 30 * s);
    CHECK(profd_backoff_ns(s, 30 * s, 0, 0) == s / 2);
    CHECK(profd_backoff_ns(s, 30 * s, 0, 999) < 3 * s / 2);
}

TEST(module_abi_mismatch_is_refused)
{
    struct profd_plugin bad = test_modules[2];
    bad.abi_version = PROFD_ABI_VERSION + 1;
    char err[256];
    struct profd_loader *l = profd_loader_create(NULL, 0);
    CHECK_INT(profd_loader_register(l, &bad, err, sizeof(err)), -1);
    char want[96];
    snprintf(want, sizeof(want), "built for ABI version %d, this profd speaks version %d",
             PROFD_ABI_VERSION + 1, PROFD_ABI_VERSION);
    CHECK_CONTAINS(err, want);
    bad = test_modules[2];
    bad.struct_size -= 8;
    CHECK_INT(profd_loader_register(l, &bad, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, "descriptor is");
    CHECK(profd_loader_get(l, PROFD_EXPORTER, "nosuch", err, sizeof(err)) == NULL);
    CHECK_CONTAINS(err, "no module for exporter 'nosuch' (looked for ");
    profd_loader_destroy(l);
}

RUN_TESTS()
