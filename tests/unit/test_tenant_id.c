// SPDX-License-Identifier: Apache-2.0
/* Tenant IDs as multi-tenant stores take them (lib/tenant_id.c). */
#include "check.h"

#include "../../lib/tenant_id.c"

TEST(no_tenant_and_plain_ids_are_valid)
{
    char why[128] = "";
    CHECK(tenant_id_valid(NULL, why, sizeof(why)));
    CHECK(tenant_id_valid("", why, sizeof(why)));
    CHECK(tenant_id_valid("team-a", why, sizeof(why)));
    CHECK(tenant_id_valid("Az09!-_.*'()", why, sizeof(why)));
    CHECK(tenant_id_valid("...", why, sizeof(why)));   /* only "." and ".." are paths */
    char longest[TENANT_ID_MAX + 1];
    memset(longest, 'x', TENANT_ID_MAX);
    longest[TENANT_ID_MAX] = '\0';
    CHECK(tenant_id_valid(longest, why, sizeof(why)));
    CHECK_STR(why, "");
}

TEST(each_fault_is_named)
{
    char why[128];
    CHECK(!tenant_id_valid("a/b", why, sizeof(why)));
    CHECK_STR(why, "tenant ID contains unsupported character '/'");
    CHECK(!tenant_id_valid("a\r\nInjected: 1", why, sizeof(why)));   /* no header smuggled */
    CHECK_STR(why, "tenant ID contains unsupported byte 0x0d");
    CHECK(!tenant_id_valid("a b", why, sizeof(why)));
    CHECK_STR(why, "tenant ID contains unsupported byte 0x20");
    CHECK(!tenant_id_valid(".", why, sizeof(why)));
    CHECK_STR(why, "tenant ID is '.' or '..'");
    CHECK(!tenant_id_valid("..", why, sizeof(why)));
    char over[TENANT_ID_MAX + 2];
    memset(over, 'x', TENANT_ID_MAX + 1);
    over[TENANT_ID_MAX + 1] = '\0';
    CHECK(!tenant_id_valid(over, why, sizeof(why)));
    CHECK_STR(why, "tenant ID is too long: max 150 characters");
}

RUN_TESTS()
