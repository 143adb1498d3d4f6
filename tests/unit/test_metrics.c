// SPDX-License-Identifier: Apache-2.0
/* The registry's free-form gauges (core/metrics.c): set, watched (read
 * when /metrics is rendered) and removed. */
#include "check.h"

#include "../../core/metrics.h"

TEST(a_watched_gauge_reads_its_source_at_each_render_until_removed)
{
    atomic_size_t open = 3;
    profd_metrics_gauge_set("profd_t_set", "a set gauge", "c", "k=\"v\"", 1.5);
    profd_metrics_gauge_watch("profd_t_watched", "a watched gauge", "c", "loop=\"0\"", &open);
    char *text = profd_metrics_render();
    CHECK_CONTAINS(text, "profd_t_set{component=\"c\",k=\"v\"} 1.5\n");
    CHECK_CONTAINS(text, "profd_t_watched{component=\"c\",loop=\"0\"} 3\n");
    free(text);
    atomic_store(&open, 7);
    text = profd_metrics_render();
    CHECK_CONTAINS(text, "profd_t_watched{component=\"c\",loop=\"0\"} 7\n");
    free(text);
    profd_metrics_gauge_del("profd_t_watched", "c", "loop=\"0\"");
    profd_metrics_gauge_del("profd_t_watched", "c", "loop=\"9\"");   /* none: a no-op */
    text = profd_metrics_render();
    CHECK(!strstr(text, "profd_t_watched"));
    CHECK_CONTAINS(text, "profd_t_set{");
    free(text);
    profd_metrics_free_all();
}

RUN_TESTS()
