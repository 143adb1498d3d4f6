// SPDX-License-Identifier: Apache-2.0
#include "tenant_id.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

bool tenant_id_valid(const char *tenant, char *why, size_t whylen)
{
    if (!tenant)
        return true;
    for (const char *c = tenant; *c; c++)
        if (!(isalnum((unsigned char)*c) || strchr("!-_.*'()", *c))) {
            if (isgraph((unsigned char)*c))
                snprintf(why, whylen, "tenant ID contains unsupported character '%c'", *c);
            else
                snprintf(why, whylen, "tenant ID contains unsupported byte 0x%02x",
                         (unsigned char)*c);
            return false;
        }
    if (strlen(tenant) > TENANT_ID_MAX) {
        snprintf(why, whylen, "tenant ID is too long: max %d characters", TENANT_ID_MAX);
        return false;
    }
    if (!strcmp(tenant, ".") || !strcmp(tenant, "..")) {
        snprintf(why, whylen, "tenant ID is '.' or '..'");
        return false;
    }
    return true;
}

bool tenant_id_same(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}
