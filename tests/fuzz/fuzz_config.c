// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: YAML text through the tree loader and the service
 * parser, as `profd validate` would read it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../config/service.h"
#include "../../config/tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    char *text = malloc(len + 1);
    memcpy(text, data, len);
    text[len] = '\0';
    struct profd_diag d = {0};
    struct cfg_node *root = cfg_load_string("fuzz.yaml", text, &d);
    if (root)
        profd_config_free(profd_config_parse(root, &d));
    profd_diag_free(&d);
    free(text);
    return 0;
}
