// SPDX-License-Identifier: Apache-2.0
/* Tenants as Grafana's multi-tenant stores name them: the X-Scope-OrgID
 * header a push comes with, kept on its records as the label __tenant_id__
 * (relabeling may set or drop it), and sent on as that header. */
#ifndef PROFD_LIB_TENANT_ID_H
#define PROFD_LIB_TENANT_ID_H

#include <stdbool.h>
#include <stddef.h>

/* The label a record's tenant travels in through a pipeline. */
#define TENANT_LABEL "__tenant_id__"

/* The header that names a request's tenant. */
#define TENANT_HEADER "X-Scope-OrgID"

/* The longest tenant ID those stores take. */
#define TENANT_ID_MAX 150

/* Whether tenant is a tenant ID as Pyroscope's (and Mimir's) multi-tenant
 * mode takes one: letters, digits and !-_.*'(), at most TENANT_ID_MAX of
 * them, not "." or "..". NULL and "" (no tenant) are valid. False with
 * why set to what is wrong. */
bool tenant_id_valid(const char *tenant, char *why, size_t whylen);

/* Whether a and b name the same tenant, or both none (NULL). */
bool tenant_id_same(const char *a, const char *b);

#endif
