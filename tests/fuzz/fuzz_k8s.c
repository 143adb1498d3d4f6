// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: what the k8s_metadata processor reads. The first
 * byte picks the reader: a process's cgroup file (even) or a PodList from
 * the Kubernetes API (odd), looked up by the ids, UIDs and IPs it names;
 * the rest is the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../processors/k8s_metadata/cgroup.h"
#include "../../processors/k8s_metadata/pods.h"

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
    for (size_t i = 0; ix && i < ix->npods; i++)
        pod_index_uid(ix, ix->pods[i].uid);
    for (size_t i = 0; ix && i < ix->nips; i++)
        pod_index_ip(ix, ix->ips[i].ip);
    pod_index_free(ix);
    return 0;
}
