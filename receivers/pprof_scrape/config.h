// SPDX-License-Identifier: Apache-2.0
/* receiver pprof_scrape: configuration, in Prometheus's scrape_configs shape. */
#ifndef PPROF_SCRAPE_CONFIG_H
#define PPROF_SCRAPE_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "../../lib/client_auth.h"
#include "../../lib/client_tls.h"
#include "../../lib/http_headers.h"
#include "profd/plugin.h"

struct static_config {
    struct profd_str_list targets;
    struct profd_str_map labels;
};

struct file_sd_config {
    struct profd_str_list files;
    int64_t refresh_interval;
};

/* Prometheus's http_sd_configs: target groups an HTTP endpoint answers
 * as JSON, asked again every refresh_interval. */
struct http_sd_config {
    char *url;
    int64_t refresh_interval;
    struct client_auth auth;
    struct profd_map http_headers;   /* struct http_header */
    struct client_tls tls_config;
};

struct k8s_selector {
    char *role, *label, *field;
};

struct k8s_attach_metadata {
    bool node;
};

struct k8s_namespaces {
    bool own_namespace;
    struct profd_str_list names;
};

/* Prometheus's kubernetes_sd_configs, roles pod, node, endpointslice,
 * endpoints, service and ingress (see k8s_sd.h). Its selectors: at most
 * one of each role, of the roles of the objects its role lists (pod: pod
 * and node for attach_metadata; node: node; endpointslice:
 * endpointslice, service, pod, node; endpoints: endpoints, service, pod,
 * node; service: service; ingress: ingress). */
struct kubernetes_sd_config {
    char *role;
    char *api_server;
    char *kubeconfig_file;
    struct client_auth auth;
    struct profd_map http_headers;   /* struct http_header */
    struct client_tls tls_config;
    struct k8s_namespaces namespaces;
    struct profd_obj_list selectors;   /* struct k8s_selector */
    struct k8s_attach_metadata attach_metadata;
    int64_t retry_interval;
    int64_t timeout;
};

struct custom_profile {
    char *name, *path;
    bool enabled, delta;
    int64_t seconds;
    struct profd_str_list keep_sample_types;
};

struct profiling_config {
    struct profd_str_list presets;
    char *path_prefix;
    struct profd_obj_list custom;   /* struct custom_profile */
};

struct shard {
    int64_t total, index;
};

struct job {
    char *job_name;
    int64_t scrape_interval, scrape_timeout;
    char *scheme;
    struct profd_str_map params;
    struct profd_obj_list static_configs;    /* struct static_config */
    struct profd_obj_list file_sd_configs;   /* struct file_sd_config */
    struct profd_obj_list http_sd_configs;   /* struct http_sd_config */
    struct profd_obj_list kubernetes_sd_configs;   /* struct kubernetes_sd_config */
    struct profd_relabel *relabel_configs;
    struct client_auth auth;   /* its proxy_url: none when NULL or "" */
    struct profd_map http_headers;   /* struct http_header */
    struct client_tls tls_config;
    bool follow_redirects;
    bool enable_http2;   /* HTTP/2 with https targets that offer it (ALPN) */
    bool enable_compression;   /* ask for compressed responses */
    uint64_t body_size_limit;  /* 0: the receiver's max_body_size */
    struct profiling_config profiling_config;
    struct shard shard;
    bool honor_labels;
};

struct config {
    struct profd_obj_list scrape_configs;   /* struct job */
    uint64_t max_body_size;
};

extern const struct profd_option pprof_scrape_options[];

#endif
