// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: what profd reads of Kubernetes. The first byte picks
 * the reader: a process's cgroup file (even), as the k8s_metadata
 * processor reads it, or a PodList from the Kubernetes API (odd), looked
 * up by the ids, UIDs and IPs it names and made scrape targets as the
 * scrape receiver's kubernetes_sd_configs make them; the rest is the
 * input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/labels.h"
#include "../../processors/k8s_metadata/cgroup.h"
#include "../../processors/k8s_metadata/pods.h"
#include "../../receivers/pprof_scrape/k8s_sd.h"

static const struct profd_host host = {
    .labels_set = profd_labels_set,
    .labels_get = profd_labels_get,
    .labels_copy = profd_labels_copy,
    .labels_clear = profd_labels_clear,
};

/* The scrape targets of ix's pods: each an address and the pod's name. */
static void make_targets(const struct pod_index *ix)
{
    struct profd_target_group *groups = NULL;
    size_t n = 0, cap = 0;
    k8s_sd_groups(&host, &ix->list, &groups, &n, &cap);
    for (size_t i = 0; i < n; i++) {
        if (groups[i].targets.n != 1 || !*groups[i].targets.items[0] ||
            !profd_labels_get(&groups[i].labels, "__meta_kubernetes_pod_name"))
            abort();   /* a target without its address or pod */
        free(groups[i].targets.items[0]);
        free(groups[i].targets.items);
        profd_labels_clear(&groups[i].labels);
    }
    free(groups);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    if (len == 0)
        return 0;
    const char *text = (const char *)data + 1;
    if (data[0] % 2 == 0) {
        char id[CONTAINER_ID_SIZE], uid[POD_UID_SIZE];
        if (cgroup_container(text, len - 1, id, uid) && strlen(id) + strlen(uid) == 0)
            abort();   /* found, yet named nothing */
        return 0;
    }
    char why[256];
    struct pod_index *ix = pod_index_parse(text, len - 1, why, sizeof(why));
    for (size_t i = 0; ix && i < ix->ncontainers; i++) {
        const char *container;
        if (pod_index_container(ix, ix->containers[i].id, &container) == NULL)
            abort();   /* a listed container not found */
    }
    for (size_t i = 0; ix && i < ix->list.n; i++)
        pod_index_uid(ix, ix->list.pods[i].uid);
    for (size_t i = 0; ix && i < ix->nips; i++)
        pod_index_ip(ix, ix->ips[i].ip);
    if (ix)
        make_targets(ix);
    pod_index_free(ix);
    return 0;
}
