// SPDX-License-Identifier: Apache-2.0
/* Role ingress: the targets of one Ingress (k8s_sd.h). */
#include <string.h>

#include "k8s_sd.h"

#define META "__meta_kubernetes_"

/* Whether TLS host pattern names host: the same name, or a wildcard
 * ("*.example.com") in place of its first label, as Prometheus matches. */
static bool names_host(const char *pattern, const char *host)
{
    if (!strcmp(pattern, host))
        return true;
    if (pattern[0] != '*' || (pattern[1] != '.' && pattern[1] != '\0'))
        return false;
    const char *dot = strchr(host, '.');
    return pattern[1] == '\0' ? dot == NULL : dot && !strcmp(dot + 1, pattern + 2);
}

static const char *scheme_of(const struct k8s_pod *ingress, const char *host)
{
    for (size_t i = 0; i < ingress->ntls_hosts; i++)
        if (names_host(ingress->tls_hosts[i], host))
            return "https";
    return "http";
}

void k8s_sd_ingress_groups(const struct profd_host *h, const struct k8s_pod *ingress,
                           struct profd_target_group **groups, size_t *n, size_t *cap)
{
    struct profd_labels labels = {0};
    h->labels_set(&labels, META "namespace", ingress->namespace);
    h->labels_set(&labels, META "ingress_name", ingress->name);
    if (ingress->ingress_class)
        h->labels_set(&labels, META "ingress_class_name", ingress->ingress_class);
    k8s_sd_set_pairs(h, &labels, &ingress->labels, "ingress_label_", "ingress_labelpresent_");
    k8s_sd_set_pairs(h, &labels, &ingress->annotations, "ingress_annotation_",
                     "ingress_annotationpresent_");
    for (size_t r = 0; r < ingress->nrules; r++) {
        const struct k8s_ingress_rule *rule = &ingress->rules[r];
        if (!*rule->host)
            continue;   /* no address to scrape */
        for (size_t p = 0; p < rule->npaths; p++) {
            struct profd_target_group *g = k8s_sd_add_group(h, rule->host, NULL, &labels,
                                                            groups, n, cap);
            h->labels_set(&g->labels, META "ingress_scheme", scheme_of(ingress, rule->host));
            h->labels_set(&g->labels, META "ingress_host", rule->host);
            h->labels_set(&g->labels, META "ingress_path", rule->paths[p]);
        }
    }
    h->labels_clear(&labels);
}
