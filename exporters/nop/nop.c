// SPDX-License-Identifier: Apache-2.0
/* exporter nop: accepts every record and does nothing with it, as the
 * OpenTelemetry Collector's nop exporter: for benchmarks and for pipelines
 * whose only purpose is their receivers' side effects. */
#include <stdlib.h>

#include "profd/plugin.h"

static const struct profd_option options[] = {{0}};

static int create(const struct profd_host *host, struct profd_component *self, const void *cfg,
                  void **out)
{
    (void)host;
    (void)self;
    (void)cfg;
    *out = NULL;
    return PROFD_OK;
}

static int consume(void *st, struct profd_batch *b)
{
    (void)st;
    (void)b;
    return PROFD_OK;
}

static void destroy(void *st)
{
    (void)st;
}

static const struct profd_plugin plugin = {
    PROFD_PLUGIN_HEADER,
    .kind = PROFD_EXPORTER,
    .type = "nop",
    .description = "accepts every profile and discards it",
    .options = options,
    .config_size = 0,
    .create = create,
    .consume = consume,
    .destroy = destroy,
};

PROFD_PLUGIN_DEFINE(plugin)
