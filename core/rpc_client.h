// SPDX-License-Identifier: Apache-2.0
/* Unary gRPC and HTTP calls for exporters (struct profd_client_options and
 * struct profd_call_result in plugin.h); see struct profd_host.client_*. */
#ifndef PROFD_RPC_CLIENT_H
#define PROFD_RPC_CLIENT_H

#include "profd/plugin.h"

struct profd_client *profd_client_new(const struct profd_client_options *o, char *err,
                                      size_t errlen);
int profd_client_call(struct profd_client *c, const char *path, const uint8_t *body, size_t len,
                      struct profd_call_result *res);
void profd_client_free(struct profd_client *c);

#endif
