// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: Prometheus file_sd files (YAML or JSON) as the scrape
 * receiver reads them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../core/sd_file.h"

/* The one file each input is written to, in TMPDIR, removed at exit. */
static char path[4096];

static void remove_input_file(void)
{
    unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    if (!path[0]) {
        const char *dir = getenv("TMPDIR");
        snprintf(path, sizeof(path), "%s/profd-fuzz-sd-%d.yaml", dir && *dir ? dir : "/tmp",
                 (int)getpid());
        atexit(remove_input_file);
    }
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
