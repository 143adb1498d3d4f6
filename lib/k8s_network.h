// SPDX-License-Identifier: Apache-2.0
/*
 * The fields of the kinds of a service's network, read into a k8s_pod
 * (k8s_pods.h) beside its metadata: an EndpointSlice's address type,
 * endpoints and ports; an Endpoints object's subsets (each address an
 * endpoint, each with its subset's ports); a Service's type, addresses
 * and ports; an Ingress's class, rules and TLS hosts. An object of
 * another kind has none of them (NULL, 0).
 */
#ifndef PROFD_LIB_K8S_NETWORK_H
#define PROFD_LIB_K8S_NETWORK_H

#include <jansson.h>

#include "k8s_pods.h"

/* Reads those of item (the object's JSON) into p, whose fields of these
 * kinds are zero. */
void k8s_network_read(struct k8s_pod *p, json_t *item);

/* Frees those of p. */
void k8s_network_free(struct k8s_pod *p);

#endif
