// SPDX-License-Identifier: Apache-2.0
/*
 * What the readers of Kubernetes objects share (k8s_pods.c, which reads
 * pods and nodes, and k8s_network.c, which reads the kinds of a service's
 * network): strings, name/value pairs and ports, read from the API's JSON,
 * copied and freed. Every allocation failure aborts.
 */
#ifndef PROFD_LIB_K8S_JSON_H
#define PROFD_LIB_K8S_JSON_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "k8s_pods.h"

/* obj's string member key, malloc'd; "" when absent or not a string. */
char *k8s_json_string(json_t *obj, const char *key);

/* The string members of obj (NULL or another type: none) into *p, empty
 * before, in obj's order. */
void k8s_pairs_read(json_t *obj, struct k8s_pairs *p);

/* Frees what p holds (not p). */
void k8s_pairs_free(struct k8s_pairs *p);

/* A port object's name, protocol (TCP when it says none, as the API
 * defaults it) and appProtocol into *p, with number, subset 0. */
void k8s_port_read(json_t *port, uint32_t number, struct k8s_port *p);

/* Frees the n ports of ports and the array (NULL: none). */
void k8s_ports_free(struct k8s_port *ports, size_t n);

#endif
