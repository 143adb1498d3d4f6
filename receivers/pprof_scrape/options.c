// SPDX-License-Identifier: Apache-2.0
#include <stddef.h>

#include "config.h"

#define SUB(type, field) offsetof(type, field)

static const struct profd_option static_options[] = {
    {"targets", PROFD_OPT_STRING_LIST, SUB(struct static_config, targets), NULL,
     "host:port of each target"},
    {"labels", PROFD_OPT_STRING_MAP, SUB(struct static_config, labels), NULL,
     "labels added to these targets"},
    {0},
};

static const struct profd_option file_sd_options[] = {
    {"files", PROFD_OPT_STRING_LIST, SUB(struct file_sd_config, files), NULL,
     "JSON or YAML files of target groups (globs allowed)"},
    {"refresh_interval", PROFD_OPT_DURATION, SUB(struct file_sd_config, refresh_interval), "5m",
     "how often the files are checked for changes"},
    {0},
};

static const struct profd_option http_sd_options[] = {
    {"url", PROFD_OPT_STRING, SUB(struct http_sd_config, url), NULL,
     "http:// or https:// URL answering a JSON list of target groups", .required = 1},
    {"refresh_interval", PROFD_OPT_DURATION, SUB(struct http_sd_config, refresh_interval), "60s",
     "how often the URL is asked again (and the longest one answer may take)"},
    CLIENT_AUTH_OPTIONS(struct http_sd_config, auth, "false"),
    HTTP_HEADERS_OPTION(struct http_sd_config, http_headers),
    {"tls_config", PROFD_OPT_OBJECT, SUB(struct http_sd_config, tls_config), NULL,
     "TLS to the URL", client_tls_options},
    {0},
};

static const struct profd_option k8s_selector_options[] = {
    {"role", PROFD_OPT_STRING, SUB(struct k8s_selector, role), "pod",
     "the role selected: pod (the pods listed), node (the nodes listed: role node's, or "
     "attach_metadata's), service, endpointslice, endpoints, ingress"},
    {"label", PROFD_OPT_STRING, SUB(struct k8s_selector, label), NULL,
     "a label selector, as kubectl -l takes it (app=web,tier!=db)"},
    {"field", PROFD_OPT_STRING, SUB(struct k8s_selector, field), NULL,
     "a field selector (spec.nodeName=node-a)"},
    {0},
};

static const struct profd_option k8s_attach_metadata_options[] = {
    {"node", PROFD_OPT_BOOL, SUB(struct k8s_attach_metadata, node), "false",
     "each target's node's name, labels and annotations as __meta_kubernetes_node_* (roles "
     "pod, endpointslice, endpoints: a pod's node, an endpoint's; the nodes listed and "
     "watched too; a selector of role node narrows them)"},
    {0},
};

static const struct profd_option k8s_namespaces_options[] = {
    {"own_namespace", PROFD_OPT_BOOL, SUB(struct k8s_namespaces, own_namespace), "false",
     "the namespace profd's pod runs in (its service account's)"},
    {"names", PROFD_OPT_STRING_LIST, SUB(struct k8s_namespaces, names), NULL,
     "these namespaces (none: every namespace)"},
    {0},
};

