// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: Prometheus file_sd files named .json (JSON, read as
 * YAML once its surrogate pair escapes are made YAML's) as the scrape
 * receiver reads them, and the same text as an http_sd endpoint's answer
 * (which stops at a NUL byte): read both ways, a text without one gives
 * the same groups. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
        snprintf(path, sizeof(path), "%s/profd-fuzz-sd-%d.json", dir && *dir ? dir : "/tmp",
                 (int)getpid());
        atexit(remove_input_file);
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fwrite(data, 1, len, f);
    fclose(f);
    struct profd_target_group *groups, *parsed;
    size_t n, nparsed;
    char err[256];
    int read = profd_sd_file_read(path, &groups, &n, err, sizeof(err));
    char *text = malloc(len + 1);
    if (!text)
        abort();
    memcpy(text, data, len);
    text[len] = '\0';
    int parse = profd_sd_parse("the answer", text, &parsed, &nparsed, err, sizeof(err));
    if (!memchr(data, 0, len) && (read != parse || (read == 0 && n != nparsed)))
        abort();   /* the file and the same text read differently */
    if (read == 0)
        profd_sd_groups_free(groups, n);
    if (parse == 0)
        profd_sd_groups_free(parsed, nparsed);
    free(text);
    return 0;
}
