// SPDX-License-Identifier: Apache-2.0
/*
 * processor memory_limiter: the OpenTelemetry Collector's memory limiter.
 * Every check_interval it measures the memory profd uses (its anonymous
 * resident memory, lib/memory_usage.h); while that is above the soft limit
 * (the limit less spike_limit) it refuses what comes with "retry later"
 * (PROFD_ERETRY: push receivers answer 429/503/UNAVAILABLE, pprof_file
 * tries its files again later, a scrape is dropped). Over the soft limit
 * it first has the allocator give back the memory it keeps free (freed,
 * but not yet returned to the system) and measures again, as the
 * Collector forces a garbage collection over its hard limit: here that
 * costs a few milliseconds, and without it memory freed under a burst
 * would keep data refused until the allocator returned it on its own
 * (seconds later). Below the soft limit again, what comes goes on. With
 * limit_percentage the limits follow the memory there is for profd, read
 * again at each check: a container's memory limit changed in place (as
 * Kubernetes resizes a pod) moves them. Put it
 * first among a pipeline's processors, so that what it refuses costs
 * nothing more.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "../../lib/memory_release.h"
#include "../../lib/memory_usage.h"
#include "../../lib/tick.h"
#include "profd/plugin.h"

#define MIB ((uint64_t)1 << 20)
#define MAX_MIB ((int64_t)1 << 30)   /* 1 PiB: in bytes, far from overflowing */
#define IN_USE_GAUGE "profd_memory_limiter_in_use_bytes"
#define REFUSING_GAUGE "profd_memory_limiter_refusing"
#define SOFT_LIMIT_GAUGE "profd_memory_limiter_soft_limit_bytes"

struct config {
    int64_t check_interval;
    int64_t limit_mib, spike_limit_mib;
    int64_t limit_percentage, spike_limit_percentage;
};

static const struct profd_option options[] = {
    {"check_interval", PROFD_OPT_DURATION, offsetof(struct config, check_interval), "1s",
     "how often the memory in use is measured"},
    {"limit_mib", PROFD_OPT_INT, offsetof(struct config, limit_mib), "0",
     "the hard limit, in MiB of memory in use (anonymous resident memory); when set, "
     "limit_percentage is not used"},
    {"spike_limit_mib", PROFD_OPT_INT, offsetof(struct config, spike_limit_mib), "0",
     "the most memory use may grow between checks, in MiB: data is refused above limit_mib "
     "less this; 0 for a fifth of limit_mib"},
    {"limit_percentage", PROFD_OPT_INT, offsetof(struct config, limit_percentage), "80",
     "the hard limit as a percentage of the memory there is for profd (the machine's, or "
     "its cgroup's memory limit when lower), when limit_mib is 0"},
    {"spike_limit_percentage", PROFD_OPT_INT, offsetof(struct config, spike_limit_percentage),
     "0", "spike_limit_mib as a percentage of the same memory, with limit_percentage; 0 for "
     "a fifth of limit_percentage"},
    {0},
};

struct state {
    const struct profd_host *host;
    struct profd_component *self;
    const struct config *cfg;
    uint64_t hard, soft;     /* bytes; hard is what is said, soft what counts */
    uint64_t available;      /* with limit_percentage: the memory there is, as last read */
    atomic_bool refusing;
    struct event *tick;
};

static int validate(const struct profd_host *host, struct profd_diag *d, const void *cfgp)
{
    const struct config *c = cfgp;
    int rc = PROFD_OK;
    if (c->check_interval <= 0) {
        host->diag(d, &c->check_interval, "check_interval must be above 0");
        rc = PROFD_ERR;
    }
    const int64_t *fields[] = {&c->limit_mib, &c->spike_limit_mib, &c->limit_percentage,
                               &c->spike_limit_percentage};
    for (size_t i = 0; i < 4; i++)
        if (*fields[i] < 0 || *fields[i] > (i >= 2 ? 100 : MAX_MIB)) {
            host->diag(d, fields[i], i >= 2 ? "a percentage is from 0 to 100" :
                                              "a size in MiB is from 0 to 2^30 (1 PiB)");
            rc = PROFD_ERR;
        }
    if (rc != PROFD_OK)
        return rc;
    if (!c->limit_mib && !c->limit_percentage) {
        host->diag(d, &c->limit_percentage, "limit_percentage 0 with no limit_mib limits nothing");
        rc = PROFD_ERR;
    } else if (c->limit_mib && c->spike_limit_mib >= c->limit_mib) {
        host->diag(d, &c->spike_limit_mib, "spike_limit_mib must be below limit_mib");
        rc = PROFD_ERR;
    } else if (!c->limit_mib && c->spike_limit_percentage >= c->limit_percentage) {
        host->diag(d, &c->spike_limit_percentage,
                   "spike_limit_percentage must be below limit_percentage");
        rc = PROFD_ERR;
    }
    return rc;
}

static double in_mib(uint64_t bytes)
{
    return (double)bytes / (double)MIB;
}

/* The limits in bytes into s: from limit_mib, or from limit_percentage
 * of available, the memory there is for profd. */