static const struct profd_option kubernetes_sd_options[] = {
    {"role", PROFD_OPT_STRING, SUB(struct kubernetes_sd_config, role), NULL,
     "what becomes a target: pod (a target per container port), node (a target per node, "
     "at its kubelet's port), endpointslice (a target per address and port of each "
     "EndpointSlice, with its service's and pod's labels), endpoints (the same of the "
     "Endpoints objects), service (a target per service port, at its DNS name) or ingress "
     "(a target per host and path)",
     .required = 1},
    {"api_server", PROFD_OPT_STRING, SUB(struct kubernetes_sd_config, api_server), NULL,
     "the Kubernetes API's URL; empty: kubeconfig_file's, else the cluster's own, with the "
     "service account's token and CA"},
    {"kubeconfig_file", PROFD_OPT_STRING, SUB(struct kubernetes_sd_config, kubeconfig_file), NULL,
     "a kubeconfig whose current context gives the server, the credentials (an exec plugin's "
     "too) and own_namespace (profd outside the cluster); not with api_server, "
     "credentials, a proxy, http_headers or tls_config"},
    CLIENT_AUTH_OPTIONS(struct kubernetes_sd_config, auth, "false"),
    HTTP_HEADERS_OPTION(struct kubernetes_sd_config, http_headers),
    {"tls_config", PROFD_OPT_OBJECT, SUB(struct kubernetes_sd_config, tls_config), NULL,
     "TLS to the API", client_tls_options},
    {"namespaces", PROFD_OPT_OBJECT, SUB(struct kubernetes_sd_config, namespaces), NULL,
     "the namespaces listed", k8s_namespaces_options},
    {"selectors", PROFD_OPT_OBJECT_LIST, SUB(struct kubernetes_sd_config, selectors), NULL,
     "label and field selectors the API filters the pods (and nodes) with",
     k8s_selector_options, sizeof(struct k8s_selector)},
    {"attach_metadata", PROFD_OPT_OBJECT, SUB(struct kubernetes_sd_config, attach_metadata), NULL,
     "metadata of other objects added to the targets", k8s_attach_metadata_options},
    {"retry_interval", PROFD_OPT_DURATION, SUB(struct kubernetes_sd_config, retry_interval),
     "5s", "how long after a list, a watch or a kubeconfig's exec plugin failed they are tried "
     "again (between, a watch keeps the pods and nodes current)"},
    {"timeout", PROFD_OPT_DURATION, SUB(struct kubernetes_sd_config, timeout), "10s",
     "longest a list, or a kubeconfig's exec plugin, may take"},
    {0},
};

static const struct profd_option custom_options[] = {
    {"name", PROFD_OPT_STRING, SUB(struct custom_profile, name), NULL,
     "profile type (__name__); a preset's name overrides that preset", .required = 1},
    {"path", PROFD_OPT_STRING, SUB(struct custom_profile, path), NULL,
     "URL path, e.g. /debug/pprof/heap (default: the preset's)"},
    {"enabled", PROFD_OPT_BOOL, SUB(struct custom_profile, enabled), "true", "scrape it"},
    {"delta", PROFD_OPT_BOOL, SUB(struct custom_profile, delta), "false",
     "cumulative: emit the difference between scrapes (inuse_* columns pass as they are)"},
    {"seconds", PROFD_OPT_DURATION, SUB(struct custom_profile, seconds), "0s",
     "pass ?seconds= (0: none; for CPU-like profiles use the interval less one second)"},
    {"keep_sample_types", PROFD_OPT_STRING_LIST, SUB(struct custom_profile, keep_sample_types),
     NULL, "keep only these sample types (all when empty)"},
    {0},
};

static const struct profd_option profiling_options[] = {
    {"presets", PROFD_OPT_STRING_LIST, SUB(struct profiling_config, presets),
     "[process_cpu, memory, goroutine, mutex, block]",
     "presets to scrape: process_cpu, memory, goroutine, mutex, block, threadcreate, fgprof, "
     "godeltaprof_memory, godeltaprof_mutex, godeltaprof_block"},
    {"path_prefix", PROFD_OPT_STRING, SUB(struct profiling_config, path_prefix), "\"\"",
     "prefix of every profile path, for apps that mount pprof elsewhere"},
    {"custom", PROFD_OPT_OBJECT_LIST, SUB(struct profiling_config, custom), NULL,
     "more profiles, or overrides of presets", custom_options, sizeof(struct custom_profile)},
    {0},
};

static const struct profd_option shard_options[] = {
    {"total", PROFD_OPT_INT, SUB(struct shard, total), "0",
     "number of collectors sharing the targets (0: no sharding)"},
    {"index", PROFD_OPT_INT, SUB(struct shard, index), "0",
     "this collector's share: hashmod(address, total) == index"},
    {0},
};

