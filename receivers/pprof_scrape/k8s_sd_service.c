// SPDX-License-Identifier: Apache-2.0
/* Role service: the targets of one Service (k8s_sd.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/grow.h"
#include "k8s_sd.h"

#define META "__meta_kubernetes_"

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

void k8s_sd_service_groups(const struct profd_host *h, const struct k8s_pod *service,
                           struct profd_target_group **groups, size_t *n, size_t *cap)
{
    struct profd_labels labels = {0};
    k8s_sd_service_labels(h, service, &labels);
    const char *type = or_empty(service->service_type);
    h->labels_set(&labels, META "service_type", type);
    if (!strcmp(type, "ExternalName"))
        h->labels_set(&labels, META "service_external_name", or_empty(service->external_name));
    else
        h->labels_set(&labels, META "service_cluster_ip", or_empty(service->cluster_ip));
    if (!strcmp(type, "LoadBalancer"))
        h->labels_set(&labels, META "service_loadbalancer_ip",
                      or_empty(service->load_balancer_ip));
    char *host = must_asprintf("%s.%s.svc", service->name, service->namespace);
    for (size_t i = 0; i < service->nports; i++) {
        const struct k8s_port *port = &service->ports[i];
        if (!port->number)
            continue;   /* the API refuses such a port; a list never has one */
        struct profd_target_group *g = k8s_sd_add_group(h, host, &port->number, &labels, groups,
                                                        n, cap);
        char number[16];
        snprintf(number, sizeof(number), "%u", port->number);
        h->labels_set(&g->labels, META "service_port_name", port->name);
        h->labels_set(&g->labels, META "service_port_number", number);
        h->labels_set(&g->labels, META "service_port_protocol", port->protocol);
    }
    free(host);
    h->labels_clear(&labels);
}