static void set_limits(struct state *s, uint64_t available)
{
    const struct config *c = s->cfg;
    uint64_t spike;
    if (c->limit_mib) {
        s->hard = (uint64_t)c->limit_mib * MIB;
        spike = c->spike_limit_mib ? (uint64_t)c->spike_limit_mib * MIB : s->hard / 5;
    } else {
        s->hard = available / 100 * (uint64_t)c->limit_percentage;
        spike = c->spike_limit_percentage ? available / 100 * (uint64_t)c->spike_limit_percentage
                                          : s->hard / 5;
    }
    s->soft = s->hard - spike;
    s->available = available;
}

/* With limit_percentage: the limits moved, and said, when the memory
 * there is for profd is no longer what it was (unless it cannot be read
 * now: then they stay). */
static void follow_available(struct state *s)
{
    uint64_t was = s->available, available = memory_available("");
    if (!available || available == was)
        return;
    set_limits(s, available);
    s->host->log(s->self, PROFD_LOG_INFO, "the memory there is for profd is now %.1f MiB (was "
                 "%.1f): limit %.1f MiB, data refused above %.1f MiB", in_mib(available),
                 in_mib(was), in_mib(s->hard), in_mib(s->soft));
}

/* One measure: refusing or not from now on, said when that changes. Loop
 * thread. */
static void check(struct state *s)
{
    if (!s->cfg->limit_mib)
        follow_available(s);
    uint64_t used;
    if (!memory_in_use("", &used))
        return;   /* as it was */
    if (used > s->soft && memory_release())   /* what the allocator keeps free goes back */
        memory_in_use("", &used);
    bool refuse = used > s->soft;
    bool was = atomic_exchange(&s->refusing, refuse);
    if (refuse && !was)
        s->host->log(s->self, PROFD_LOG_WARN, "%.1f MiB in use, over the soft limit of %.1f MiB: "
                     "refusing data until it is under", in_mib(used), in_mib(s->soft));
    else if (!refuse && was)
        s->host->log(s->self, PROFD_LOG_INFO, "%.1f MiB in use, under the soft limit again: "
                     "taking data", in_mib(used));
    s->host->gauge_set(s->self, IN_USE_GAUGE, "memory in use (anonymous resident) at the "
                       "last check", "", (double)used);
    s->host->gauge_set(s->self, REFUSING_GAUGE, "1 while data is refused for memory, else 0",
                       "", refuse);
    s->host->gauge_set(s->self, SOFT_LIMIT_GAUGE, "memory in use above which data is refused",
                       "", (double)s->soft);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    check(arg);
}

/* The limits of config c at start, said in the log; false when
 * limit_percentage cannot be worked out. */
static bool first_limits(struct state *s, const struct config *c)
{
    if (c->limit_mib) {
        set_limits(s, 0);
        s->host->log(s->self, PROFD_LOG_INFO, "limit %.1f MiB, data refused above %.1f MiB",
                     in_mib(s->hard), in_mib(s->soft));
        return true;
    }
    uint64_t available = memory_available("");
    if (!available) {
        s->host->log(s->self, PROFD_LOG_ERROR, "limit_percentage: the memory there is "
                     "cannot be read (/proc/meminfo)");
        return false;
    }
    set_limits(s, available);
    s->host->log(s->self, PROFD_LOG_INFO, "limit %.1f MiB (%" PRId64 "%% of %.1f MiB), data "
                 "refused above %.1f MiB", in_mib(s->hard), c->limit_percentage,
                 in_mib(available), in_mib(s->soft));
    return true;
}

static int create(const struct profd_host *host, struct profd_component *self, const void *cfg,
                  void **out)
{
    struct state *s = calloc(1, sizeof(*s));
    if (!s)
        return PROFD_ERR;
    *s = (struct state){.host = host, .self = self, .cfg = cfg};
    if (!first_limits(s, cfg)) {
        free(s);
        return PROFD_ERR;
    }
    *out = s;
    return PROFD_OK;
}

static int start(void *st)
{
    struct state *s = st;
    check(s);
    s->tick = tick_start(s->host, s->self, s->cfg->check_interval, on_tick, s);
    return s->tick ? PROFD_OK : PROFD_ERR;
}

static int consume(void *st, struct profd_batch *b)
{
    struct state *s = st;
    if (b->nrecords && atomic_load_explicit(&s->refusing, memory_order_relaxed)) {
        s->host->count(s->self, PROFD_C_RETRY_LATER_RECORDS, b->nrecords);
        return PROFD_ERETRY;
    }
    return s->host->emit(s->self, b);
}

static int shutdown_limiter(void *st)
{
    struct state *s = st;
    tick_stop(&s->tick);
    atomic_store(&s->refusing, false);   /* what drains goes on */
    return PROFD_OK;
}

static void destroy(void *st)
{
    if (st)
        shutdown_limiter(st);
    free(st);
}

static const struct profd_plugin plugin = {
    PROFD_PLUGIN_HEADER,
    .kind = PROFD_PROCESSOR,
    .type = "memory_limiter",
    .description = "refuses data (retry later) while profd's memory in use is over a limit, "
                   "as the OpenTelemetry Collector's memory_limiter",
    .options = options,
    .config_size = sizeof(struct config),
    .flags = PROFD_PLUGIN_CONCURRENT,
    .validate = validate,
    .create = create,
    .start = start,
    .consume = consume,
    .shutdown = shutdown_limiter,
    .destroy = destroy,
};

PROFD_PLUGIN_DEFINE(plugin)