static const struct profd_option job_options[] = {
    {"job_name", PROFD_OPT_STRING, SUB(struct job, job_name), NULL, "the job label",
     .required = 1},
    {"scrape_interval", PROFD_OPT_DURATION, SUB(struct job, scrape_interval), "15s",
     "time between two scrapes of one profile of one target"},
    {"scrape_timeout", PROFD_OPT_DURATION, SUB(struct job, scrape_timeout), "10s",
     "time a scrape may take beyond the profile's own seconds"},
    {"scheme", PROFD_OPT_STRING, SUB(struct job, scheme), "http", "http or https"},
    {"params", PROFD_OPT_STRING_MAP, SUB(struct job, params), NULL, "URL query parameters"},
    {"static_configs", PROFD_OPT_OBJECT_LIST, SUB(struct job, static_configs), NULL,
     "targets listed in the config", static_options, sizeof(struct static_config)},
    {"file_sd_configs", PROFD_OPT_OBJECT_LIST, SUB(struct job, file_sd_configs), NULL,
     "targets listed in files, re-read when they change", file_sd_options,
     sizeof(struct file_sd_config)},
    {"http_sd_configs", PROFD_OPT_OBJECT_LIST, SUB(struct job, http_sd_configs), NULL,
     "targets an HTTP endpoint lists (a JSON list of target groups, as Prometheus's "
     "http_sd_configs take it), asked again every refresh_interval; each target gets "
     "__meta_url", http_sd_options, sizeof(struct http_sd_config)},
    {"kubernetes_sd_configs", PROFD_OPT_OBJECT_LIST, SUB(struct job, kubernetes_sd_configs), NULL,
     "targets from the Kubernetes API: roles pod, node, endpointslice, endpoints, service and "
     "ingress, with __meta_kubernetes_* labels as Prometheus makes them",
     kubernetes_sd_options, sizeof(struct kubernetes_sd_config)},
    {"relabel_configs", PROFD_OPT_RELABEL, SUB(struct job, relabel_configs), NULL,
     "relabel rules on targets (__address__, __scheme__, __profile_path__, __param_*, __name__, "
     "__delta__, __tenant_id__)"},
    CLIENT_AUTH_OPTIONS(struct job, auth, "false"),
    HTTP_HEADERS_OPTION(struct job, http_headers),
    {"tls_config", PROFD_OPT_OBJECT, SUB(struct job, tls_config), NULL, "TLS settings",
     client_tls_options},
    {"follow_redirects", PROFD_OPT_BOOL, SUB(struct job, follow_redirects), "true",
     "follow a target's redirects (at most 10, http and https), as Prometheus does"},
    {"enable_http2", PROFD_OPT_BOOL, SUB(struct job, enable_http2), "true",
     "HTTP/2 with https targets that offer it; false: HTTP/1.1 always"},
    {"enable_compression", PROFD_OPT_BOOL, SUB(struct job, enable_compression), "true",
     "ask for compressed responses (gzip, zstd, ...); false: Accept-Encoding: identity"},
    {"body_size_limit", PROFD_OPT_SIZE, SUB(struct job, body_size_limit), "0",
     "largest response body (after HTTP's own decompression) a scrape takes, at most "
     "max_body_size; 0: max_body_size"},
    {"profiling_config", PROFD_OPT_OBJECT, SUB(struct job, profiling_config), NULL,
     "which profiles to scrape", profiling_options},
    {"honor_labels", PROFD_OPT_BOOL, SUB(struct job, honor_labels), "false",
     "keep the profile's own sample labels that clash with a series label (job, instance, "
     "service_name, target labels); when false they are renamed exported_<name>, as Prometheus "
     "does"},
    {"shard", PROFD_OPT_OBJECT, SUB(struct job, shard), NULL,
     "split the targets between several collectors", shard_options},
    {0},
};

const struct profd_option pprof_scrape_options[] = {
    {"scrape_configs", PROFD_OPT_OBJECT_LIST, SUB(struct config, scrape_configs), NULL,
     "jobs, as in Prometheus", job_options, sizeof(struct job)},
    {"max_body_size", PROFD_OPT_SIZE, SUB(struct config, max_body_size), "64MiB",
     "largest profile accepted, decompressed"},
    {0},
};
