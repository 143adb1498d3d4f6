// SPDX-License-Identifier: Apache-2.0
/* The OTLP receiver's answers: google.rpc.Status for errors, and the
 * ExportProfilesServiceResponse with its partial success. */
#ifndef PROFD_OTLP_STATUS_H
#define PROFD_OTLP_STATUS_H

#include <stdbool.h>
#include <stddef.h>

#include "profd/plugin.h"

enum {
    STATUS_INVALID_ARGUMENT = 3,
    STATUS_UNIMPLEMENTED = 12,
    STATUS_UNAVAILABLE = 14,
    STATUS_UNAUTHENTICATED = 16,
};

/* How an answer is encoded: gRPC (status only), or an HTTP body. */
enum answer_format { ANSWER_GRPC, ANSWER_PROTOBUF, ANSWER_JSON };

/* An error with res->message already written: the gRPC status, or for HTTP
 * http_status with a google.rpc.Status body in the request's encoding. */
void status_error(struct profd_rpc_response *res, enum answer_format format, int code,
                  int http_status);

/* The success body: empty, or a partial success naming rejected profiles. */
void export_response(struct profd_rpc_response *res, size_t rejected, const char *message);

#endif
