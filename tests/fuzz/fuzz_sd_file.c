// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: Prometheus file_sd files (YAML or JSON) as the scrape
 * receiver reads them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../core/sd_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    static char path[64];
    if (!path[0])
        snprintf(path, sizeof(path), "/tmp/profd-fuzz-sd-%d.yaml", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fwrite(data, 1, len, f);
    fclose(f);
    struct profd_target_group *groups;
    size_t n;
    char err[256];
    if (profd_sd_file_read(path, &groups, &n, err, sizeof(err)) == 0)
        profd_sd_groups_free(groups, n);
    return 0;
}
